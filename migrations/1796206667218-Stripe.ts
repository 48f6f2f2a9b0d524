import { MigrationInterface, QueryRunner } from 'typeorm';

export class Stripe1796206667218 implements MigrationInterface {
  name = 'Stripe1796206667218';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "account_member_events" (
                "id" text NOT NULL,
                "account_id" text NOT NULL,
                "user_id" text NOT NULL,
                "type" text NOT NULL,
                "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "source" text NOT NULL,
                "received_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "account_member_events_source_check" CHECK ("source" IN ('http', 'kafka')),
                CONSTRAINT "account_member_events_type_check" CHECK ("type" IN ('member.added', 'member.removed')),
                CONSTRAINT "PK_06cc1144488f3111ffdb4283e55" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "account_member_events_account_idx" ON "account_member_events" ("account_id", "occurred_at")
        `);
    await queryRunner.query(`
            CREATE TABLE "account_members" (
                "account_id" text NOT NULL,
                "user_id" text NOT NULL,
                "active" boolean NOT NULL,
                "changed_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "change_id" text NOT NULL,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "account_members_user_check" CHECK (
                    length("user_id") BETWEEN 1 AND 256
                ),
                CONSTRAINT "PK_64ad7a24bdd270694561759c6b7" PRIMARY KEY ("account_id", "user_id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "account_members_active_idx" ON "account_members" ("account_id")
            WHERE "active"
        `);
    await queryRunner.query(`
            CREATE TABLE "stripe_seat_discrepancies" (
                "id" uuid NOT NULL DEFAULT uuid_generate_v4(),
                "kind" text NOT NULL,
                "account_id" text NOT NULL,
                "subscription_id" text NOT NULL,
                "invoice_id" text,
                "stripe_quantity" integer NOT NULL,
                "active_seats" integer NOT NULL,
                "detected_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "corrected_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "stripe_seat_discrepancies_seats_check" CHECK (
                    "stripe_quantity" >= 0
                    AND "active_seats" >= 0
                ),
                CONSTRAINT "stripe_seat_discrepancies_kind_check" CHECK ("kind" IN ('quantity_drift', 'invoice_seats')),
                CONSTRAINT "PK_983a8349c5ec535e0e71a57fbe5" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "stripe_seat_discrepancies_invoice_key" ON "stripe_seat_discrepancies" ("invoice_id")
            WHERE "invoice_id" IS NOT NULL
        `);
    await queryRunner.query(`
            CREATE INDEX "stripe_seat_discrepancies_account_idx" ON "stripe_seat_discrepancies" ("account_id", "detected_at")
        `);
    await queryRunner.query(`
            CREATE TABLE "stripe_invoices" (
                "invoice_id" text NOT NULL,
                "account_id" text NOT NULL,
                "subscription_id" text NOT NULL,
                "status" text NOT NULL,
                "period_start" TIMESTAMP WITH TIME ZONE NOT NULL,
                "period_end" TIMESTAMP WITH TIME ZONE NOT NULL,
                "seat_quantity" integer,
                "active_seats" integer NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "stripe_invoices_period_check" CHECK ("period_end" > "period_start"),
                CONSTRAINT "stripe_invoices_status_check" CHECK ("status" IN ('paid', 'payment_failed')),
                CONSTRAINT "PK_eb01be25db561775c2ea2c6fa9e" PRIMARY KEY ("invoice_id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "stripe_invoices_account_idx" ON "stripe_invoices" ("account_id")
        `);
    await queryRunner.query(`
            CREATE TABLE "stripe_subscriptions" (
                "account_id" text NOT NULL,
                "customer_id" text NOT NULL,
                "subscription_id" text NOT NULL,
                "base_item_id" text,
                "seat_item_id" text,
                "status" text NOT NULL,
                "seat_quantity" integer NOT NULL DEFAULT '0',
                "current_period_start" TIMESTAMP WITH TIME ZONE,
                "current_period_end" TIMESTAMP WITH TIME ZONE,
                "state_event_created" bigint NOT NULL DEFAULT '0',
                "past_due_since" TIMESTAMP WITH TIME ZONE,
                "suspended_for_payment" boolean NOT NULL DEFAULT false,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "stripe_subscriptions_period_check" CHECK (
                    "current_period_end" IS NULL
                    OR "current_period_end" > "current_period_start"
                ),
                CONSTRAINT "stripe_subscriptions_quantity_check" CHECK ("seat_quantity" >= 0),
                CONSTRAINT "stripe_subscriptions_status_check" CHECK (
                    "status" IN (
                        'incomplete',
                        'incomplete_expired',
                        'trialing',
                        'active',
                        'past_due',
                        'canceled',
                        'unpaid',
                        'paused'
                    )
                ),
                CONSTRAINT "PK_0e5ce1875462c891ba0c73bda81" PRIMARY KEY ("account_id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "stripe_subscriptions_customer_idx" ON "stripe_subscriptions" ("customer_id")
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "stripe_subscriptions_subscription_key" ON "stripe_subscriptions" ("subscription_id")
        `);
    await queryRunner.query(`
            CREATE TABLE "stripe_top_ups" (
                "session_id" text NOT NULL,
                "account_id" text NOT NULL,
                "pack" text NOT NULL,
                "credits" bigint NOT NULL,
                "amount_cents" integer,
                "payment_intent_id" text,
                "grant_id" text NOT NULL,
                "clawed_back" bigint NOT NULL DEFAULT '0',
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "stripe_top_ups_clawed_check" CHECK (
                    "clawed_back" >= 0
                    AND "clawed_back" <= "credits"
                ),
                CONSTRAINT "stripe_top_ups_credits_check" CHECK ("credits" > 0),
                CONSTRAINT "PK_c46e37bf9f04eccedb6bbba244b" PRIMARY KEY ("session_id")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "stripe_top_ups_grant_key" ON "stripe_top_ups" ("grant_id")
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "stripe_top_ups_payment_intent_key" ON "stripe_top_ups" ("payment_intent_id")
            WHERE "payment_intent_id" IS NOT NULL
        `);
    await queryRunner.query(`
            CREATE INDEX "stripe_top_ups_account_idx" ON "stripe_top_ups" ("account_id")
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."stripe_top_ups_account_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."stripe_top_ups_payment_intent_key"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."stripe_top_ups_grant_key"
        `);
    await queryRunner.query(`
            DROP TABLE "stripe_top_ups"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."stripe_subscriptions_subscription_key"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."stripe_subscriptions_customer_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "stripe_subscriptions"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."stripe_invoices_account_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "stripe_invoices"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."stripe_seat_discrepancies_account_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."stripe_seat_discrepancies_invoice_key"
        `);
    await queryRunner.query(`
            DROP TABLE "stripe_seat_discrepancies"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."account_members_active_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "account_members"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."account_member_events_account_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "account_member_events"
        `);
  }
}
