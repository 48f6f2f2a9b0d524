import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeysService } from '../../src/accounts/auth/api-keys.service';
import { ManualClock } from '../../src/infra/clock/clock';
import { MembersService } from '../../src/members/members.service';
import { calendarMonth } from '../../src/plan-catalog/periods';
import { spendOf } from '../../src/spend-limits/spend-limit-reads';
import { SpendLimitsService } from '../../src/spend-limits/spend-limits.service';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';
import { explaining as explainingReads, visited } from '../support/query-plan';

const user = (n: number) => `user_${String(n).padStart(6, '0')}`;

// The console's account page shows an account's members, spend limits and keys a page at a time, and its seats:
// each page must read its rows, not the account's tens of thousands (nor, for keys, every key of every account),
// and the seats the account's count. Each read is run here as the service sends it, its rows checked, and its plan read.
describe("an account's members, spend limits and keys on a database with large accounts", () => {
  let db: FreshDatabase;

  beforeAll(async () => {
    db = await freshDatabase('account_lists_plan');
    const q = (sql: string) => db.ds.query(sql);
    // An account with 50,000 members (a fifth removed) and 50,000 keys, beside 400 accounts of 100 members and keys each.
    await q(`INSERT INTO account_members (account_id, user_id, active, changed_at, change_id)
      SELECT 'acc_big', 'user_' || lpad(g::text, 6, '0'), g % 5 <> 0, timestamptz '2025-01-01' + make_interval(secs => g), 'c_' || g
      FROM generate_series(1, 50000) g
      UNION ALL
      SELECT 'acc_' || a, 'user_' || u, true, timestamptz '2025-01-01', 'c_' || a || '_' || u FROM generate_series(0, 399) a, generate_series(1, 100) u`);
    await q(`INSERT INTO api_keys (id, name, key_hash, scopes, created_at, revoked_at)
      SELECT 'key_big_' || g, 'key ' || g, 'h_big_' || g, ARRAY['account:acc_big'], timestamptz '2025-01-01' + make_interval(secs => g / 2),
        CASE WHEN g % 3 = 0 THEN timestamptz '2026-01-01' END
      FROM generate_series(1, 50000) g
      UNION ALL
      SELECT 'key_' || a || '_' || k, NULL, 'h_' || a || '_' || k, ARRAY['account:acc_' || a, 'reports'], timestamptz '2025-06-01', NULL
      FROM generate_series(0, 399) a, generate_series(1, 100) k`);
    await q(`INSERT INTO api_key_accounts (account_id, key_id, created_at)
      SELECT substr(s, 9), id, created_at FROM api_keys, unnest(scopes) s WHERE s LIKE 'account:%'`);
    // The big account's limit and one for each of its 50,000 members, beside 10 members' limits of each other account.
    await q(`INSERT INTO spend_limits (id, account_id, scope_user_id, limit_micros, thresholds)
      SELECT 'sl_big', 'acc_big', '', 1000000000000, '{50,80,100}'::int[]
      UNION ALL
      SELECT 'sl_big_' || g, 'acc_big', 'user_' || lpad(g::text, 6, '0'), 1000000000 + g, '{80,100}'::int[] FROM generate_series(1, 50000) g
      UNION ALL
      SELECT 'sl_' || a || '_' || u, 'acc_' || a, 'user_' || u, 5000000, '{50,80,100}'::int[] FROM generate_series(0, 399) a, generate_series(1, 10) u`);
    // December's runtimes of its first 100 members (20 settled each, 1 credit charged of 3 held; the first 50 with
    // one running), and 2,000 of November.
    await q(`INSERT INTO runtimes (runtime_id, account_id, user_id, hold_id, status, reserved_amount, charged, created_at, settled_at)
      SELECT 'rt_' || g, 'acc_big', 'user_' || lpad((1 + g % 100)::text, 6, '0'), 'h_' || g, 'settled', 3000000, 1000000,
        timestamptz '2026-12-01' + make_interval(mins => g), timestamptz '2026-12-01' + make_interval(mins => g + 10)
      FROM generate_series(1, 2000) g
      UNION ALL
      SELECT 'rt_live_' || g, 'acc_big', 'user_' || lpad(g::text, 6, '0'), 'h_live_' || g, 'running', 3000000, 0, timestamptz '2026-12-10', NULL
      FROM generate_series(1, 50) g
      UNION ALL
      SELECT 'rt_nov_' || g, 'acc_big', 'user_' || lpad((1 + g % 100)::text, 6, '0'), 'h_nov_' || g, 'settled', 3000000, 1000000,
        timestamptz '2026-11-01' + make_interval(mins => g), timestamptz '2026-11-01' + make_interval(mins => g + 10)
      FROM generate_series(1, 2000) g`);
    await q('ANALYZE');
  }, 120_000);
  afterAll(() => db?.drop());

  it("an account's members are read a page at a time from the first after the cursor, never counted whole", async () => {
    const { ds, plans } = explainingReads(db.ds);
    const members = new MembersService(ds, null as never, null as never, null as never);
    const first = await members.page('acc_big', { size: 200 });
    expect(first.members.map((m) => m.userId)).toEqual(Array.from({ length: 200 }, (_, i) => `user_${String(i + 1).padStart(6, '0')}`));
    expect(first.next).toBe('user_000200');
    expect(first.seats).toBe(40_000);
    const later = await members.page('acc_big', { after: 'user_030000', size: 200 });
    expect(later.members[0]?.userId).toBe('user_030001');
    const last = await members.page('acc_big', { after: 'user_049900', size: 200 });
    expect(last.members).toHaveLength(100);
    expect(last.next).toBeNull();
    // Each page read visits its rows and one more; the seats (plans 1, 3 and 5) the account's count, never its 40,000
    // active members (on 401 accounts' counts, a table this small may be read whole).
    for (const n of [0, 2, 4]) expect(visited(plans[n])).toBeLessThanOrEqual(201);
    for (const n of [1, 3, 5]) expect(visited(plans[n])).toBeLessThanOrEqual(401);
  });

  it("an account's keys are read newest first a page at a time from its own index, never by every key's scopes", async () => {
    const { ds, plans } = explainingReads(db.ds);
    const keys = new ApiKeysService(ds, null as never, null as never);
    const first = await keys.keysOf('acc_big', { size: 200 });
    expect(first.items.map((k) => k.id)).toEqual(Array.from({ length: 200 }, (_, i) => `key_big_${50000 - i}`));
    expect(first.items[2]?.revokedAt).not.toBeNull();
    const second = await keys.keysOf('acc_big', { after: first.next!, size: 200 });
    expect(second.items[0]?.id).toBe('key_big_49800');
    expect(plans.every((p) => visited(p) <= 2 * 201)).toBe(true);
    // One key of the account, for the console's revoke: its own row.
    expect((await keys.keyOf('acc_big', 'key_big_7'))?.name).toBe('key 7');
    expect(await keys.keyOf('acc_big', 'key_3_7')).toBeNull();
    expect(visited(plans[plans.length - 1])).toBeLessThanOrEqual(2);
  });

  it("an account's spend limits are read a page at a time from its key, the account-wide first, the page's spend in one read", async () => {
    const { ds, plans } = explainingReads(db.ds);
    const clock = new ManualClock(new Date('2026-12-15T12:00:00Z'));
    const limits = new SpendLimitsService(ds, null as never, null as never, clock, null as never);
    const first = await limits.limitsPage('acc_big', { size: 200 });
    expect(first.items.map((l) => l.scope?.userId ?? null)).toEqual([null, ...Array.from({ length: 199 }, (_, i) => user(i + 1))]);
    expect(first.next).toBe('user_000199');
    expect(first.thresholds).toEqual([50, 80, 100]);
    // Each member's spend as the limit's own read says it (GET spend-limit?userId=): 20 credits charged, 3 held by the first 50.
    expect(first.items[1]).toMatchObject({ scope: { userId: user(1) }, credits: '1000.000001', spent: '20.000000', held: '3.000000' });
    const month = calendarMonth(clock.now());
    for (const l of first.items.slice(1, 120)) {
      const own = await spendOf(db.ds, 'acc_big', l.scope!.userId, month);
      expect([l.spent, l.held]).toEqual([own.charged, own.held].map((m) => (Number(m) / 1e6).toFixed(6)));
    }
    const firstReads = plans.length;
    const later = await limits.limitsPage('acc_big', { after: 'user_030000', size: 200 });
    expect(later.items.map((l) => l.scope?.userId)).toEqual(Array.from({ length: 200 }, (_, i) => user(30001 + i)));
    expect(later.items[0]).toMatchObject({ spent: '0.000000', held: '0.000000', thresholds: [80, 100] });
    // The account-wide limit's thresholds (the form's) on every page.
    expect(later.thresholds).toEqual([50, 80, 100]);
    const last = await limits.limitsPage('acc_big', { after: 'user_049900', size: 200 });
    expect(last.items).toHaveLength(100);
    expect(last.next).toBeNull();
    // A page is at most 4 reads (never one per limit): its limits and one more from the account's key, the members'
    // spend over the account's 2,050 runtimes of the month (index entries and rows), the account-wide spend or limit.
    expect(firstReads).toBeLessThanOrEqual(4);
    expect(plans.length - firstReads).toBeLessThanOrEqual(6);
    expect(visited(plans[0])).toBeLessThanOrEqual(201);
    expect(plans.every((p) => visited(p) <= 2 * 2050 + 201)).toBe(true);
  });
});
