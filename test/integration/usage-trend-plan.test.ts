import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanCatalog } from '../../src/plan-catalog/plan-catalog';
import { ReportsService } from '../../src/reports/reports.service';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';
import { explaining as explainingReads, visited } from '../support/query-plan';

// The usage trend by size class (the console's dashboard) answers for a period: on two years of the fleet's runtimes
// and ledger, it must read the period's settlements and postings, not the tables whole. Its figures are checked and
// the plan of its statement read.
describe('the usage trend by size class on a database with a long history', () => {
  let db: FreshDatabase;
  const november = { from: new Date('2026-11-01T00:00:00Z'), to: new Date('2026-12-01T00:00:00Z') };

  beforeAll(async () => {
    db = await freshDatabase('usage_trend_plan');
    const q = (sql: string) => db.ds.query(sql);
    // The fleet's runtimes: 40,000 over two years before November; in November 90 of size small (charged 1,000 each)
    // and 30 with a GPU, on three days, each charged by a settlement of its hold, one of them corrected a day later.
    await q(`INSERT INTO runtimes (runtime_id, account_id, reservation_id, hold_id, status, settlement, size_class, environment, closed_ms,
        charged, reserved_amount, settled_at, created_at)
      SELECT 'rt_' || g, 'acc_' || (g % 400), 'res_' || g, 'hold_rt_' || g, 'settled', 'terminated',
        CASE WHEN g > 40090 THEN 'large' ELSE 'small' END,
        CASE WHEN g > 40090 THEN '{"accelerator": {"type": "a100"}}'::jsonb ELSE '{}'::jsonb END, 60000, 1000, 1000, at, at
      FROM (SELECT g, timestamptz '2026-11-01' - make_interval(secs => g * 1500) AS at FROM generate_series(1, 40000) g
            UNION ALL SELECT g, timestamptz '2026-11-02' + make_interval(days => (g % 3) * 7, secs => g - 40000) FROM generate_series(40001, 40120) g) r`);
    await q(`INSERT INTO holds (id, account_id, status, amount, settled_amount, released_amount, charged_amount, reference, created_at, resolved_at)
      SELECT hold_id, account_id, 'settled', 1000, 1000, 0, 1000, runtime_id, created_at, settled_at FROM runtimes`);
    await q(`INSERT INTO ledger_transactions (account_id, kind, idempotency_key, fingerprint, amount, hold_id, total_after, held_after,
        available_after, explanation, created_at)
      SELECT account_id, k.kind, k.kind || ':' || hold_id, 'f', 0, hold_id, 0, 0, 0, '{}'::jsonb, settled_at + k.after
      FROM runtimes, (VALUES ('reservation', interval '-1 hour'), ('settlement', interval '0')) AS k(kind, after)
      UNION ALL SELECT account_id, 'adjustment', 'adjust:' || hold_id, 'f', 0, hold_id, 0, 0, 0, '{}'::jsonb, settled_at + interval '1 day'
      FROM runtimes WHERE runtime_id = 'rt_40100'`);
    await q(`INSERT INTO ledger_entries (transaction_id, line, ledger_account, amount)
      SELECT t.id, l.line, CASE WHEN t.kind = 'reservation' THEN (CASE l.line WHEN 1 THEN 'grant:g' ELSE 'hold:' || t.hold_id END)
          ELSE (CASE l.line WHEN 1 THEN 'consumption' ELSE 'hold:' || t.hold_id END) END,
        CASE t.kind WHEN 'reservation' THEN -1000 WHEN 'settlement' THEN 1000 ELSE 250 END * CASE l.line WHEN 1 THEN 1 ELSE -1 END
      FROM ledger_transactions t, (VALUES (1), (2)) AS l(line)`);
    await q('ANALYZE');
  }, 120_000);
  afterAll(() => db?.drop());

  it("the usage trend by size class reads the period's settlements and postings, and finds each runtime by its id", async () => {
    const { ds, plans } = explainingReads(db.ds);
    const report = await new ReportsService(ds, {} as PlanCatalog).usageByClass(november);
    expect(report.items.map((i) => [i.day, i.sizeClass, i.gpu, i.runtimes, i.seconds, i.credits])).toEqual([
      ['2026-11-02', 'large', 'a100', 10, 600, '0.010000'],
      ['2026-11-02', 'small', null, 30, 1800, '0.030000'],
      ['2026-11-09', 'large', 'a100', 10, 600, '0.010000'],
      ['2026-11-09', 'small', null, 30, 1800, '0.030000'],
      ['2026-11-16', 'large', 'a100', 10, 600, '0.010000'],
      ['2026-11-16', 'small', null, 30, 1800, '0.030000'],
      ['2026-11-17', 'large', 'a100', 0, 0, '0.000250'],
    ]);
    expect(visited(plans[0])).toBeLessThan(2_000);
  });
});
