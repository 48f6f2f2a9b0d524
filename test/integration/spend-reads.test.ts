import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calendarMonth } from '../../src/plan-catalog/periods';
import { SpendLimitReads, spendOf, spendOfMembers, type Spend } from '../../src/spend-limits/spend-limit-reads';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';

const STATUSES = ['reserved', 'running', 'paused', 'terminating', 'settled', 'voided'] as const;
/** When each kind of runtime was reserved, against December 2026. */
const CREATED = {
  lastMonth: '2026-11-20T00:00:00Z',
  start: '2026-12-01T00:00:00Z',
  inMonth: '2026-12-15T00:00:00Z',
  end: '2027-01-01T00:00:00Z',
} as const;
const month = calendarMonth(new Date('2026-12-15T12:00:00Z'));

// A member's spend is read three ways: alone (GET spend-limit?userId=, the limits' checks), a page of members at once
// (the console's account page) and the scopes of a batch of launches (admission's prepared read). Each is checked here
// against the others on every kind of runtime the rule tells apart, so the three cannot drift apart.
describe("a member's spend, read alone, by page and by admission, on every kind of runtime", () => {
  let db: FreshDatabase;
  /** One member per kind of runtime: its status, when it was reserved, whether it holds credits. */
  const kinds = STATUSES.flatMap((status) =>
    Object.entries(CREATED).flatMap(([when, at]) => [true, false].map((hold) => ({ status, when, at, hold }))),
  ).map((k, i) => ({ ...k, userId: `user_${String(i).padStart(2, '0')}`, charged: BigInt(i + 1) * 1_000_000n }));

  beforeAll(async () => {
    db = await freshDatabase('spend_reads');
    const rows = [
      ...kinds.map((k) => ({ ...k, accountId: 'acc_a', runtimeId: `rt_${k.userId}` })),
      // A member with every kind at once, and the same members in another account (never counted in acc_a).
      ...kinds.map((k) => ({ ...k, accountId: 'acc_a', userId: 'user_all', runtimeId: `rt_all_${k.userId}` })),
      ...kinds.map((k) => ({ ...k, accountId: 'acc_b', runtimeId: `rt_b_${k.userId}` })),
    ];
    await db.ds.query(
      `INSERT INTO runtimes (runtime_id, account_id, user_id, hold_id, status, reserved_amount, charged, created_at)
       SELECT r.runtime_id, r.account_id, r.user_id, r.hold_id, r.status, r.charged * 3, r.charged, r.created_at
       FROM jsonb_to_recordset($1::jsonb) AS r(runtime_id text, account_id text, user_id text, hold_id text, status text, charged bigint,
         created_at timestamptz)`,
      [
        JSON.stringify(
          rows.map((r) => ({
            runtime_id: r.runtimeId,
            account_id: r.accountId,
            user_id: r.userId,
            hold_id: r.hold ? `h_${r.runtimeId}` : null,
            status: r.status,
            charged: r.charged.toString(),
            created_at: r.at,
          })),
        ),
      ],
    );
    // Ancillary charges count for the whole account only (storage has no user).
    await db.ds.query(
      `INSERT INTO ancillary_charges (id, account_id, kind, item_key, bucket, rate_card_version, quantity, amount)
       VALUES ('anc_1', 'acc_a', 'storage', 'vol_1', '2026-12-03T10:00:00Z', 'v1', 1, 7000000),
              ('anc_2', 'acc_a', 'storage', 'vol_1', '2026-11-30T10:00:00Z', 'v1', 1, 9000000)`,
    );
  });
  afterAll(() => db?.drop());

  /** Admission's read of these scopes, as it sends it (the prepared statement's text and values). */
  const admissionSpend = async (userIds: readonly string[]): Promise<Map<string, Spend>> => {
    const read = new SpendLimitReads().spend(
      userIds.map((userId) => ({ accountId: 'acc_a', userId })),
      month,
    );
    return read.parse(await db.ds.query(read.call.statement.text, read.call.values));
  };

  it('gives each member the same spend by every read, and the rule: charges of the month settled, holds open of runtimes reserved before its end', async () => {
    const members = [...kinds.map((k) => k.userId), 'user_all', 'user_none'];
    const page = await spendOfMembers(db.ds, 'acc_a', members, month);
    const admission = await admissionSpend(members);
    const zero: Spend = { charged: 0n, held: 0n };
    for (const userId of members) {
      const alone = await spendOf(db.ds, 'acc_a', userId, month);
      expect({ userId, spend: page.get(userId) ?? zero }).toEqual({ userId, spend: alone });
      expect({ userId, spend: admission.get(`acc_a:${userId}`) }).toEqual({ userId, spend: alone });
    }
    // The rule itself, kind by kind: a runtime counts only with a hold; charged when settled or voided and reserved in
    // the month; held while open and reserved before the month's end (last month's too).
    for (const k of kinds) {
      const inMonth = k.when === 'start' || k.when === 'inMonth';
      const open = k.status !== 'settled' && k.status !== 'voided';
      const expected: Spend = {
        charged: k.hold && !open && inMonth ? k.charged : 0n,
        held: k.hold && open && k.when !== 'end' ? k.charged * 3n : 0n,
      };
      expect({ k, spend: page.get(k.userId) ?? zero }).toEqual({ k, spend: expected });
    }
    const all = page.get('user_all')!;
    const sum = (of: (s: Spend) => bigint) => kinds.reduce((total, k) => total + of(page.get(k.userId) ?? zero), 0n);
    expect(all).toEqual({ charged: sum((s) => s.charged), held: sum((s) => s.held) });
    // The whole account: its members' runtimes and December's ancillary charge, alone as by admission.
    const account = await spendOf(db.ds, 'acc_a', null, month);
    expect(account).toEqual({ charged: 2n * all.charged + 7_000_000n, held: 2n * all.held });
    expect((await admissionSpend([''])).get('acc_a:')).toEqual(account);
  });
});
