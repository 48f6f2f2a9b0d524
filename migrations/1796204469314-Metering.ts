import { MigrationInterface, QueryRunner } from "typeorm";

export class Metering1796204469314 implements MigrationInterface {
    name = 'Metering1796204469314'

    public async up(queryRunner: QueryRunner): Promise<void> {
        await queryRunner.query(`
            CREATE TABLE "accounts" (
                "id" text NOT NULL,
                "kind" text NOT NULL,
                "plan" text NOT NULL,
                "name" text,
                "status" text NOT NULL DEFAULT 'active',
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "accounts_status_check" CHECK ("status" IN ('active', 'suspended')),
                CONSTRAINT "accounts_plan_check" CHECK ("plan" IN ('free', 'team', 'enterprise')),
                CONSTRAINT "accounts_kind_check" CHECK ("kind" IN ('user', 'organization')),
                CONSTRAINT "PK_5a7a02c20412299d198e097a8fe" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE TABLE "api_keys" (
                "id" text NOT NULL,
                "name" text,
                "key_hash" text NOT NULL,
                "scopes" text array NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "revoked_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "PK_5c8a79801b44bd27b79228e1dad" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys" ("key_hash")
        `);
        await queryRunner.query(`
            CREATE TABLE "inbox" (
                "source" text NOT NULL,
                "message_id" text NOT NULL,
                "processed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_6fae4a9a100c6267862bf4add50" PRIMARY KEY ("source", "message_id")
            )
        `);
        await queryRunner.query(`
            CREATE TABLE "outbox" (
                "id" BIGSERIAL NOT NULL,
                "topic" text NOT NULL,
                "key" text NOT NULL,
                "payload" jsonb NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "published_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "PK_340ab539f309f03bdaa14aa7649" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "outbox_unpublished_idx" ON "outbox" ("id")
            WHERE "published_at" IS NULL
        `);
        await queryRunner.query(`
            CREATE TABLE "runtime_events" (
                "id" text NOT NULL,
                "type" text NOT NULL,
                "account_id" text NOT NULL,
                "runtime_id" text NOT NULL,
                "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "seq" bigint NOT NULL,
                "data" jsonb NOT NULL DEFAULT '{}',
                "received_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "runtime_events_seq_check" CHECK ("seq" >= 0),
                CONSTRAINT "PK_a2e07d81842ce4221dd21f349a1" PRIMARY KEY ("id")
            )
        `);
        await queryRunner.query(`
            CREATE INDEX "runtime_events_runtime_idx" ON "runtime_events" ("runtime_id", "occurred_at", "seq")
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
            CREATE TABLE "runtimes" (
                "runtime_id" text NOT NULL,
                "account_id" text NOT NULL,
                "reservation_id" text,
                "user_id" text,
                "agent_id" text,
                "variant" text,
                "environment" jsonb,
                "size_class" text,
                "rate_per_hour" bigint NOT NULL DEFAULT '0',
                "rate_card_version" text,
                "reserved_minutes" integer NOT NULL DEFAULT '0',
                "reserved_amount" bigint NOT NULL DEFAULT '0',
                "hold_id" text,
                "request_fingerprint" text,
                "status" text NOT NULL DEFAULT 'reserved',
                "start_deadline" TIMESTAMP WITH TIME ZONE,
                "started_at" TIMESTAMP WITH TIME ZONE,
                "closed_ms" bigint NOT NULL DEFAULT '0',
                "open_since" TIMESTAMP WITH TIME ZONE,
                "last_seen_at" TIMESTAMP WITH TIME ZONE,
                "terminated_at" TIMESTAMP WITH TIME ZONE,
                "termination_reason" text,
                "charged" bigint NOT NULL DEFAULT '0',
                "released" bigint NOT NULL DEFAULT '0',
                "settlement" text,
                "settled_at" TIMESTAMP WITH TIME ZONE,
                "events_count" integer NOT NULL DEFAULT '0',
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "runtimes_amounts_check" CHECK (
                    "charged" >= 0
                    AND "released" >= 0
                    AND "reserved_amount" >= 0
                    AND "charged" <= "reserved_amount"
                ),
                CONSTRAINT "runtimes_minutes_check" CHECK ("reserved_minutes" >= 0),
                CONSTRAINT "runtimes_status_check" CHECK (
                    "status" IN (
                        'reserved',
                        'running',
                        'paused',
                        'terminating',
                        'settled',
                        'voided'
                    )
                ),
                CONSTRAINT "PK_375ed9161a50d419e0e5035f199" PRIMARY KEY ("runtime_id")
            )
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
    }

    public async down(queryRunner: QueryRunner): Promise<void> {
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
            DROP TABLE "runtimes"
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
            DROP INDEX "public"."runtime_events_runtime_idx"
        `);
        await queryRunner.query(`
            DROP TABLE "runtime_events"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."outbox_unpublished_idx"
        `);
        await queryRunner.query(`
            DROP TABLE "outbox"
        `);
        await queryRunner.query(`
            DROP TABLE "inbox"
        `);
        await queryRunner.query(`
            DROP INDEX "public"."api_keys_key_hash_key"
        `);
        await queryRunner.query(`
            DROP TABLE "api_keys"
        `);
        await queryRunner.query(`
            DROP TABLE "accounts"
        `);
    }

}
