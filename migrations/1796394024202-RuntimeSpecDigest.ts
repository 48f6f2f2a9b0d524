import { MigrationInterface, QueryRunner } from 'typeorm';

export class RuntimeSpecDigest1796394024202 implements MigrationInterface {
  name = 'RuntimeSpecDigest1796394024202';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "spec_digest" text
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "spec_digest"
        `);
  }
}
