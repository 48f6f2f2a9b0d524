import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The usage trend by size class (the console's dashboard, /admin) read the fleet's runtimes whole for a period's
 * settlements: they are found by their settlement time. Written once per runtime, at its settlement
 * (the row is updated then anyway, and a reservation's insert is not in this partial index).
 */
export class UsageTrendReads1796582197065 implements MigrationInterface {
  name = 'UsageTrendReads1796582197065';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE INDEX "runtimes_settled_idx" ON "runtimes" ("settled_at")
            WHERE "status" = 'settled'
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."runtimes_settled_idx"
        `);
  }
}
