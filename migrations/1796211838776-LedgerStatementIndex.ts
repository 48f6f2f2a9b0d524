import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Hand-written (TypeORM does not compare index predicates). The statement index becomes partial on a
 * predicate every row meets, so that only the statement query (which states it) can use it: a lookup by
 * (account, idempotency key) then always takes the unique index. With both indexes usable and an
 * account's rows underestimated (one hot wallet among many), the planner could pick this one and scan
 * all of the account's transactions for every operation.
 */
export class LedgerStatementIndex1796211838776 implements MigrationInterface {
  name = 'LedgerStatementIndex1796211838776';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."ledger_transactions_account_idx"`);
    await queryRunner.query(
      `CREATE INDEX "ledger_transactions_account_idx" ON "ledger_transactions" ("account_id", "id") WHERE "kind" <> ''`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."ledger_transactions_account_idx"`);
    await queryRunner.query(`CREATE INDEX "ledger_transactions_account_idx" ON "ledger_transactions" ("account_id", "id")`);
  }
}
