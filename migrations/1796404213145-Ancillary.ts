import { MigrationInterface, QueryRunner } from 'typeorm';

export class Ancillary1796404213145 implements MigrationInterface {
  name = 'Ancillary1796404213145';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "ancillary_charges" (
                "id" text NOT NULL,
                "account_id" text NOT NULL,
                "kind" text NOT NULL,
                "item_key" text NOT NULL,
                "bucket" TIMESTAMP WITH TIME ZONE NOT NULL,
                "runtime_id" text,
                "rate_card_version" text NOT NULL,
                "unit_price" bigint,
                "quantity" numeric(40, 0) NOT NULL,
                "amount" bigint NOT NULL,
                "charged" bigint NOT NULL DEFAULT '0',
                "holds" jsonb NOT NULL DEFAULT '[]'::jsonb,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "ancillary_charges_item_bucket_key" UNIQUE ("item_key", "bucket"),
                CONSTRAINT "ancillary_charges_amounts_check" CHECK (
                    "amount" >= 0
                    AND "charged" >= 0
                    AND "charged" <= "amount"
                ),
                CONSTRAINT "PK_808c98aacdeb794cf6433264dee" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "ancillary_charges_unpaid_idx" ON "ancillary_charges" ("account_id")
            WHERE "amount" > "charged"
        `);
    await queryRunner.query(`
            CREATE INDEX "ancillary_charges_account_bucket_idx" ON "ancillary_charges" ("account_id", "bucket")
        `);
    await queryRunner.query(`
            CREATE TABLE "ancillary_events" (
                "id" text NOT NULL,
                "type" text NOT NULL,
                "account_id" text NOT NULL,
                "item_key" text NOT NULL,
                "runtime_id" text,
                "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "seq" bigint NOT NULL DEFAULT '0',
                "data" jsonb NOT NULL,
                "received_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_e1e89bcde3ac02851ceadd3f4f9" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "ancillary_events_item_idx" ON "ancillary_events" ("item_key", "occurred_at")
        `);
    await queryRunner.query(`
            CREATE TABLE "ancillary_items" (
                "item_key" text NOT NULL,
                "account_id" text NOT NULL,
                "kind" text NOT NULL,
                "accrued_until" TIMESTAMP WITH TIME ZONE,
                "changed_from" TIMESTAMP WITH TIME ZONE,
                "done" boolean NOT NULL DEFAULT false,
                CONSTRAINT "PK_ff79c35b8c2fdaba3f0516d3b98" PRIMARY KEY ("item_key")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "ancillary_items_open_idx" ON "ancillary_items" ("item_key")
            WHERE "done" = false
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."ancillary_items_open_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "ancillary_items"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."ancillary_events_item_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "ancillary_events"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."ancillary_charges_account_bucket_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."ancillary_charges_unpaid_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "ancillary_charges"
        `);
  }
}
