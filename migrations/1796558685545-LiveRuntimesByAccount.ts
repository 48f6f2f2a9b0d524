import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An account's runtimes that may still run (`plans/live-runtimes.ts`), found without reading the
 * account's history: the usage read every launch makes counts them. Without it, the read's
 * `(in the period) OR (live)` scanned every row of the account (or the table) once the live
 * condition included runtimes voided as never started that run after all.
 */
export class LiveRuntimesByAccount1796558685545 implements MigrationInterface {
  name = 'LiveRuntimesByAccount1796558685545';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE INDEX "runtimes_live_account_idx" ON "runtimes" ("account_id", "status")
            WHERE (
                    "status" IN ('reserved', 'running', 'paused', 'terminating')
                    OR (
                        "status" = 'voided'
                        AND "settlement" = 'never_started'
                        AND "started_at" IS NOT NULL
                    )
                )
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."runtimes_live_account_idx"
        `);
  }
}
