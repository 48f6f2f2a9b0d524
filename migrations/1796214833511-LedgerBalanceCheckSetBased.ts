import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The balance check of new ledger entries, set-based. Entries are append-only and the entries of a
 * transaction are inserted by one statement, so every statement's entries summing to zero per
 * transaction keeps every transaction at zero (by induction over the statements): the sum is taken
 * over the transition table alone, without reading the entries table. The transactions are still
 * looked up, by primary key for the whole set at once (an array of ids: an index scan whatever the
 * statistics). Before, a PL/pgSQL loop ran two lookups per transaction: a third of the cost of a
 * statement writing thousands of transactions (the monthly reset).
 */
export class LedgerBalanceCheckSetBased1796214833511 implements MigrationInterface {
  name = 'LedgerBalanceCheckSetBased1796214833511';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION ledger_entries_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        bad record;
        ids bigint[];
      BEGIN
        SELECT n.transaction_id, sum(n.amount) AS total INTO bad
        FROM new_entries n GROUP BY n.transaction_id HAVING sum(n.amount) <> 0 LIMIT 1;
        IF FOUND THEN
          RAISE EXCEPTION 'ledger transaction % is unbalanced: its entries sum to %', bad.transaction_id, bad.total
            USING ERRCODE = 'check_violation';
        END IF;
        ids := ARRAY(SELECT DISTINCT transaction_id FROM new_entries);
        IF (SELECT count(*) FROM ledger_transactions WHERE id = ANY(ids)) <> cardinality(ids) THEN
          RAISE EXCEPTION 'ledger entries refer to a transaction that does not exist' USING ERRCODE = 'foreign_key_violation';
        END IF;
        RETURN NULL;
      END $$`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
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
}
