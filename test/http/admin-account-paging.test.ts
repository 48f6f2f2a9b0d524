import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeysService } from '../../src/accounts/auth/api-keys.service';
import { fundedAccount } from '../support/accounts';
import { startApp, type Harness } from '../support/app';

/** The rows of one table of a console page: the value of one column in each. */
function column(html: string, table: string, col: string): string[] {
  const start = html.indexOf(`<table id="${table}"`);
  const body = html.slice(start, html.indexOf('</table>', start));
  return [...body.matchAll(new RegExp(`<td[^>]* data-col="${col}"[^>]*>([^<]*)</td>`, 'g'))].map((m) => m[1]!);
}

/** What a table's pager says ("Rows 1–200 of 250 (page 1 of 2)"), and its next link (unescaped). */
function pagerOf(html: string, table: string): { rows?: string; next?: string; prev?: string } {
  const nav = new RegExp(`<nav class="pager"[^>]*><span data-rows="${table}">([^<]*)</span>(.*?)</nav>`).exec(html);
  const link = (rel: string) => new RegExp(`<a href="([^"]+)" rel="${rel}">`).exec(nav?.[2] ?? '')?.[1]?.replace(/&amp;/g, '&');
  return { rows: nav?.[1], next: link('next'), prev: link('prev') };
}

/** A cursor's pager of a section (`aria-label="<section> pages"`): its links by their text (unescaped), and what it says when there is no next. */
function cursorPagerOf(html: string, section: string): { links: Record<string, string>; none?: string } {
  const nav = new RegExp(`<nav class="pager" aria-label="${section} pages">(.*?)</nav>`).exec(html)?.[1] ?? '';
  const links = Object.fromEntries([...nav.matchAll(/<a href="([^"]+)">([^<]+)<\/a>/g)].map((m) => [m[2]!, m[1]!.replace(/&amp;/g, '&')]));
  return { links, none: /<span class="none">([^<]+)<\/span>/.exec(nav)?.[1] };
}

/** The account page shows each long table a page at a time, every row on some page, and says which rows of how many. */
describe('admin account page: long tables paged', () => {
  let h: Harness;
  let cookie: string;
  let org: string;
  /** Another account, sharing the org's last key. */
  let other: string;
  const members = Array.from({ length: 250 }, (_, i) => `user_${String(i).padStart(3, '0')}`);
  /** The org's keys, in the order they were created. */
  const keyIds: string[] = [];

  beforeAll(async () => {
    h = await startApp();
    const admin = await h.key('admin');
    cookie = await h.consoleSession(admin);
    org = await fundedAccount(h, admin, { plan: 'team', kind: 'organization' });
    await h.ds.query(
      `INSERT INTO account_members (account_id, user_id, active, changed_at, change_id)
       SELECT $1, u, true, now(), 'c_' || u FROM unnest($2::text[]) AS u`,
      [org, members],
    );
    // 30 invoices (one a month) and 130 spend-limit alerts (one per member's limit), more than the page's
    // read used to fetch (24 and 100), each row telling itself apart by its amount.
    await h.ds.query(
      `INSERT INTO stripe_invoices (invoice_id, account_id, subscription_id, status, period_start, period_end, seat_quantity, active_seats, total_cents)
       SELECT 'in_' || $1 || '_' || n, $1, 'sub_' || $1, 'paid', '2030-01-01'::timestamptz + (n - 1) * interval '1 month',
              '2030-01-01'::timestamptz + n * interval '1 month', 1, 1, n * 100
       FROM generate_series(1, 30) n`,
      [org],
    );
    await h.ds.query(
      `INSERT INTO spend_limits (id, account_id, scope_user_id, limit_micros)
       SELECT 'sl_' || $1 || '_' || n, $1, 'user_' || lpad(n::text, 3, '0'), 1000000000 FROM generate_series(1, 130) n`,
      [org],
    );
    // 120 more members' limits (250 in all), and the whole account's, with thresholds of its own.
    await h.ds.query(
      `INSERT INTO spend_limits (id, account_id, scope_user_id, limit_micros, thresholds)
       SELECT 'sl_' || $1 || '_' || n, $1, 'user_' || lpad(n::text, 3, '0'), 2000000000, '{90}'::int[] FROM generate_series(131, 250) n
       UNION ALL SELECT 'sl_' || $1, $1, '', 5000000000, '{25,75}'::int[]`,
      [org],
    );
    await h.ds.query(
      `INSERT INTO spend_limit_alerts (limit_id, period_start, kind, threshold, spent_micros, limit_micros, notified_at)
       SELECT 'sl_' || $1 || '_' || n, '2030-01-01', 'threshold', 50, n * 1000000, 1000000000, '2030-01-02'::timestamptz + n * interval '1 minute'
       FROM generate_series(1, 130) n`,
      [org],
    );
    // 205 keys of the org, created one after another; the last one also scoped to another account.
    const keys = h.app.get(ApiKeysService);
    for (let n = 0; n < 204; n++) keyIds.push((await keys.create([`account:${org}`], `key ${n}`)).id);
    other = await fundedAccount(h, admin, { plan: 'team', kind: 'organization' });
    keyIds.push((await keys.create([`account:${org}`, `account:${other}`, 'reports'], 'shared')).id);
  });
  afterAll(() => h.close());

  const get = (url: string) => h.app.inject({ method: 'GET', url, headers: { cookie } });

  /** Follows a table's Next links from `url`: the rows of `col` seen on each page, and what each pager said. */
  async function walk(url: string, table: string, col: string): Promise<{ seen: string[]; said: string[]; urls: string[] }> {
    const seen: string[] = [];
    const said: string[] = [];
    const urls: string[] = [];
    let next: string | undefined = url;
    while (next) {
      urls.push(next);
      const res = await get(next);
      expect(res.statusCode).toBe(200);
      seen.push(...column(res.body, table, col));
      const pager = pagerOf(res.body, table);
      said.push(pager.rows ?? '');
      next = pager.next;
      expect(urls.length).toBeLessThan(10);
    }
    return { seen, said, urls };
  }

  /** Follows a section's cursor links named `nextText` from `url`: the rows of `col` seen on each page, and the URLs. */
  async function walkCursor(url: string, table: string, col: string, section: string, nextText: string) {
    const seen: string[][] = [];
    const urls: string[] = [];
    let next: string | undefined = url;
    while (next) {
      urls.push(next);
      const res = await get(next);
      expect(res.statusCode).toBe(200);
      seen.push(column(res.body, table, col));
      next = cursorPagerOf(res.body, section).links[nextText];
      expect(urls.length).toBeLessThan(10);
    }
    return { seen, urls };
  }

  it('shows every member exactly once over pages of 200, each page after the last member of the one before', async () => {
    const base = `/admin/accounts/${org}`;
    const { seen, urls } = await walkCursor(base, 'table-members', 'userId', 'members', 'Next members');
    expect(seen.map((p) => p.length)).toEqual([200, 50]);
    expect(seen.flat()).toEqual(members);
    expect(urls[1]).toBe(`${base}?membersCursor=user_199#members`);
    const last = await get(urls[1]!);
    expect(last.body).toContain('250 active seats.');
    expect(cursorPagerOf(last.body, 'members')).toEqual({ links: { 'First members': `${base}#members` }, none: 'No more members.' });
    // A cursor past the last member: an empty page, the way back to the first.
    const past = await get(`${base}?membersCursor=zzz`);
    expect(column(past.body, 'table-members', 'userId')).toEqual([]);
    expect(cursorPagerOf(past.body, 'members').links['First members']).toBe(`${base}#members`);
  });

  it("shows every spend limit exactly once over pages of 200, the whole account's first, each page after the last member of the one before", async () => {
    const base = `/admin/accounts/${org}`;
    const { seen, urls } = await walkCursor(base, 'table-limits', 'scope', 'spend-limit', 'Next limits');
    expect(seen.map((p) => p.length)).toEqual([200, 51]);
    expect(seen.flat()).toEqual([
      'whole account',
      ...Array.from({ length: 250 }, (_, i) => `member user_${String(i + 1).padStart(3, '0')}`),
    ]);
    expect(urls[1]).toBe(`${base}?limitsCursor=user_199#spend-limit`);
    expect(column((await get(base)).body, 'table-limits', 'credits').slice(0, 2)).toEqual(['5,000.00', '1,000.00']);
    const last = await get(urls[1]!);
    expect(column(last.body, 'table-limits', 'credits')).toEqual(Array.from({ length: 51 }, () => '2,000.00'));
    expect(cursorPagerOf(last.body, 'spend-limit')).toEqual({ links: { 'First limits': `${base}#spend-limit` }, none: 'No more limits.' });
    // The form to set a limit offers the whole account's thresholds on every page, as on the first.
    expect(last.body).toMatch(/name="thresholds"[^>]*value="25, 75"/);
    // A cursor past the last limit: an empty table, the way back to the first.
    const past = await get(`${base}?limitsCursor=zzz`);
    expect(column(past.body, 'table-limits', 'scope')).toEqual([]);
    expect(cursorPagerOf(past.body, 'spend-limit').links['First limits']).toBe(`${base}#spend-limit`);
  });

  it("shows every key of the account exactly once, newest first, over pages of 200, a key of two accounts on each's page", async () => {
    const base = `/admin/accounts/${org}`;
    const { seen, urls } = await walkCursor(base, 'table-keys', 'id', 'keys', 'Older keys');
    expect(seen.map((p) => p.length)).toEqual([200, 5]);
    expect(seen.flat()).toEqual([...keyIds].reverse());
    expect(urls[1]).toBe(`${base}?keysCursor=${keyIds[5]}#keys`);
    expect(cursorPagerOf((await get(urls[1]!)).body, 'keys').none).toBe('No older keys.');
    expect(column((await get(`/admin/accounts/${other}`)).body, 'table-keys', 'id')).toEqual([keyIds[204]]);
    // A key of another account is no cursor of this page: nothing follows it.
    const foreign = await get(`/admin/accounts/${other}?keysCursor=${keyIds[0]}`);
    expect(column(foreign.body, 'table-keys', 'id')).toEqual([]);
  });

  it('reaches every invoice and alert though they are read a page at a time, counting them all', async () => {
    const base = `/admin/accounts/${org}`;
    const invoices = await walk(base, 'table-invoices', 'invoiceId');
    expect(invoices.said).toEqual(['Rows 1–24 of 30 (page 1 of 2)', 'Rows 25–30 of 30 (page 2 of 2)']);
    // Newest first, each once.
    expect(invoices.seen).toEqual(Array.from({ length: 30 }, (_, i) => `in_${org}_${30 - i}`));
    const alerts = await walk(base, 'table-alerts', 'spent');
    expect(alerts.said).toEqual(['Rows 1–100 of 130 (page 1 of 2)', 'Rows 101–130 of 130 (page 2 of 2)']);
    expect(alerts.seen).toEqual(Array.from({ length: 130 }, (_, i) => `${130 - i}.00`));
    expect(alerts.urls[1]).toBe(`${base}?alertsPage=2#table-alerts`);
    // A page past the last of a table read a page at a time is its last page too, with its rows.
    const past = await get(`${base}?invoicesPage=40`);
    expect(pagerOf(past.body, 'table-invoices').rows).toBe('Rows 25–30 of 30 (page 2 of 2)');
    expect(column(past.body, 'table-invoices', 'invoiceId')).toEqual(Array.from({ length: 6 }, (_, i) => `in_${org}_${6 - i}`));
  });

  it("keeps the other tables' pages and the cursors in each table's links", async () => {
    const base = `/admin/accounts/${org}`;
    const res = await get(`${base}?invoicesPage=2&alertsPage=2&auditCursor=123&limitsCursor=user_010`);
    expect(res.statusCode).toBe(200);
    expect(cursorPagerOf(res.body, 'members').links['Next members']).toBe(
      `${base}?auditCursor=123&limitsCursor=user_010&membersCursor=user_199&alertsPage=2&invoicesPage=2#members`,
    );
    expect(cursorPagerOf(res.body, 'spend-limit').links).toEqual({
      'First limits': `${base}?auditCursor=123&alertsPage=2&invoicesPage=2#spend-limit`,
      'Next limits': `${base}?auditCursor=123&limitsCursor=user_210&alertsPage=2&invoicesPage=2#spend-limit`,
    });
    expect(pagerOf(res.body, 'table-invoices').prev).toBe(`${base}?auditCursor=123&limitsCursor=user_010&alertsPage=2#stripe`);
    // The audit trail's cursor pager keeps the tables' pages.
    expect(res.body).toMatch(
      /<nav class="pager" aria-label="audit pages"><a href="[^"#]*alertsPage=2&amp;invoicesPage=2#audit">Newest<\/a>/,
    );
  });

  it('refuses a page that is not a number with a 400 page naming each finding', async () => {
    const res = await get(
      `/admin/accounts/${org}?alertsPage=0&invoicesPage=x&ledgerCursor=abc&keysCursor=1&limitsCursor=${encodeURIComponent('user 1')}&limitsPage=2&grantsPage=2`,
    );
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    const findings = [...res.body.matchAll(/<li><code>([^<]+)<\/code>: ([^<]+)<\/li>/g)].map((m) => [m[1], m[2]]);
    expect(findings).toEqual([
      ['alertsPage', 'must be a page number: 1, 2, 3…'],
      ['invoicesPage', 'must be a page number: 1, 2, 3…'],
      ['ledgerCursor', 'must be a cursor from this page'],
      ['limitsCursor', 'must be a cursor from this page'],
      ['keysCursor', 'must be a cursor from this page'],
      ['limitsPage', 'is not a parameter of this endpoint'],
    ]);
    expect(res.body).toContain('DL_BILLING_REQUEST_INVALID');
  });
});
