import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The balance check of ledger entries looks each new transaction up by its primary key, one at a
 * time: a join of the transition table with the whole entries table could be planned as a scan,
 * whose cost would grow with the ledger.
 */
export class LedgerBalanceCheckByIndex1796206563447 implements MigrationInterface {
  name = 'LedgerBalanceCheckByIndex1796206563447';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION ledger_entries_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        tx bigint;
        total numeric;
      BEGIN
        FOR tx IN SELECT DISTINCT transaction_id FROM new_entries LOOP
          PERFORM 1 FROM ledger_transactions WHERE id = tx;
          IF NOT FOUND THEN
            RAISE EXCEPTION 'ledger entries refer to transaction %, which does not exist', tx USING ERRCODE = 'foreign_key_violation';
          END IF;
          SELECT sum(amount) INTO total FROM ledger_entries WHERE transaction_id = tx;
          IF total <> 0 THEN
            RAISE EXCEPTION 'ledger transaction % is unbalanced: its entries sum to %', tx, total USING ERRCODE = 'check_violation';
          END IF;
        END LOOP;
        RETURN NULL;
      END $$`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION ledger_entries_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        bad record;
      BEGIN
        SELECT n.transaction_id, sum(e.amount) AS total INTO bad
        FROM (SELECT DISTINCT transaction_id FROM new_entries) n
        JOIN ledger_entries e ON e.transaction_id = n.transaction_id
        GROUP BY n.transaction_id
        HAVING sum(e.amount) <> 0
        LIMIT 1;
        IF FOUND THEN
          RAISE EXCEPTION 'ledger transaction % is unbalanced: its entries sum to %', bad.transaction_id, bad.total
            USING ERRCODE = 'check_violation';
        END IF;
        IF EXISTS (SELECT 1 FROM new_entries n LEFT JOIN ledger_transactions t ON t.id = n.transaction_id WHERE t.id IS NULL) THEN
          RAISE EXCEPTION 'ledger entries refer to a transaction that does not exist' USING ERRCODE = 'foreign_key_violation';
        END IF;
        RETURN NULL;
      END $$`);
  }
}
