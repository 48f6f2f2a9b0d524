import { MigrationInterface, QueryRunner } from 'typeorm';

export class Reports1796207234078 implements MigrationInterface {
  name = 'Reports1796207234078';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "usage_rollups" (
                "account_id" text NOT NULL,
                "hour" TIMESTAMP WITH TIME ZONE NOT NULL,
                "environment" text NOT NULL,
                "user_id" text NOT NULL,
                "runtimes" bigint NOT NULL DEFAULT '0',
                "running_ms" bigint NOT NULL DEFAULT '0',
                "credits" bigint NOT NULL DEFAULT '0',
                CONSTRAINT "PK_250c7ee6b99977912fd11fa5783" PRIMARY KEY ("account_id", "hour", "environment", "user_id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "usage_rollups_hour_idx" ON "usage_rollups" ("hour")
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."usage_rollups_hour_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "usage_rollups"
        `);
  }
}
