import { MigrationInterface, QueryRunner } from 'typeorm';

export class JobRunsAndOpenHolds1796393298321 implements MigrationInterface {
  name = 'JobRunsAndOpenHolds1796393298321';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "job_runs"
            ADD "last_started_at" TIMESTAMP WITH TIME ZONE,
            ADD "last_succeeded_at" TIMESTAMP WITH TIME ZONE,
            ADD "last_failed_at" TIMESTAMP WITH TIME ZONE,
            ADD "last_duration_ms" integer,
            ADD "last_problems" integer,
            ADD "failures" bigint NOT NULL DEFAULT '0'
        `);
    await queryRunner.query(`
            CREATE INDEX "holds_open_idx" ON "holds" ("account_id")
            WHERE "status" = 'reserved'
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."holds_open_idx"
        `);
    await queryRunner.query(`
            ALTER TABLE "job_runs"
            DROP COLUMN "failures",
            DROP COLUMN "last_problems",
            DROP COLUMN "last_duration_ms",
            DROP COLUMN "last_failed_at",
            DROP COLUMN "last_succeeded_at",
            DROP COLUMN "last_started_at"
        `);
  }
}
