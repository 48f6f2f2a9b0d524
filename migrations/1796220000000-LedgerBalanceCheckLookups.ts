import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The balance check of new ledger entries: the sum stays set-based over the statement's new entries,
 * but each transaction's existence is checked by its primary key, one probe per transaction. The
 * set-based lookup (`id = ANY(array)`) ran on the session's generic plan (the ledger sets
 * `plan_cache_mode = force_generic_plan` on its connections), which PL/pgSQL caches per connection:
 * planned while the table was small, it stayed a sequential scan of `ledger_transactions` on every
 * write, and the hold+settle benchmark lost a third of its rate. A primary-key equality is an index
 * probe under any plan.
 */
export class LedgerBalanceCheckLookups1796220000000 implements MigrationInterface {
  name = 'LedgerBalanceCheckLookups1796220000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION ledger_entries_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        bad record;
        tx bigint;
      BEGIN
        SELECT n.transaction_id, sum(n.amount) AS total INTO bad
        FROM new_entries n GROUP BY n.transaction_id HAVING sum(n.amount) <> 0 LIMIT 1;
        IF FOUND THEN
          RAISE EXCEPTION 'ledger transaction % is unbalanced: its entries sum to %', bad.transaction_id, bad.total
            USING ERRCODE = 'check_violation';
        END IF;
        FOR tx IN SELECT DISTINCT transaction_id FROM new_entries LOOP
          PERFORM 1 FROM ledger_transactions WHERE id = tx;
          IF NOT FOUND THEN
            RAISE EXCEPTION 'ledger entries refer to a transaction that does not exist' USING ERRCODE = 'foreign_key_violation';
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
}
