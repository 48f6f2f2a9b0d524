import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the admin console shows and could not know before: the limit in force when each spend-limit
 * alert fired (older alerts keep NULL: the limit of their time was not recorded, and today's would
 * be wrong), the last run of each scheduled job, and each Stripe event received with its outcome.
 */
export class AdminConsoleRecords1796393052532 implements MigrationInterface {
  name = 'AdminConsoleRecords1796393052532';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "stripe_webhook_events" (
                "event_id" text NOT NULL,
                "type" text NOT NULL,
                "outcome" text NOT NULL,
                "account_id" text,
                "error" text,
                "deliveries" integer NOT NULL DEFAULT '1',
                "received_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "stripe_webhook_events_outcome_check" CHECK ("outcome" IN ('applied', 'ignored', 'failed')),
                CONSTRAINT "PK_32411864d51fed6c399f872aec1" PRIMARY KEY ("event_id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "stripe_webhook_events_received_idx" ON "stripe_webhook_events" ("received_at")
        `);
    await queryRunner.query(`
            CREATE TABLE "job_runs" (
                "job" text NOT NULL,
                "trigger" text NOT NULL,
                "started_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "finished_at" TIMESTAMP WITH TIME ZONE,
                "outcome" text NOT NULL,
                "result" jsonb,
                "error" text,
                CONSTRAINT "job_runs_outcome_check" CHECK (
                    "outcome" IN ('running', 'succeeded', 'failed', 'skipped')
                ),
                CONSTRAINT "PK_c370c0e920974f9b3442e4767a6" PRIMARY KEY ("job")
            )
        `);
    await queryRunner.query(`
            ALTER TABLE "spend_limit_alerts"
            ADD "limit_micros" bigint
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "spend_limit_alerts" DROP COLUMN "limit_micros"
        `);
    await queryRunner.query(`
            DROP TABLE "job_runs"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."stripe_webhook_events_received_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "stripe_webhook_events"
        `);
  }
}
