import { MigrationInterface, QueryRunner } from 'typeorm';

export class Metering1796204484544 implements MigrationInterface {
  name = 'Metering1796204484544';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."runtimes_account_idx"
        `);
    await queryRunner.query(`
            CREATE TABLE "reservation_extensions" (
                "idempotency_key" text NOT NULL,
                "runtime_id" text NOT NULL,
                "minutes" integer NOT NULL,
                "amount" bigint NOT NULL,
                "fingerprint" text NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_482ee5a62be2b23b42fc6e013cc" PRIMARY KEY ("idempotency_key")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "reservation_extensions_runtime_idx" ON "reservation_extensions" ("runtime_id")
        `);
    await queryRunner.query(`
            CREATE TABLE "runtime_commands" (
                "id" text NOT NULL,
                "runtime_id" text NOT NULL,
                "account_id" text NOT NULL,
                "type" text NOT NULL,
                "reason" text NOT NULL,
                "issued_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "acknowledged_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "PK_bb4acbcb481886b1a3fc4ac8542" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "runtime_commands_open_idx" ON "runtime_commands" ("runtime_id")
            WHERE "acknowledged_at" IS NULL
        `);
    await queryRunner.query(`
            CREATE INDEX "runtime_commands_runtime_idx" ON "runtime_commands" ("runtime_id", "issued_at")
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "last_event_at"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "reservation_id" text
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "user_id" text
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "agent_id" text
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "variant" text
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "environment" jsonb
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "size_class" text
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "rate_per_hour" bigint NOT NULL DEFAULT '0'
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "rate_card_version" text
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "reserved_minutes" integer NOT NULL DEFAULT '0'
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "reserved_amount" bigint NOT NULL DEFAULT '0'
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "hold_id" text
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "request_fingerprint" text
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "status" text NOT NULL DEFAULT 'reserved'
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "start_deadline" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "started_at" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "closed_ms" bigint NOT NULL DEFAULT '0'
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "open_since" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "last_seen_at" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "terminated_at" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "termination_reason" text
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "charged" bigint NOT NULL DEFAULT '0'
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "released" bigint NOT NULL DEFAULT '0'
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "settlement" text
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "settled_at" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
        `);
    await queryRunner.query(`
            CREATE INDEX "runtimes_active_idx" ON "runtimes" ("status")
            WHERE "status" IN ('reserved', 'running', 'paused', 'terminating')
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "runtimes_reservation_key" ON "runtimes" ("reservation_id")
        `);
    await queryRunner.query(`
            CREATE INDEX "runtimes_account_idx" ON "runtimes" ("account_id", "created_at")
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD CONSTRAINT "runtimes_amounts_check" CHECK (
                    "charged" >= 0
                    AND "released" >= 0
                    AND "reserved_amount" >= 0
                    AND "charged" <= "reserved_amount"
                )
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD CONSTRAINT "runtimes_minutes_check" CHECK ("reserved_minutes" >= 0)
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD CONSTRAINT "runtimes_status_check" CHECK (
                    "status" IN (
                        'reserved',
                        'running',
                        'paused',
                        'terminating',
                        'settled',
                        'voided'
                    )
                )
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP CONSTRAINT "runtimes_status_check"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP CONSTRAINT "runtimes_minutes_check"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP CONSTRAINT "runtimes_amounts_check"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."runtimes_account_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."runtimes_reservation_key"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."runtimes_active_idx"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "created_at"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "settled_at"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "settlement"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "released"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "charged"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "termination_reason"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "terminated_at"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "last_seen_at"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "open_since"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "closed_ms"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "started_at"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "start_deadline"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "status"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "request_fingerprint"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "hold_id"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "reserved_amount"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "reserved_minutes"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "rate_card_version"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "rate_per_hour"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "size_class"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "environment"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "variant"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "agent_id"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "user_id"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "reservation_id"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes"
            ADD "last_event_at" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            DROP INDEX "public"."runtime_commands_runtime_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."runtime_commands_open_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "runtime_commands"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."reservation_extensions_runtime_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "reservation_extensions"
        `);
    await queryRunner.query(`
            CREATE INDEX "runtimes_account_idx" ON "runtimes" USING btree ("account_id")
        `);
  }
}
