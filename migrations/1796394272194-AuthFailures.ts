import { MigrationInterface, QueryRunner } from 'typeorm';

export class AuthFailures1796394272194 implements MigrationInterface {
  name = 'AuthFailures1796394272194';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "auth_failures" (
                "scope" text NOT NULL,
                "client" text NOT NULL,
                "window_start" TIMESTAMP WITH TIME ZONE NOT NULL,
                "failures" integer NOT NULL,
                CONSTRAINT "auth_failures_failures_check" CHECK ("failures" > 0),
                CONSTRAINT "PK_32da60a21fc7720f741986ef318" PRIMARY KEY ("scope", "client")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "auth_failures_window_start_idx" ON "auth_failures" ("window_start")
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."auth_failures_window_start_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "auth_failures"
        `);
  }
}
