import { MigrationInterface, QueryRunner } from 'typeorm';

export class Plans1796205733689 implements MigrationInterface {
  name = 'Plans1796205733689';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "notifications_sent" (
                "cause" text NOT NULL,
                "account_id" text NOT NULL,
                "type" text NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_3e76e6e4e8638ab1598afe41d93" PRIMARY KEY ("cause")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "notifications_sent_account_idx" ON "notifications_sent" ("account_id", "created_at")
        `);
    await queryRunner.query(`
            CREATE TABLE "plan_allowances" (
                "account_id" text NOT NULL,
                "period_start" TIMESTAMP WITH TIME ZONE NOT NULL,
                "period_end" TIMESTAMP WITH TIME ZONE NOT NULL,
                "grant_id" text NOT NULL,
                "amount" bigint NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "plan_allowances_period_check" CHECK ("period_end" > "period_start"),
                CONSTRAINT "plan_allowances_amount_check" CHECK ("amount" > 0),
                CONSTRAINT "PK_24431742f4d84783e9950d0c91e" PRIMARY KEY ("account_id", "period_start")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "plan_allowances_grant_key" ON "plan_allowances" ("grant_id")
        `);
    await queryRunner.query(`
            ALTER TABLE "accounts"
            ADD "plan_overrides" jsonb
        `);
    await queryRunner.query(`
            ALTER TABLE "accounts"
            ADD "billing_cycle_anchor" TIMESTAMP WITH TIME ZONE
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "accounts" DROP COLUMN "billing_cycle_anchor"
        `);
    await queryRunner.query(`
            ALTER TABLE "accounts" DROP COLUMN "plan_overrides"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."plan_allowances_grant_key"
        `);
    await queryRunner.query(`
            DROP TABLE "plan_allowances"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."notifications_sent_account_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "notifications_sent"
        `);
  }
}
