import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each wallet's balance change per UTC month (grants + holds − debt, i.e. −(issued + consumption +
 * expired)), kept by every ledger write, so that a statement's opening balance sums a row a month
 * instead of every entry of the account before the month. Filled here from the entries written so
 * far; an instance of the previous version still writing while this runs would leave its writes
 * out (the ledger-reconcile job reports any month that differs from its entries).
 */
export class LedgerMonths1796570226303 implements MigrationInterface {
  name = 'LedgerMonths1796570226303';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "ledger_months" (
                "account_id" text NOT NULL,
                "month" date NOT NULL,
                "balance_change" bigint NOT NULL,
                CONSTRAINT "PK_e5fdfcab77ee370f6db860ae4a8" PRIMARY KEY ("account_id", "month")
            )
        `);
    await queryRunner.query(`
            INSERT INTO "ledger_months" ("account_id", "month", "balance_change")
            SELECT t.account_id, (date_trunc('month', t.created_at AT TIME ZONE 'UTC'))::date, -sum(e.amount)
            FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
            WHERE e.ledger_account IN ('issued', 'consumption', 'expired')
            GROUP BY 1, 2 HAVING sum(e.amount) <> 0
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP TABLE "ledger_months"
        `);
  }
}
