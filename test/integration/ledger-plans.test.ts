import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSource, EntityManager } from 'typeorm';
import { auditHash, GENESIS_HASH, type AuditRecord } from '../../src/audit/audit-hash';
import { AuditService } from '../../src/audit/audit.service';
import { canonicalJson } from '../../src/common/canonical-json';
import { SystemClock } from '../../src/infra/clock/clock';
import { PipelinedSession, poolOf } from '../../src/common/database/pipelined-transaction';
import { preparedRows } from '../../src/common/database/prepared';
import { LedgerService } from '../../src/ledger/ledger.service';
import { WRITE_STATEMENT } from '../../src/ledger/persistence/batch-write';
import { LOCK_STATEMENT } from '../../src/ledger/persistence/wallet-store';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';

// The ledger's hot statements keep the generic plan made at their first execution on a connection, and remade whenever
// PostgreSQL invalidates it (an ANALYZE). Made on a young database (tiny tables, statistics saying so), that plan must
// still find rows by key: a sequential scan kept for the connection's life read every grant on every write once the
// tables had grown. The setting that ensures it (enable_seqscan off) must not outlive the hot statement in its
// transaction: set-based statements after it would be planned with it.
describe('ledger plans on a fresh database', () => {
  let db: FreshDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = await freshDatabase('plans');
    ds = db.ds;
  });
  afterAll(() => db?.drop());

  const clock = new SystemClock();
  const newLedger = (): LedgerService => new LedgerService(ds, new AuditService(ds, clock), clock);

  /** Runs `work` in a transaction of its own connection, and commits it. */
  const inCommittedTransaction = async (work: (em: EntityManager) => Promise<void>): Promise<void> => {
    const runner = ds.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await work(runner.manager);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
  };

  it('plans the write statement as index lookups even when its tables were tiny at planning time', async () => {
    const ledger = newLedger();
    await ds.query(`INSERT INTO accounts (id, kind, plan) VALUES ('acc_plans', 'user', 'enterprise')`);
    // A few rows, and statistics that say so (autovacuum's ANALYZE of a young database).
    await ledger.grantTx({
      accountId: 'acc_plans',
      source: 'admin',
      amount: 1_000_000n,
      expiresAt: null,
      idempotencyKey: 'g0',
      reason: 'test',
      actor: 'test',
    });
    await ledger.createHoldTx({ accountId: 'acc_plans', holdId: 'hold_first', amount: 100_000n, reference: 'rt', idempotencyKey: 'h0' });
    await ledger.settleHoldTx({ holdId: 'hold_first', amount: 50_000n });
    await ds.query(`ANALYZE grants, holds, hold_allocations, wallets, ledger_transactions, ledger_entries`);
    const runner = ds.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      const em = runner.manager;
      await ledger.grant(em, {
        accountId: 'acc_plans',
        source: 'admin',
        amount: 5_000_000n,
        expiresAt: null,
        idempotencyKey: 'g1',
        reason: 'test',
        actor: 'test',
      });
      await ledger.createHold(em, {
        accountId: 'acc_plans',
        holdId: 'hold_plans',
        amount: 1_000_000n,
        reference: 'rt',
        idempotencyKey: 'h1',
      });
      await ledger.settleHold(em, { holdId: 'hold_plans', amount: 500_000n });
      // The plan this connection keeps for the write (every parameter NULL: EXPLAIN only plans it).
      const plan: { 'QUERY PLAN': string }[] = await runner.query(
        `EXPLAIN EXECUTE ${WRITE_STATEMENT.name}(${Array(13).fill('NULL').join(', ')})`,
      );
      const text = plan.map((r) => r['QUERY PLAN']).join('\n');
      expect(text).toMatch(/Index Scan|Index Only Scan|Bitmap Index Scan/);
      expect(text).not.toMatch(/Seq Scan on (grants|holds|hold_allocations|wallets)/);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
  });

  it('runs every execution of a hot statement with enable_seqscan off, and turns it back on after it', async () => {
    const probe = { name: 'plans_test_probe_v1', text: `SELECT current_setting('enable_seqscan') AS v` };
    const runner = ds.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      const em = runner.manager;
      // Not only the first execution on the connection: a plan remade later is made with the setting too.
      for (let i = 0; i < 3; i++) {
        expect(await preparedRows<{ v: string }>(em, probe.name, probe.text, [])).toEqual([{ v: 'off' }]);
        expect(await runner.query(`SHOW enable_seqscan`)).toEqual([{ enable_seqscan: 'on' }]);
      }
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    // The group-committed batches: the SETs travel with the EXECUTEs, every time.
    const session = await PipelinedSession.begin(poolOf(ds), [{ statement: probe, values: [] }]);
    try {
      expect(session.rows).toEqual([{ v: 'off' }]);
      expect(await session.query([{ statement: probe, values: [] }])).toEqual([[{ v: 'off' }]]);
      await session.commit([]);
    } catch (error) {
      session.abandon();
      throw error;
    }
  });

  it('leaves enable_seqscan on for the rest of a transaction that wrote through the ledger', async () => {
    await ds.query(`INSERT INTO accounts (id, kind, plan) VALUES ('acc_plans_leak', 'user', 'enterprise') ON CONFLICT DO NOTHING`);
    await inCommittedTransaction(async (em) => {
      const ledger = newLedger();
      await ledger.grant(em, {
        accountId: 'acc_plans_leak',
        source: 'admin',
        amount: 1_000_000n,
        expiresAt: null,
        idempotencyKey: 'leak1',
        reason: 'test',
        actor: 'test',
      });
      expect(await em.query(`SHOW enable_seqscan`)).toEqual([{ enable_seqscan: 'on' }]);
      await ledger.createHold(em, {
        accountId: 'acc_plans_leak',
        holdId: 'hold_leak',
        amount: 100_000n,
        reference: 'rt',
        idempotencyKey: 'leak2',
      });
      expect(await em.query(`SHOW enable_seqscan`)).toEqual([{ enable_seqscan: 'on' }]);
    });
  });

  it('updates a wallet row in place (no new index entry) even when its page is full of other wallets', async () => {
    // 300 wallets fill their pages as far as the table lets inserts fill them; a page in the middle is then full
    // unless the table keeps room for new row versions (fillfactor): then an update is HOT, not a new index entry.
    await ds.query(
      `INSERT INTO accounts (id, kind, plan) SELECT 'acc_hot_' || lpad(i::text, 4, '0'), 'user', 'enterprise' FROM generate_series(1, 300) AS i`,
    );
    await ds.query(`INSERT INTO wallets (account_id) SELECT 'acc_hot_' || lpad(i::text, 4, '0') FROM generate_series(1, 300) AS i`);
    await inCommittedTransaction(async (em) => {
      const ledger = newLedger();
      await ledger.grant(em, {
        accountId: 'acc_hot_0150',
        source: 'admin',
        amount: 1_000_000n,
        expiresAt: null,
        idempotencyKey: 'hot1',
        reason: 'test',
        actor: 'test',
      });
      await ledger.createHold(em, {
        accountId: 'acc_hot_0150',
        holdId: 'hold_hot',
        amount: 100_000n,
        reference: 'rt',
        idempotencyKey: 'hot2',
      });
      const [counts] = await em.query(
        `SELECT pg_stat_get_xact_tuples_updated('wallets'::regclass)::int AS updated, pg_stat_get_xact_tuples_hot_updated('wallets'::regclass)::int AS hot`,
      );
      expect(counts.updated).toBeGreaterThanOrEqual(2);
      expect(counts.hot).toBe(counts.updated);
    });
  });

  it("gives the service's connections room for the monthly reset's temporary tables in memory", async () => {
    // A reset batch's temporary tables (5,000 accounts, their audit records) outgrow the default 8 MB of temp_buffers:
    // they were then written to and read back from files, a tenth of the reset's time.
    expect(await ds.query(`SHOW temp_buffers`)).toEqual([{ temp_buffers: '64MB' }]);
  });

  it("never compiles the service's statements with JIT, whatever their plan costs", async () => {
    // A generic plan costed above jit_above_cost would be compiled by LLVM at every execution. Every
    // plan costs more than a jit_above_cost of 0 (the disabled-scan penalty that made a plan costly
    // before PostgreSQL 18 is gone since), so with JIT on this plan would be compiled.
    const [plan, [setting]]: [{ 'QUERY PLAN': string }[], { jit: string }[]] = await ds.transaction(async (em) => {
      await em.query(`SET LOCAL jit_above_cost = 0`);
      return [await em.query(`EXPLAIN SELECT * FROM wallets WHERE debt < 0`), await em.query(`SHOW jit`)];
    });
    expect(setting?.jit).toBe('off');
    expect(plan.map((r) => r['QUERY PLAN']).join('\n')).not.toMatch(/JIT/);
  });

  it("reads a wallet's grants through the index of live grants, however long the account's history", async () => {
    // 50 accounts with two years of expired monthly allowances each, and statistics that say so.
    await ds.query(`INSERT INTO accounts (id, kind, plan) SELECT 'acc_old_' || i, 'user', 'enterprise' FROM generate_series(1, 50) AS i`);
    await ds.query(
      `INSERT INTO grants (id, account_id, source, amount, remaining, priority, expires_at, status, reason, created_at)
       SELECT 'old_' || a || '_' || m, 'acc_old_' || a, 'plan_allowance', 50000000, 0, 0, now() - m * interval '1 month', 'expired', 'old',
         now() - (m + 1) * interval '1 month'
       FROM generate_series(1, 50) AS a, generate_series(1, 24) AS m`,
    );
    await ds.query(`ANALYZE grants`);
    const runner = ds.createQueryRunner();
    await runner.connect();
    try {
      // As the service runs it: the generic plan, made with enable_seqscan off (see pipelined-transaction.ts).
      await runner.query(`SET plan_cache_mode = force_generic_plan`);
      await runner.query(`SET enable_seqscan = off`);
      await runner.query(`PREPARE live_probe AS ${LOCK_STATEMENT.text}`);
      const plan: { 'QUERY PLAN': string }[] = await runner.query(`EXPLAIN EXECUTE live_probe('acc_old_1', NULL, NULL)`);
      const text = plan.map((r) => r['QUERY PLAN']).join('\n');
      expect(text).toContain('grants_live_idx');
      expect(text).not.toContain('grants_account_idx');
      // What keeps that index complete: an expired grant holds nothing.
      await expect(
        runner.query(`UPDATE grants SET status = 'expired' WHERE id = (SELECT id FROM grants WHERE remaining > 0 LIMIT 1)`),
      ).rejects.toThrow(/grants_expired_empty_check/);
    } finally {
      await runner.query(`DEALLOCATE ALL`);
      await runner.query(`RESET ALL`);
      await runner.release();
    }
  });

  it('inlines audit_hash into the statements that call it, and it hashes as `audit verify` does', async () => {
    // Not inlined (declared more immutable than its body), every call ran the SQL-function executor.
    const plan: { 'QUERY PLAN': string }[] = await ds.query(
      `EXPLAIN VERBOSE SELECT audit_hash(md5(i::text), i, '{}') FROM generate_series(1, 3) AS i`,
    );
    const text = plan.map((r) => r['QUERY PLAN']).join('\n');
    expect(text).toContain('sha256(convert_to(');
    expect(text).not.toContain('audit_hash(');
    const record: AuditRecord = {
      chain: 'acc_x',
      at: '2026-12-03T09:00:00.000Z',
      actor: 'test',
      action: 'probe',
      accountId: 'acc_x',
      before: null,
      after: { a: '1' },
      correlationId: null,
    };
    const [row] = await ds.query(`SELECT audit_hash($1, 7, $2) AS hash`, [GENESIS_HASH, canonicalJson(record)]);
    expect(row.hash).toBe(auditHash(GENESIS_HASH, 7, record));
  });
});
