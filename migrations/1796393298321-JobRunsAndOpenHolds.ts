import { MigrationInterface, QueryRunner } from "typeorm";

export class JobRunsAndOpenHolds1796393298321 implements MigrationInterface {
    name = 'JobRunsAndOpenHolds1796393298321'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "job_runs" (
                "job" text NOT NULL,
                "last_started_at" TIMESTAMP WITH TIME ZONE,
                "last_succeeded_at" TIMESTAMP WITH TIME ZONE,
                "last_failed_at" TIMESTAMP WITH TIME ZONE,
                "last_duration_ms" integer,
                "last_problems" integer,
                "failures" bigint NOT NULL DEFAULT '0',
                CONSTRAINT "PK_c370c0e920974f9b3442e4767a6" PRIMARY KEY ("job")
            )
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
            DROP TABLE "job_runs"
        `);
    }

}
