import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reads by an account and a time range that went through the account's whole history: the month's
 * spend of GET /v1/accounts/{id}/wallet (and the console's account page) and a statement's movements
 * read every transaction of the account (and joined every ledger entry of the fleet); the usage of
 * GET /v1/accounts/{id}/usage, by settlement time, read every runtime of the account.
 */
export class AccountHistoryReads1796559380333 implements MigrationInterface {
  name = 'AccountHistoryReads1796559380333';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE INDEX "ledger_transactions_account_time_idx" ON "ledger_transactions" ("account_id", "created_at")
            WHERE "kind" <> ''
        `);
    await queryRunner.query(`
            CREATE INDEX "runtimes_account_settled_idx" ON "runtimes" ("account_id", "settled_at")
            WHERE "settled_at" IS NOT NULL
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."runtimes_account_settled_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."ledger_transactions_account_time_idx"
        `);
  }
}
