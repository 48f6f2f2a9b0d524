import { MigrationInterface, QueryRunner } from 'typeorm';

export class ReportsAccountRollups1796213965882 implements MigrationInterface {
  name = 'ReportsAccountRollups1796213965882';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "usage_account_hourly_rollups" (
                "runtimes" bigint NOT NULL DEFAULT '0',
                "running_ms" bigint NOT NULL DEFAULT '0',
                "credits" bigint NOT NULL DEFAULT '0',
                "account_id" text NOT NULL,
                "hour" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "PK_8a5f87a5f3edb32440cd2d96c0f" PRIMARY KEY ("account_id", "hour")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "usage_account_hourly_rollups_hour_idx" ON "usage_account_hourly_rollups" ("hour")
        `);
    await queryRunner.query(`
            CREATE TABLE "usage_account_daily_rollups" (
                "runtimes" bigint NOT NULL DEFAULT '0',
                "running_ms" bigint NOT NULL DEFAULT '0',
                "credits" bigint NOT NULL DEFAULT '0',
                "account_id" text NOT NULL,
                "day" date NOT NULL,
                CONSTRAINT "PK_1aaca8b8fde7214149f2ea76e89" PRIMARY KEY ("account_id", "day")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "usage_account_daily_rollups_day_idx" ON "usage_account_daily_rollups" ("day")
        `);
    await queryRunner.query(`
            CREATE TABLE "usage_account_monthly_rollups" (
                "runtimes" bigint NOT NULL DEFAULT '0',
                "running_ms" bigint NOT NULL DEFAULT '0',
                "credits" bigint NOT NULL DEFAULT '0',
                "account_id" text NOT NULL,
                "month" date NOT NULL,
                CONSTRAINT "PK_eca6be31a10a541dde71e8f88f2" PRIMARY KEY ("account_id", "month")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "usage_account_monthly_rollups_month_idx" ON "usage_account_monthly_rollups" ("month")
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."usage_account_monthly_rollups_month_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "usage_account_monthly_rollups"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."usage_account_daily_rollups_day_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "usage_account_daily_rollups"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."usage_account_hourly_rollups_hour_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "usage_account_hourly_rollups"
        `);
  }
}
