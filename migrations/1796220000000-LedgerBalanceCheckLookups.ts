import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The balance check of new ledger entries: the sum stays set-based over the statement's new entries,
 * and the transactions' existence is looked up by primary key (a few transactions: the ledger's own
 * writes) or for the whole set at once with a one-shot plan made for the actual ids (thousands: the
 * monthly reset). The cached lookup (`id = ANY(array)`) ran on the session's generic plan
 * (the ledger sets `plan_cache_mode = force_generic_plan` on its connections), which PL/pgSQL keeps
 * per connection: planned while the table was small, it stayed a sequential scan of
 * `ledger_transactions` on every write, and the hold+settle benchmark lost a third of its rate.
 */
export class LedgerBalanceCheckLookups1796220000000 implements MigrationInterface {
  name = 'LedgerBalanceCheckLookups1796220000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION ledger_entries_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        bad record;
        ids bigint[];
        tx bigint;
        found_count bigint;
      BEGIN
        SELECT n.transaction_id, sum(n.amount) AS total INTO bad
        FROM new_entries n GROUP BY n.transaction_id HAVING sum(n.amount) <> 0 LIMIT 1;
        IF FOUND THEN
          RAISE EXCEPTION 'ledger transaction % is unbalanced: its entries sum to %', bad.transaction_id, bad.total
            USING ERRCODE = 'check_violation';
        END IF;
        ids := ARRAY(SELECT DISTINCT transaction_id FROM new_entries);
        IF cardinality(ids) <= 16 THEN
          -- The ledger's own writes (one transaction a statement): primary-key probes, an index scan under any plan.
          found_count := 0;
          FOREACH tx IN ARRAY ids LOOP
            PERFORM 1 FROM ledger_transactions WHERE id = tx;
            IF FOUND THEN found_count := found_count + 1; END IF;
          END LOOP;
        ELSE
          -- Set-based writers (the monthly reset: thousands a statement): a one-shot plan for the actual ids.
          EXECUTE 'SELECT count(*) FROM ledger_transactions WHERE id = ANY($1)' INTO found_count USING ids;
        END IF;
        IF found_count <> cardinality(ids) THEN
          RAISE EXCEPTION 'ledger entries refer to a transaction that does not exist' USING ERRCODE = 'foreign_key_violation';
        END IF;
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
