import { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1796204055048 implements MigrationInterface {
  name = 'Foundation1796204055048';

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
            CREATE TABLE "runtimes" (
                "runtime_id" text NOT NULL,
                "account_id" text NOT NULL,
                "events_count" integer NOT NULL DEFAULT '0',
                "last_event_at" TIMESTAMP WITH TIME ZONE,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_375ed9161a50d419e0e5035f199" PRIMARY KEY ("runtime_id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "runtimes_account_idx" ON "runtimes" ("account_id")
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."runtimes_account_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "runtimes"
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
