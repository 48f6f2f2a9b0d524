import { MigrationInterface, QueryRunner } from 'typeorm';

export class SpendLimits1796206329676 implements MigrationInterface {
  name = 'SpendLimits1796206329676';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "spend_limit_alerts" (
                "limit_id" text NOT NULL,
                "period_start" TIMESTAMP WITH TIME ZONE NOT NULL,
                "kind" text NOT NULL,
                "threshold" integer NOT NULL,
                "spent_micros" bigint NOT NULL,
                "notified_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_24af1c633612474670867b5d7c8" PRIMARY KEY ("limit_id", "period_start", "kind", "threshold")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "spend_limits" (
                "id" text NOT NULL,
                "account_id" text NOT NULL,
                "scope_user_id" text NOT NULL DEFAULT '',
                "period" text NOT NULL DEFAULT 'month',
                "limit_micros" bigint,
                "thresholds" integer array NOT NULL DEFAULT '{50,80,100}',
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "spend_limits_period_check" CHECK ("period" IN ('month')),
                CONSTRAINT "spend_limits_limit_check" CHECK (
                    "limit_micros" IS NULL
                    OR "limit_micros" >= 0
                ),
                CONSTRAINT "PK_f8e6c26d72e118716054b08489b" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "spend_limits_scope_key" ON "spend_limits" ("account_id", "scope_user_id")
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."spend_limits_scope_key"
        `);
    await queryRunner.query(`
            DROP TABLE "spend_limits"
        `);
    await queryRunner.query(`
            DROP TABLE "spend_limit_alerts"
        `);
  }
}
