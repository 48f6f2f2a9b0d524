import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditService } from '../../src/audit/audit.service';
import { ManualClock } from '../../src/infra/clock/clock';
import { consumedBetween, statementPage } from '../../src/ledger/persistence/ledger-reads';
import { FORCE_SETTLE_DUE, REISSUE_DUE } from '../../src/metering/sweeper.service';
import { usageByGroup } from '../../src/metering/usage-reads';
import { balanceBefore, movements } from '../../src/statements/statement.store';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';
import { explaining as explainingReads, visited } from '../support/query-plan';

// The reads the sweeper makes at every sweep, and those behind an account's wallet, usage, statement and audit page,
// must cost what is asked (the open commands; the period's rows; a page), not the account's history nor the fleet's:
// each is run here, as the service sends it, on a database with two years of history, and its plan is read.
describe('reads on a database with a long history', () => {
  let db: FreshDatabase;
  const now = new Date('2026-12-06T12:00:00Z');
  const november = { from: new Date('2026-11-01T00:00:00Z'), to: new Date('2026-12-01T00:00:00Z') };

  beforeAll(async () => {
    db = await freshDatabase('history_plan');
    const q = (sql: string) => db.ds.query(sql);
    // The fleet: 40,000 runtimes of 400 accounts over two years, settled (a tenth voided as never started),
    // a fifth of them with an acknowledged terminate command.
    await q(`INSERT INTO runtimes (runtime_id, account_id, reservation_id, hold_id, status, settlement, started_at, last_seen_at, settled_at,
        created_at)
      SELECT 'rt_fleet_' || g, 'acc_' || (g % 400), 'res_fleet_' || g, 'hold_fleet_' || g,
        CASE WHEN g % 10 = 0 THEN 'voided' ELSE 'settled' END, CASE WHEN g % 10 = 0 THEN 'never_started' ELSE 'terminated' END,
        CASE WHEN g % 10 = 0 THEN NULL ELSE at END, at + interval '1 hour', at + interval '1 hour', at
      FROM generate_series(1, 40000) g, LATERAL (SELECT timestamptz '2026-11-01' - make_interval(secs => g * 1500) AS at) t`);
    await q(`INSERT INTO runtime_commands (id, runtime_id, account_id, type, reason, issued_at, acknowledged_at)
      SELECT 'cmd_fleet_' || g, 'rt_fleet_' || g, 'acc_' || (g % 400), 'runtime.terminate', 'user', at, at + interval '1 minute'
      FROM generate_series(5, 40000, 5) g, LATERAL (SELECT timestamptz '2026-11-01' - make_interval(secs => g * 1500) AS at) t`);
    // One account's history: 20,000 runs before November, 100 in it; each charged 1,000 by a settlement of its hold.
    await q(`INSERT INTO runtimes (runtime_id, account_id, reservation_id, hold_id, status, settlement, size_class, started_at, last_seen_at,
        closed_ms, charged, reserved_amount, settled_at, created_at)
      SELECT 'rt_' || k || '_' || g, 'acc_history', 'res_' || k || '_' || g, 'hold_' || k || '_' || g, 'settled', 'terminated', 'small',
        at, at + interval '1 hour', 3600000, 1000, 1000, at + interval '1 hour', at
      FROM (SELECT 'old' AS k, g, timestamptz '2026-10-31 22:00' - make_interval(secs => g * 3000) AS at FROM generate_series(1, 20000) g
            UNION ALL SELECT 'now', g, timestamptz '2026-11-02' + make_interval(secs => g * 600) FROM generate_series(1, 100) g) r`);
    await q(`INSERT INTO holds (id, account_id, status, amount, settled_amount, released_amount, charged_amount, reference, created_at, resolved_at)
      SELECT hold_id, account_id, 'settled', 1000, 1000, 0, 1000, runtime_id, created_at, created_at + interval '1 hour'
      FROM runtimes WHERE account_id = 'acc_history'`);
    await q(`INSERT INTO ledger_transactions (account_id, kind, idempotency_key, fingerprint, amount, hold_id, total_after, held_after,
        available_after, explanation, created_at)
      SELECT account_id, 'settlement', 'settle:' || hold_id, 'f', 1000, hold_id, 0, 0, 0, '{}', created_at + interval '1 hour'
      FROM (SELECT account_id, hold_id, created_at FROM runtimes WHERE account_id = 'acc_history'
            UNION ALL SELECT account_id, hold_id, created_at FROM runtimes WHERE runtime_id LIKE 'rt_fleet_%' AND status = 'settled') r`);
    await q(`INSERT INTO ledger_entries (transaction_id, line, ledger_account, amount)
      SELECT t.id, l.line, CASE l.line WHEN 1 THEN 'consumption' ELSE 'hold:' || t.hold_id END, CASE l.line WHEN 1 THEN 1000 ELSE -1000 END
      FROM ledger_transactions t, (VALUES (1), (2)) AS l(line)`);
    // Rows written here and not through the ledger: their balance change per month, as migration LedgerMonths fills it.
    await q(`INSERT INTO ledger_months (account_id, month, balance_change)
      SELECT t.account_id, (date_trunc('month', t.created_at AT TIME ZONE 'UTC'))::date, -sum(e.amount)
      FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
      WHERE e.ledger_account IN ('issued', 'consumption', 'expired') GROUP BY 1, 2`);
    // Runtimes told to terminate now: one still reporting past the grace period (told again, then settled anyway),
    // one voided as never started that ran after all and is silent (settled anyway), one told a moment ago (neither).
    await q(`INSERT INTO runtimes (runtime_id, account_id, reservation_id, hold_id, status, settlement, started_at, last_seen_at, created_at)
      VALUES ('rt_stuck', 'acc_1', 'res_stuck', 'hold_stuck', 'terminating', NULL, '2026-12-06T11:00Z', '2026-12-06T11:59Z', '2026-12-06T10:59Z'),
        ('rt_voided_late', 'acc_2', 'res_voided_late', 'hold_voided_late', 'voided', 'never_started', '2026-12-06T11:00Z', '2026-12-06T11:40Z',
          '2026-12-06T10:40Z'),
        ('rt_fresh', 'acc_3', 'res_fresh', 'hold_fresh', 'terminating', NULL, '2026-12-06T11:00Z', '2026-12-06T11:59:59Z', '2026-12-06T10:59Z')`);
    await q(`INSERT INTO runtime_commands (id, runtime_id, account_id, type, reason, issued_at)
      VALUES ('cmd_stuck', 'rt_stuck', 'acc_1', 'runtime.terminate', 'reservation_expired', '2026-12-06T11:50Z'),
        ('cmd_voided_late', 'rt_voided_late', 'acc_2', 'runtime.terminate', 'unreachable', '2026-12-06T11:50Z'),
        ('cmd_fresh', 'rt_fresh', 'acc_3', 'runtime.terminate', 'user', '2026-12-06T11:59:50Z')`);
    // The audit log: 5,000 rows of a quiet account long ago, then 20,000 of the rest of the fleet.
    await q(`INSERT INTO audit_log (chain, seq, at, actor, action, account_id, prev_hash, hash)
      SELECT 'c', g, timestamptz '2025-01-01' + make_interval(secs => g * 600), 'system', 'test',
        CASE WHEN g <= 5000 THEN 'acc_quiet' ELSE 'acc_' || (g % 400) END, 'x', 'x'
      FROM generate_series(1, 25000) g`);
    await q('ANALYZE');
  });
  afterAll(() => db?.drop());

  const explaining = () => explainingReads(db.ds);

  it('the sweeper finds the runtimes due from their open commands, not from the fleet history', async () => {
    const due = (sql: string) => explaining().ds.query(sql, [now.toISOString(), 60_000]) as Promise<{ runtime_id: string }[]>;
    expect((await due(REISSUE_DUE)).map((r) => r.runtime_id)).toEqual(['rt_stuck']);
    expect((await due(FORCE_SETTLE_DUE)).map((r) => r.runtime_id)).toEqual(['rt_stuck', 'rt_voided_late']);
    for (const sql of [REISSUE_DUE, FORCE_SETTLE_DUE]) {
      const { ds, plans } = explaining();
      await ds.query(sql, [now.toISOString(), 60_000]);
      expect(visited(plans[0])).toBeLessThan(100);
    }
  });

  it("an account's usage of a month reads that month's runtimes", async () => {
    const { ds, plans } = explaining();
    const found = await usageByGroup(ds, { accountId: 'acc_history', ...november, now, groupBy: 'environment' });
    expect(found).toEqual([{ key: 'small', runtimes: 100, ms: String(100 * 3600000), credits: String(100 * 1000) }]);
    // The month's 100 runtimes, each through its charge's transaction, entries and hold: about ten rows each.
    expect(visited(plans[0])).toBeLessThan(2_000);
  });

  it("the month's spend on the wallet reads the month's transactions", async () => {
    const { ds, plans } = explaining();
    expect(await consumedBetween(ds, 'acc_history', november.from, november.to)).toBe(100_000n);
    expect(visited(plans[0])).toBeLessThan(1_000);
  });

  it("a statement's movements read the month's transactions and find each runtime by its id", async () => {
    const { ds, plans } = explaining();
    const found = await movements(ds, 'acc_history', november.from, november.to);
    expect(found).toHaveLength(100);
    expect(found.every((m) => m.consumption === 1000n && m.runtime?.runtimeId.startsWith('rt_now_'))).toBe(true);
    expect(visited(plans[0])).toBeLessThan(2_000);
  });

  it("a statement's opening balance reads a row a month and the month's own transactions, not the account's history", async () => {
    // 20,000 charges of 1,000 before November, over two years; 100 in November, the first 65 of them before 2 November 12:00.
    const cases: [Date, bigint, number][] = [
      [november.from, -20_000_000n, 100],
      [november.to, -20_100_000n, 100],
      [new Date('2026-11-02T12:00:00Z'), -20_065_000n, 1_000],
    ];
    for (const [before, balance, bound] of cases) {
      const { ds, plans } = explaining();
      expect(await balanceBefore(ds, 'acc_history', before)).toBe(balance);
      expect(visited(plans[0])).toBeLessThan(bound);
    }
  });

  it("an account's ledger page reads its own newest transactions, not the fleet's newer ones", async () => {
    const { ds, plans } = explaining();
    const page = await statementPage(ds, 'acc_history', { limit: 25 });
    expect(page.items).toHaveLength(25);
    expect(page.items.every((t) => /^hold_(old|now)_/.test(t.holdId ?? ''))).toBe(true);
    expect(visited(plans[0])).toBeLessThan(200);
  });

  it("an account's audit page reads its own newest rows, not the rest of the log", async () => {
    const { ds, plans } = explaining();
    const page = await new AuditService(ds, new ManualClock(now)).list({ accountId: 'acc_quiet', limit: 25 });
    expect(page.items).toHaveLength(25);
    expect(page.items.every((r) => r.accountId === 'acc_quiet')).toBe(true);
    expect(page.items[0]?.seq).toBe(5000);
    expect(visited(plans[0])).toBeLessThan(200);
  });

  it('a time range of the audit log reads the rows of the range, not every newer row, and misses none dated out of order', async () => {
    // Rows written months later dated in the range (a webhook retried for days, a job run late): the newest ids.
    await db.ds.query(`INSERT INTO audit_log (chain, seq, at, actor, action, account_id, prev_hash, hash)
      VALUES ('late', 1, '2025-03-01T00:00:00Z', 'stripe', 'credits.granted', 'acc_late', 'x', 'x'),
        ('late', 2, '2025-03-01T13:30:00Z', 'system', 'grant.expired', 'acc_late', 'x', 'x'),
        ('late', 3, '2025-03-01T23:59:59.999Z', 'stripe', 'credits.granted', 'acc_late', 'x', 'x'),
        ('late', 4, '2025-03-02T00:00:00Z', 'stripe', 'credits.granted', 'acc_late', 'x', 'x'),
        ('late', 5, '2025-02-28T23:59:59.999Z', 'stripe', 'credits.granted', 'acc_late', 'x', 'x')`);
    await db.ds.query('ANALYZE audit_log');
    const cases = [
      // A day (144 rows of the fleet, 3 late ones), an hour, a day of one account (the fleet's acc_0 has none that day).
      { filter: { from: new Date('2025-03-01T00:00:00Z'), to: new Date('2025-03-02T00:00:00Z') }, rows: 147, bound: 400 },
      { filter: { from: new Date('2025-03-01T13:00:00Z'), to: new Date('2025-03-01T14:00:00Z') }, rows: 7, bound: 50 },
      {
        filter: { accountId: 'acc_late', from: new Date('2025-03-01T00:00:00Z'), to: new Date('2025-03-02T00:00:00Z') },
        rows: 3,
        bound: 400,
      },
    ];
    for (const { filter, rows, bound } of cases) {
      const { ds, plans } = explaining();
      const service = new AuditService(ds, new ManualClock(now));
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await service.list({ ...filter, cursor, limit: 25 });
        ids.push(...page.items.map((r) => r.id));
        expect(page.items.every((r) => Date.parse(r.at) >= filter.from.getTime() && Date.parse(r.at) < filter.to.getTime())).toBe(true);
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      expect(ids).toHaveLength(rows);
      expect(ids.map(Number)).toEqual([...ids.map(Number)].sort((a, b) => b - a));
      // Each page reads the range (a page of 25 among 147 rows), not the 16,000 newer rows of the log.
      expect(visited(plans[0])).toBeLessThan(bound);
    }
  });

  it("an account's plan changes since a payment are read from their own rows, not through its chain", async () => {
    // The account's chain: 20,000 changes of its money over two years, and three changes of its plan among them.
    await db.ds.query(`INSERT INTO audit_log (chain, seq, at, actor, action, account_id, before, after, prev_hash, hash)
      SELECT 'acc_plans', g, timestamptz '2024-12-01' + make_interval(secs => g * 3000), 'system',
        CASE WHEN g IN (1000, 19000, 19990) THEN 'plan.changed' ELSE 'hold.created' END, 'acc_plans',
        CASE WHEN g IN (1000, 19000, 19990) THEN jsonb_build_object('plan', 'p' || g) END, NULL, 'x', 'x'
      FROM generate_series(1, 20000) g`);
    await db.ds.query('ANALYZE audit_log');
    const { ds, plans } = explaining();
    const since = new Date(Date.parse('2024-12-01T00:00:00Z') + 18_000 * 3_000_000);
    const changes = await new AuditService(ds, new ManualClock(now)).planChangesSince(ds, 'acc_plans', since);
    expect(changes.map((c) => c.before)).toEqual([{ plan: 'p19990' }, { plan: 'p19000' }]);
    expect(visited(plans[0])).toBeLessThan(100);
  });
});
