import { MigrationInterface, QueryRunner } from 'typeorm';

export class LedgerHoldsByKey1796210659424 implements MigrationInterface {
  name = 'LedgerHoldsByKey1796210659424';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."holds_account_idx"
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE INDEX "holds_account_idx" ON "holds" USING btree ("account_id")
        `);
  }
}
