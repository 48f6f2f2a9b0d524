import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanCatalog } from '../../src/plan-catalog/plan-catalog';
import { ReportsService } from '../../src/reports/reports.service';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';
import { explaining as explainingReads, visited, type PlanNode } from '../support/query-plan';

// The period reports (credits, spend limits, reconciliation) answer for a period: on a database with two years of the
// fleet's history, each must read the period's rows, not the tables whole. Each report is run here as the service runs
// it, its figures checked, and the plan of its statement read.
describe('the period reports on a database with a long history', () => {
  let db: FreshDatabase;
  const november = { from: new Date('2026-11-01T00:00:00Z'), to: new Date('2026-12-01T00:00:00Z') };
  const now = new Date('2026-12-06T12:00:00Z');

  beforeAll(async () => {
    db = await freshDatabase('report_plan');
    const q = (sql: string) => db.ds.query(sql);
    // Two years of the fleet's ledger before November: 40,000 runtimes of 400 accounts, each a reservation then a
    // settlement charging 1,000. In November: 100 more runtimes, 3 admin grants of 5 credits, 4 expiries of 2 credits.
    await q(`INSERT INTO ledger_transactions (account_id, kind, idempotency_key, fingerprint, amount, hold_id, grant_id, total_after,
        held_after, available_after, explanation, created_at)
      SELECT 'acc_' || (g % 400), k.kind, k.kind || ':' || g, 'f', CASE k.kind WHEN 'reservation' THEN -1000 ELSE 0 END, 'hold_' || g, NULL,
        0, 0, 0, '{}', at + k.after
      FROM (SELECT g, timestamptz '2026-11-01' - make_interval(secs => g * 1500) AS at FROM generate_series(1, 40000) g
            UNION ALL SELECT 40000 + g, timestamptz '2026-11-02' + make_interval(secs => g * 600) FROM generate_series(1, 100) g) r,
        (VALUES ('reservation', interval '0'), ('settlement', interval '1 hour')) AS k(kind, after)`);
    await q(`INSERT INTO ledger_transactions (account_id, kind, idempotency_key, fingerprint, amount, grant_id, total_after, held_after,
        available_after, explanation, created_at)
      SELECT 'acc_' || g, k.kind, k.kind || ':nov:' || g, 'f', 0, 'grant_nov_' || g, 0, 0, 0, '{}', timestamptz '2026-11-10' + make_interval(hours => g)
      FROM generate_series(1, 4) g, (VALUES ('grant'), ('expiry')) AS k(kind)
      WHERE k.kind = 'expiry' OR g <= 3`);
    await q(`INSERT INTO grants (id, account_id, source, amount, remaining, priority, status, reason, created_at)
      SELECT 'grant_nov_' || g, 'acc_' || g, 'admin', 5000000, 0, 20, 'expired', 'test', timestamptz '2026-11-10' FROM generate_series(1, 4) g`);
    await q(`INSERT INTO ledger_entries (transaction_id, line, ledger_account, amount)
      SELECT t.id, l.line,
        CASE t.kind WHEN 'reservation' THEN (CASE l.line WHEN 1 THEN 'grant:g' ELSE 'hold:' || t.hold_id END)
          WHEN 'settlement' THEN (CASE l.line WHEN 1 THEN 'consumption' ELSE 'hold:' || t.hold_id END)
          WHEN 'grant' THEN (CASE l.line WHEN 1 THEN 'issued' ELSE 'grant:' || t.grant_id END)
          ELSE (CASE l.line WHEN 1 THEN 'expired' ELSE 'grant:' || t.grant_id END) END,
        CASE t.kind WHEN 'reservation' THEN -1000 WHEN 'settlement' THEN 1000 WHEN 'grant' THEN -5000000 ELSE 2000000 END
          * CASE l.line WHEN 1 THEN 1 ELSE -1 END
      FROM ledger_transactions t, (VALUES (1), (2)) AS l(line)`);
    // Their runtimes, a terminate command for every fifth (by the user); in November, 20 told for their spend limit,
    // one of them twice, and 10 by the user.
    await q(`INSERT INTO runtimes (runtime_id, account_id, reservation_id, hold_id, user_id, status, settlement, created_at)
      SELECT 'rt_' || g, 'acc_' || (g % 400), 'res_' || g, 'hold_' || g, 'user_' || (g % 7), 'settled', 'terminated',
        timestamptz '2026-11-01' - make_interval(secs => g * 1500)
      FROM generate_series(1, 40000) g`);
    await q(`INSERT INTO runtime_commands (id, runtime_id, account_id, type, reason, issued_at, acknowledged_at)
      SELECT 'cmd_' || g, 'rt_' || g, 'acc_' || (g % 400), 'runtime.terminate', 'user', at, at + interval '1 minute'
      FROM generate_series(5, 40000, 5) g, LATERAL (SELECT timestamptz '2026-11-01' - make_interval(secs => g * 1500) AS at) t
      UNION ALL
      SELECT 'cmd_nov_' || g, 'rt_' || g, 'acc_' || (g % 400), 'runtime.terminate', CASE WHEN g <= 20 THEN 'spend_limit' ELSE 'user' END,
        timestamptz '2026-11-03' + make_interval(hours => g), NULL
      FROM generate_series(1, 30) g
      UNION ALL SELECT 'cmd_nov_again', 'rt_1', 'acc_1', 'runtime.terminate', 'spend_limit', timestamptz '2026-11-20', NULL`);
    // Spend limits of 400 accounts with an alert at 80 % every month for two years; 5 of them again in November.
    await q(`INSERT INTO spend_limits (id, account_id, scope_user_id, period, limit_micros, thresholds)
      SELECT 'lim_' || g, 'acc_' || g, '', 'month', 10000000, '{80}' FROM generate_series(0, 399) g`);
    await q(`INSERT INTO spend_limit_alerts (limit_id, period_start, kind, threshold, spent_micros, notified_at, limit_micros)
      SELECT 'lim_' || g, timestamptz '2024-11-01' + make_interval(months => m), 'threshold_crossed', 80, 8000000,
        timestamptz '2024-11-20' + make_interval(months => m), 10000000
      FROM generate_series(0, 399) g, generate_series(0, 23) m
      UNION ALL
      SELECT 'lim_' || g, timestamptz '2026-11-01', 'threshold_crossed', 80, 8000000, timestamptz '2026-11-20', 10000000
      FROM generate_series(0, 4) g`);
    // 2,000 Team accounts with 10 members each; 3 subscriptions billing, one of them for 9 seats; seat discrepancies
    // found every day for two years, 3 in November.
    await q(`INSERT INTO account_members (account_id, user_id, active, changed_at, change_id)
      SELECT 'team_' || a, 'u_' || u, true, timestamptz '2025-01-01', 'c_' || a || '_' || u FROM generate_series(1, 2000) a, generate_series(1, 10) u`);
    await q(`INSERT INTO stripe_subscriptions (account_id, customer_id, subscription_id, status, seat_quantity)
      SELECT 'team_' || a, 'cus_' || a, 'sub_' || a, 'active', CASE WHEN a = 2 THEN 9 ELSE 10 END FROM generate_series(1, 3) a`);
    await q(`INSERT INTO stripe_seat_discrepancies (kind, account_id, subscription_id, stripe_quantity, active_seats, detected_at)
      SELECT 'quantity_drift', 'team_' || (g % 2000), 'sub_' || (g % 2000), 9, 10, timestamptz '2026-11-01' - make_interval(hours => g * 8)
      FROM generate_series(1, 2200) g
      UNION ALL
      SELECT 'quantity_drift', 'team_2', 'sub_2', 9, 10, timestamptz '2026-11-05' + make_interval(days => g) FROM generate_series(1, 3) g`);
    await q('ANALYZE');
  });
  afterAll(() => db?.drop());

  /** The reports' service on a data source whose reads also record their plan. */
  function explaining(): { reports: ReportsService; plans: PlanNode[] } {
    const { ds, plans } = explainingReads(db.ds);
    return { reports: new ReportsService(ds, {} as PlanCatalog), plans };
  }

  it("the credits report reads the period's transactions", async () => {
    const { reports, plans } = explaining();
    const report = await reports.credits(november, 'total');
    expect(report.totals).toEqual({
      granted: '15.000000',
      topUps: '0.000000',
      clawedBack: '0.000000',
      consumed: '0.102000',
      refunded: '0.000000',
      expired: '8.000000',
      net: '6.898000',
    });
    expect(visited(plans[0])).toBeLessThan(1_000);
  });

  it("the spend-limits report reads the period's alerts and commands, and each runtime by its id", async () => {
    const { reports, plans } = explaining();
    const report = await reports.spendLimits(november);
    expect(report.totals).toEqual({ 'alert:threshold_crossed': 5, 'termination:spend_limit': 20, 'termination:user': 10 });
    expect(report.items[0]).toMatchObject({ type: 'termination', event: 'spend_limit', runtime: 'rt_1', user: 'user_1' });
    expect(visited(plans[0])).toBeLessThan(1_000);
  });

  it("the reconciliation report reads the period's discrepancies and the billing subscriptions' members", async () => {
    const { reports, plans } = explaining();
    const report = await reports.reconciliation(november, now);
    expect(report.items.map((i) => [i.kind, i.account])).toEqual([
      ['quantity_drift', 'team_2'],
      ['quantity_drift', 'team_2'],
      ['quantity_drift', 'team_2'],
      ['open_drift', 'team_2'],
    ]);
    expect(visited(plans[0])).toBeLessThan(200);
  });
});
