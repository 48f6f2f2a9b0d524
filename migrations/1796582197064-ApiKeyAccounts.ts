import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An account's keys on its console page were found by testing the scopes of every key, all of them
 * read and counted on every view: a row per account a key is scoped to (filled here from the keys
 * there are, then written with each key) gives the account's keys newest first a page at a time.
 */
export class ApiKeyAccounts1796582197064 implements MigrationInterface {
  name = 'ApiKeyAccounts1796582197064';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "api_key_accounts" (
                "account_id" text NOT NULL,
                "key_id" text NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "PK_271f2efe23493dc90c090b1a42c" PRIMARY KEY ("account_id", "key_id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "api_key_accounts_newest_idx" ON "api_key_accounts" ("account_id", "created_at", "key_id")
        `);
    await queryRunner.query(`
            INSERT INTO "api_key_accounts" ("account_id", "key_id", "created_at")
            SELECT DISTINCT substr(s, length('account:') + 1), k."id", k."created_at"
            FROM "api_keys" k, unnest(k."scopes") AS s WHERE s LIKE 'account:%'
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."api_key_accounts_newest_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "api_key_accounts"
        `);
  }
}
