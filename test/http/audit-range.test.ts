import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { startAppOnFreshDatabase, uid, type FreshHarness } from '../support/app';

// An audit row's `at` is the date of what it records, which can be days before the rows written
// around it (a top-up whose webhook was retried for days, an expiry job run late): a time range of
// GET /v1/audit holds every row dated in it, whatever its id, and no other, newest id first, page after page.
describe('GET /v1/audit by time range, rows dated out of id order', () => {
  let h: FreshHarness;
  let admin: string;
  const clock = new ManualClock(new Date('2025-02-01T00:00:00.000Z'));
  const range = { from: '2025-02-07T00:00:00.000Z', to: '2025-02-08T00:00:00.000Z' };

  beforeAll(async () => {
    // A database of its own: the range without an account lists every row of the log dated in it.
    h = await startAppOnFreshDatabase('audit_range', { clock });
    admin = await h.key('admin');
  });
  afterAll(() => h.close());

  async function account(): Promise<string> {
    const id = uid('acc');
    expect((await h.request('POST', '/v1/accounts', { key: admin, body: { id, kind: 'user', plan: 'enterprise' } })).status).toBe(201);
    return id;
  }

  /** A grant recorded at `at` (the clock's time), its reason naming it. */
  async function grant(accountId: string, reason: string, at: string): Promise<void> {
    clock.set(at);
    const res = await h.request('POST', `/v1/admin/accounts/${accountId}/grants`, { key: admin, body: { credits: '1', reason } });
    expect(res.status).toBe(201);
  }

  /** Every page of a query, `limit` rows a page: each row's reason (its action when it has none) and date. */
  async function all(query: string, limit: number): Promise<{ pages: number; rows: [string, string][] }> {
    const rows: [string, string][] = [];
    let pages = 0;
    let cursor = '';
    for (;;) {
      const res = await h.request('GET', `/v1/audit?${query}&limit=${limit}&cursor=${cursor}`, { key: admin });
      expect(res.status).toBe(200);
      const body = res.body as { items: { action: string; at: string; after: { reason?: string } }[]; nextCursor: string | null };
      expect(body.items.length).toBeLessThanOrEqual(limit);
      rows.push(...body.items.map((r): [string, string] => [r.after.reason ?? r.action, r.at]));
      pages++;
      if (body.nextCursor === null) return { pages, rows };
      cursor = body.nextCursor;
    }
  }

  it('returns exactly the rows dated in [from, to), newest id first, across pages', async () => {
    const a = await account();
    const b = await account();
    // In id order, dated back and forth around the range 7 February.
    await grant(a, 'in-1', '2025-02-07T10:00:00.000Z');
    await grant(a, 'after-range', '2025-02-09T10:00:00.000Z');
    await grant(a, 'in-2', '2025-02-07T23:59:59.999Z');
    await grant(a, 'at-to', '2025-02-08T00:00:00.000Z');
    await grant(a, 'before-from', '2025-02-06T23:59:59.999Z');
    await grant(a, 'in-3', '2025-02-07T00:00:00.000Z');
    await grant(b, 'b-in', '2025-02-07T12:00:00.000Z');
    await grant(a, 'much-later', '2025-02-12T08:00:00.000Z');
    await grant(a, 'in-4', '2025-02-07T05:00:00.000Z');
    await grant(b, 'b-after', '2025-02-10T00:00:00.000Z');
    await grant(a, 'in-5', '2025-02-07T18:00:00.000Z');

    const everyone = await all(`from=${range.from}&to=${range.to}`, 2);
    expect(everyone.rows).toEqual([
      ['in-5', '2025-02-07T18:00:00.000Z'],
      ['in-4', '2025-02-07T05:00:00.000Z'],
      ['b-in', '2025-02-07T12:00:00.000Z'],
      ['in-3', '2025-02-07T00:00:00.000Z'],
      ['in-2', '2025-02-07T23:59:59.999Z'],
      ['in-1', '2025-02-07T10:00:00.000Z'],
    ]);
    expect(everyone.pages).toBe(3);

    const one = await all(`accountId=${a}&from=${range.from}&to=${range.to}`, 2);
    expect(one.rows.map(([reason]) => reason)).toEqual(['in-5', 'in-4', 'in-3', 'in-2', 'in-1']);
    expect(one.pages).toBe(3);

    // Open on one side: from 7 February on, and before 7 February.
    expect((await all(`from=${range.from}`, 4)).rows.map(([reason]) => reason)).toEqual([
      'in-5',
      'b-after',
      'in-4',
      'much-later',
      'b-in',
      'in-3',
      'at-to',
      'in-2',
      'after-range',
      'in-1',
    ]);
    expect((await all(`accountId=${a}&to=${range.from}`, 4)).rows.map(([reason]) => reason)).toEqual(['before-from', 'account.created']);
  });
});
