import { MigrationInterface, QueryRunner } from 'typeorm';

/** The plan catalog (config/plans.json) says which plans exist: the accounts table checks only a plan id's form. */
export class PlansFromCatalog1796410000000 implements MigrationInterface {
  name = 'PlansFromCatalog1796410000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "accounts" DROP CONSTRAINT "accounts_plan_check"
        `);
    await queryRunner.query(`
            ALTER TABLE "accounts"
            ADD CONSTRAINT "accounts_plan_format_check" CHECK ("plan" ~ '^[a-z][a-z0-9_-]{0,31}$')
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "accounts" DROP CONSTRAINT "accounts_plan_format_check"
        `);
    await queryRunner.query(`
            ALTER TABLE "accounts"
            ADD CONSTRAINT "accounts_plan_check" CHECK ("plan" IN ('free', 'team', 'enterprise'))
        `);
  }
}
