import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, uid, type Harness } from '../support/app';

// A month of its own in the shared test database.
const PERIOD = 'from=2041-03-01T00:00:00Z&to=2041-04-01T00:00:00Z';

/** The rows of one table of a console page: the value of one column in each. */
function column(html: string, table: string, col: string): string[] {
  const start = html.indexOf(`<table id="${table}"`);
  const body = html.slice(start, html.indexOf('</table>', start));
  return [...body.matchAll(new RegExp(`<td[^>]* data-col="${col}"[^>]*>([^<]*)</td>`, 'g'))].map((m) => m[1]!);
}

/** The reports page shows a long table a page at a time, says how many rows there are, and links to the rest and to the CSV. */
describe('admin reports page: long tables paged', () => {
  let h: Harness;
  let admin: string;
  let cookie: string;
  const tag = uid('pg');
  const accounts = Array.from({ length: 450 }, (_, i) => `${tag}_${String(i).padStart(3, '0')}`);

  beforeAll(async () => {
    h = await startApp();
    admin = await h.key('admin');
    cookie = await h.consoleSession(admin);
    // 450 seat discrepancies found in the month, one a minute.
    await h.ds.query(
      `INSERT INTO stripe_seat_discrepancies (kind, account_id, subscription_id, stripe_quantity, active_seats, detected_at)
       SELECT 'quantity_drift', a, 'sub_' || a, 3, 2, '2041-03-02T00:00:00Z'::timestamptz + n * interval '1 minute'
       FROM unnest($1::text[]) WITH ORDINALITY AS t(a, n)`,
      [accounts],
    );
  });
  afterAll(() => h.close());

  const page = (query: string) => h.app.inject({ method: 'GET', url: `/admin?${query}`, headers: { cookie } });

  it('shows every row over its pages, says which rows of how many, and links to the next page and the CSV', async () => {
    const all = (await h.request('GET', `/v1/reports/reconciliation?${PERIOD}`, { key: admin })).body.items as { account: string }[];
    expect(all.length).toBeGreaterThanOrEqual(450);
    const seen: string[] = [];
    let url: string | undefined = `/admin?${PERIOD}`;
    const pages: string[] = [];
    while (url) {
      const res: { statusCode: number; body: string } = await h.app.inject({ method: 'GET', url, headers: { cookie } });
      expect(res.statusCode).toBe(200);
      const rows = column(res.body, 'table-reconciliation', 'account');
      expect(rows.length).toBeLessThanOrEqual(200);
      seen.push(...rows);
      const said = new RegExp('<span data-rows="table-reconciliation">([^<]*)</span>').exec(res.body)?.[1];
      pages.push(said!);
      const next: string | undefined = /<nav class="pager" aria-label="Seat discrepancies[^"]*">.*?<a href="([^"]+)" rel="next">/.exec(
        res.body,
      )?.[1];
      url = next?.replace(/&amp;/g, '&');
      // Every page links to all the rows at once.
      expect(res.body).toMatch(
        /<a href="\/admin\/reports\/reconciliation\.csv\?from=2041-03-01T00%3A00%3A00\.000Z&amp;to=2041-04-01T00%3A00%3A00\.000Z">Every row: CSV/,
      );
    }
    const total = all.length.toLocaleString('en-US');
    const last = Math.ceil(all.length / 200);
    expect(pages[0]).toBe(`Rows 1–200 of ${total} (page 1 of ${last})`);
    expect(pages[1]).toBe(`Rows 201–400 of ${total} (page 2 of ${last})`);
    expect(pages.length).toBe(last);
    // Each row once, in the report's order: none dropped, none twice.
    expect(seen).toEqual(all.map((r) => r.account));
    // A page past the last shows the last; the other tables stay on their first page.
    const past = await page(`${PERIOD}&reconciliationPage=99`);
    expect(past.statusCode).toBe(200);
    expect(past.body).toContain(`(page ${last} of ${last})`);
  });

  it('refuses a page that is not a number with a 400 page keeping the period typed, escaped, each finding beside its field', async () => {
    const typed = '2041-03-01T00:30:00Z"><script>alert(1)</script>';
    const res = await page(`from=${encodeURIComponent(typed)}&to=2041-04-01T00:00:00Z&usagePage=0&spendPage=x`);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).not.toContain('<script>');
    expect(res.body).toContain(`value="2041-03-01T00:30:00Z&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"`);
    const findings = [...res.body.matchAll(/<li><code>([^<]+)<\/code>: ([^<]+)<\/li>/g)].map((m) => m[1]);
    expect(findings).toEqual(['usagePage', 'spendPage', 'from']);
    expect(res.body).toMatch(/<input id="from" name="from" size="24" aria-invalid="true" autofocus aria-describedby="from-finding"/);
    expect(res.body).toMatch(/<p class="finding" id="from-finding">[^<]+<\/p>/);
  });
});
