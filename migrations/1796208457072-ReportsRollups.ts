import { MigrationInterface, QueryRunner } from 'typeorm';

export class ReportsRollups1796208457072 implements MigrationInterface {
  name = 'ReportsRollups1796208457072';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "usage_daily_rollups" (
                "account_id" text NOT NULL,
                "day" date NOT NULL,
                "environment" text NOT NULL,
                "user_id" text NOT NULL,
                "runtimes" bigint NOT NULL DEFAULT '0',
                "running_ms" bigint NOT NULL DEFAULT '0',
                "credits" bigint NOT NULL DEFAULT '0',
                CONSTRAINT "PK_c2e9b50b9104dd24da2bf9365a4" PRIMARY KEY ("account_id", "day", "environment", "user_id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "usage_daily_rollups_day_idx" ON "usage_daily_rollups" ("day")
        `);
    await queryRunner.query(`
            CREATE TABLE "usage_monthly_rollups" (
                "account_id" text NOT NULL,
                "month" date NOT NULL,
                "environment" text NOT NULL,
                "user_id" text NOT NULL,
                "runtimes" bigint NOT NULL DEFAULT '0',
                "running_ms" bigint NOT NULL DEFAULT '0',
                "credits" bigint NOT NULL DEFAULT '0',
                CONSTRAINT "PK_1a7c18bb9ffd2d9c94b1300d34d" PRIMARY KEY ("account_id", "month", "environment", "user_id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "usage_monthly_rollups_month_idx" ON "usage_monthly_rollups" ("month")
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."usage_monthly_rollups_month_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "usage_monthly_rollups"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."usage_daily_rollups_day_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "usage_daily_rollups"
        `);
  }
}
