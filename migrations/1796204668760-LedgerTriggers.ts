import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Hand-written (TypeORM does not track triggers or functions): the ledger's entries and
 * transactions and the audit log are append-only; each transaction's entries sum to zero; and
 * `audit_hash`, the SQL twin of src/audit/audit-hash.ts.
 */
export class LedgerTriggers1796204668760 implements MigrationInterface {
  name = 'LedgerTriggers1796204668760';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION '% is append-only: % refused (post a correcting entry instead)', TG_TABLE_NAME, TG_OP
          USING ERRCODE = 'restrict_violation';
      END $$`);
    for (const table of ['ledger_entries', 'ledger_transactions', 'audit_log']) {
      await queryRunner.query(
        `CREATE TRIGGER ${table}_append_only BEFORE UPDATE OR DELETE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION refuse_change()`,
      );
      await queryRunner.query(
        `CREATE TRIGGER ${table}_no_truncate BEFORE TRUNCATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION refuse_change()`,
      );
    }
    // The entries of a transaction are inserted together, by one statement, and balance.
    await queryRunner.query(`
      CREATE FUNCTION ledger_entries_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
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
    await queryRunner.query(`
      CREATE TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
      REFERENCING NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_balanced()`);
    // Lets a single statement fail on a broken precondition (e.g. the wallet version it was planned on).
    await queryRunner.query(`
      CREATE FUNCTION ledger_assert(ok boolean, message text) RETURNS boolean LANGUAGE plpgsql AS $$
      BEGIN
        IF ok IS NOT TRUE THEN
          RAISE EXCEPTION '%', message USING ERRCODE = 'serialization_failure';
        END IF;
        RETURN true;
      END $$`);
    await queryRunner.query(`
      CREATE FUNCTION audit_hash(prev_hash text, seq bigint, record text) RETURNS text
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
        SELECT encode(sha256(convert_to('{"prevHash":"' || prev_hash || '","record":' || record || ',"seq":' || seq::text || '}', 'UTF8')), 'hex')
      $$`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION audit_hash(text, bigint, text)`);
    await queryRunner.query(`DROP FUNCTION ledger_assert(boolean, text)`);
    await queryRunner.query(`DROP TRIGGER ledger_entries_balanced ON ledger_entries`);
    await queryRunner.query(`DROP FUNCTION ledger_entries_balanced()`);
    for (const table of ['ledger_entries', 'ledger_transactions', 'audit_log']) {
      await queryRunner.query(`DROP TRIGGER ${table}_no_truncate ON ${table}`);
      await queryRunner.query(`DROP TRIGGER ${table}_append_only ON ${table}`);
    }
    await queryRunner.query(`DROP FUNCTION refuse_change()`);
  }
}
