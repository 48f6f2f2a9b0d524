import { MigrationInterface, QueryRunner } from 'typeorm';

/** Sign-out of the admin console ends the key's sessions signed in before it (they were valid for their 8 hours). */
export class ConsoleSignOut1796540000000 implements MigrationInterface {
  name = 'ConsoleSignOut1796540000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "api_keys" ADD "console_signed_out_at" TIMESTAMP WITH TIME ZONE
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "api_keys" DROP COLUMN "console_signed_out_at"
        `);
  }
}
