import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Seat pushes dated at the membership changes that made them: what each change did to the active
 * members over time (`stripe_seat_changes`), and the pushes planned from it, sent as planned
 * (`stripe_seat_pushes`; src/stripe/seat-pushes.ts).
 */
export class SeatPushDates1796582163186 implements MigrationInterface {
  name = 'SeatPushDates1796582163186';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "stripe_seat_changes" (
                "id" BIGSERIAL NOT NULL,
                "account_id" text NOT NULL,
                "change_id" text NOT NULL,
                "effective_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "delta" integer NOT NULL,
                "planned_at" TIMESTAMP WITH TIME ZONE,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "stripe_seat_changes_delta_check" CHECK ("delta" <> 0),
                CONSTRAINT "PK_17d3782b12ea0f5bb005598c56f" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "stripe_seat_changes_unplanned_idx" ON "stripe_seat_changes" ("account_id", "effective_at")
            WHERE "planned_at" IS NULL
        `);
    await queryRunner.query(`
            CREATE TABLE "stripe_seat_pushes" (
                "id" BIGSERIAL NOT NULL,
                "account_id" text NOT NULL,
                "subscription_id" text NOT NULL,
                "item_id" text NOT NULL,
                "quantity" integer NOT NULL,
                "from_quantity" integer NOT NULL,
                "proration_date" TIMESTAMP WITH TIME ZONE NOT NULL,
                "idempotency_key" text NOT NULL,
                "source" text NOT NULL,
                "planned_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "sent_at" TIMESTAMP WITH TIME ZONE,
                "dropped_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "stripe_seat_pushes_done_check" CHECK (
                    "sent_at" IS NULL
                    OR "dropped_at" IS NULL
                ),
                CONSTRAINT "stripe_seat_pushes_source_check" CHECK ("source" IN ('sync', 'reconcile')),
                CONSTRAINT "stripe_seat_pushes_quantity_check" CHECK (
                    "quantity" >= 0
                    AND "from_quantity" >= 0
                ),
                CONSTRAINT "PK_2bb42739a31b508369e400f7a8c" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "stripe_seat_pushes_item_idx" ON "stripe_seat_pushes" ("item_id", "id")
        `);
    await queryRunner.query(`
            CREATE INDEX "stripe_seat_pushes_pending_idx" ON "stripe_seat_pushes" ("account_id", "id")
            WHERE "sent_at" IS NULL
                AND "dropped_at" IS NULL
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "stripe_seat_pushes_key" ON "stripe_seat_pushes" ("idempotency_key")
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."stripe_seat_pushes_key"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."stripe_seat_pushes_pending_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."stripe_seat_pushes_item_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "stripe_seat_pushes"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."stripe_seat_changes_unplanned_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "stripe_seat_changes"
        `);
  }
}
