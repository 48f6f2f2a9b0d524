import { statSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startApp, type Harness } from '../support/app';
import { launchChromium, screenshots, SCREENSHOTS } from '../support/browser';

const MIN = 60_000;
const T0 = new Date('2032-05-06T09:00:00.000Z');

/** The reports page in a real headless Chromium: sign in with a key, then the charts show the reports' numbers. */
describe('admin reports in a browser', () => {
  let h: Harness;
  let browser: Browser;
  let base: string;
  let admin: string;
  let team: string;
  const clock = new ManualClock(T0);

  beforeAll(async () => {
    h = await startApp({ clock });
    admin = await h.key('admin');
    const cp = await h.key('control-plane');
    const accounts = [await fundedAccount(h, admin, { credits: '100.000000' }), await fundedAccount(h, admin, { credits: '100.000000' })];
    // Runtimes on two days, of different lengths per account.
    for (const [day, minutes] of [
      [0, 30],
      [1, 90],
    ] as const) {
      for (const [n, accountId] of accounts.entries()) {
        const runtimeId = `rt_dash_${day}_${n}`;
        const start = new Date(T0.getTime() + day * 86_400_000);
        clock.set(start);
        const reserved = await h.request('POST', '/v1/reservations', {
          key: cp,
          body: { accountId, runtimeId, userId: 'u1', ...SMALL, minutes: 240 },
        });
        expect(reserved.status).toBe(201);
        await h.request('POST', '/v1/events', {
          key: cp,
          body: [
            lifecycle(accountId, runtimeId, 'runtime.started', start, 1),
            lifecycle(accountId, runtimeId, 'runtime.terminated', new Date(start.getTime() + minutes * (n + 1) * MIN), 2, {
              reason: 'user',
            }),
          ],
        });
      }
    }
    team = await fundedAccount(h, admin, { plan: 'team', kind: 'organization' });
    await h.ds.query(
      `INSERT INTO account_members (account_id, user_id, active, changed_at, change_id) SELECT $1, 'm' || i, true, now(), 'c' || i FROM generate_series(1, 4) i`,
      [team],
    );
    await h.ds.query(
      `INSERT INTO stripe_subscriptions (account_id, customer_id, subscription_id, status, seat_quantity) VALUES ($1, 'cus_dash', 'sub_dash', 'active', 3)`,
      [team],
    );
    clock.set(new Date(T0.getTime() + 2 * 86_400_000));
    base = await h.listen();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('refuses a wrong key, signs in with an admin key, and draws the reports with data', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const browserPage = await context.newPage();
    await browserPage.goto(`${base}/admin`);
    expect(new URL(browserPage.url()).pathname).toBe('/admin/login');

    await browserPage.fill('input[name=key]', 'dlb_not_a_key');
    await browserPage.click('button[type=submit]');
    await expect.poll(() => browserPage.textContent('.error')).toContain('Unknown or revoked API key');
    const login = await screenshots(browserPage, 'login');
    expect(login.overflow).toEqual({ 1400: 0, 420: 0 });
    expect(login.unlabelled).toEqual([]);

    await browserPage.fill('input[name=key]', admin);
    await browserPage.click('button[type=submit]');
    await browserPage.waitForURL(/\/admin\/accounts$/);

    // The session cookie is HttpOnly, SameSite=Strict and does not hold the key.
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'dl_admin_session', httpOnly: true, sameSite: 'Strict' });
    expect(cookie!.value).not.toContain(admin);
    expect(await browserPage.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie)).toBe('');

    await browserPage.click('nav >> text=Reports');
    await browserPage.waitForSelector('#chart-credits');
    const bars = (chart: string) =>
      browserPage.$$eval(`#${chart} .bar`, (els) =>
        els.map((r) => ({
          series: r.getAttribute('data-series'),
          label: r.getAttribute('data-label'),
          value: Number(r.getAttribute('data-value')),
          height: r.getBoundingClientRect().height,
        })),
      );
    const period = 'from=2032-05-01T00:00:00Z&to=2032-06-01T00:00:00Z';

    // Credits per day: consumed bars equal the JSON report's consumption per day, and have height.
    const credits = (await h.request('GET', `/v1/reports/credits?${period}&groupBy=day`, { key: admin })).body;
    const consumed = (await bars('chart-credits')).filter((b) => b.series === 'consumed');
    expect(consumed.map((b) => [b.label, b.value])).toEqual(
      credits.items.map((i: { day: string; consumed: string }) => [i.day, Number(i.consumed)]),
    );
    expect(consumed.filter((b) => b.value > 0).length).toBe(2);
    for (const b of consumed.filter((x) => x.value > 0)) expect(b.height).toBeGreaterThan(0);
    // Totals in credits, readable: 0.5 + 1 + 1.5 + 3 = 6 credits consumed.
    expect(credits.totals.consumed).toBe('6.000000');
    expect(await browserPage.textContent('[data-total=consumed]')).toBe('6.00');
    // And in dollars, at the catalog's 30 cents a credit: 6 credits are $1.80, 200 granted $60.00.
    expect(await browserPage.textContent('[data-dollars=consumed]')).toBe('$1.80');
    expect(await browserPage.textContent('[data-dollars=granted]')).toBe('$60.00');
    expect(await browserPage.textContent('[data-credit-value]')).toContain('1 credit = $0.30');
    expect(await browserPage.locator('#table-comparison tr', { hasText: 'Consumed' }).locator('td[data-col=now]').textContent()).toBe(
      '6.00 · $1.80',
    );

    // Top accounts: the same order and numbers as the top-consumers report.
    const top = (await h.request('GET', `/v1/reports/top-consumers?${period}`, { key: admin })).body;
    const topBars = await bars('chart-top');
    expect(topBars.map((b) => [b.label, b.value])).toEqual(
      top.items.map((i: { account: string; credits: string }) => [i.account, Number(i.credits)]),
    );
    expect(topBars).toHaveLength(2);
    expect(topBars[0]!.height).toBeGreaterThan(topBars[1]!.height);
    expect(topBars[1]!.height).toBeGreaterThan(0);

    // Seats vs Stripe: 4 active seats, quantity 3; the table shows labels and dollars, not camelCase and cents.
    const seatBars = (await bars('chart-seats')).filter((b) => b.label === team);
    expect(seatBars.map((b) => [b.series, b.value])).toEqual([
      ['active seats', 4],
      ['Stripe quantity', 3],
    ]);
    const seatHead = await browserPage.$$eval('#table-seats th', (ths) => ths.map((t) => t.textContent));
    expect(seatHead).toContain('Expected MRR');
    expect(seatHead.join(' ')).not.toMatch(/Cents/);
    const teamRow = browserPage.locator('#table-seats tr', { hasText: team });
    expect(await teamRow.locator('td[data-col=expectedMrrCents]').textContent()).toBe('$109.00');

    // Period over period: the month before had nothing; size-class trends have the small class.
    expect(await browserPage.locator('#table-comparison tr', { hasText: 'Consumed' }).textContent()).toContain('new');
    expect(await browserPage.$$eval('#chart-classes .bar', (els) => els.map((e) => e.getAttribute('data-series')))).toContain('small');

    // The charts follow the width: at 420 px the credits chart is narrower than at 1400 px, and nothing scrolls sideways.
    const wide = (await browserPage.locator('#chart-credits').boundingBox())!.width;
    const shots = await screenshots(browserPage, 'reports');
    await browserPage.setViewportSize({ width: 420, height: 900 });
    const narrow = (await browserPage.locator('#chart-credits').boundingBox())!.width;
    expect(narrow).toBeLessThan(400);
    expect(wide).toBeGreaterThan(1000);
    expect(shots.overflow).toEqual({ 1400: 0, 420: 0 });
    expect(shots.stackedWiderThanCard).toEqual([]);
    expect(shots.widerThanCardOnLaptop).toEqual([]);
    expect(shots.unlabelled).toEqual([]);
    for (const f of shots.files) expect(statSync(f).size).toBeGreaterThan(10_000);
    console.log(`admin console screenshots: ${SCREENSHOTS}`);

    // The CSV link works in the signed-in browser.
    const href = await browserPage.getAttribute('#credits a.csv', 'href');
    const csv = await (await context.request.get(`${base}${href}`)).text();
    expect(csv.split('\r\n')[0]).toBe('day,granted,topUps,clawedBack,consumed,refunded,expired,net');

    // A bad period is a 400 page naming each finding (not a 500), as the JSON API answers 400.
    for (const [query, fields] of [
      ['from=garbage', ['from']],
      ['from=2032-05-02T00:00:00Z&to=2032-05-01T00:00:00Z', ['to']],
      ['from=2032-05-01T00:30:00Z&to=2032-05-02T00:00:00Z', ['from']],
    ] as const) {
      const res = await browserPage.goto(`${base}/admin?${query}`);
      expect(res!.status()).toBe(400);
      expect(res!.headers()['content-type']).toContain('text/html');
      const findings = await browserPage.$$eval('.problem li code', (els) => els.map((e) => e.textContent));
      expect(findings).toEqual(fields);
      expect(await browserPage.textContent('.problem')).toContain('DL_BILLING_REQUEST_INVALID');
      expect((await h.request('GET', `/v1/reports/usage?${query}`, { key: admin })).status).toBe(400);
    }
    await screenshots(browserPage, 'bad-period');

    // Signing out ends the session.
    await browserPage.goto(`${base}/admin`);
    await browserPage.click('header form button');
    await browserPage.waitForURL(/\/admin\/login$/);
    await browserPage.goto(`${base}/admin`);
    expect(new URL(browserPage.url()).pathname).toBe('/admin/login');
    await context.close();
  });

  it('refuses a key without the admin or reports scope', async () => {
    const cp = await h.key('control-plane');
    const res = await h.app.inject({
      method: 'POST',
      url: '/admin/login',
      payload: `key=${encodeURIComponent(cp)}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(401);
    expect(res.body).toContain('neither the admin nor the reports scope');
    expect(res.headers['set-cookie']).toBeUndefined();
    const forged = await h.app.inject({
      method: 'GET',
      url: '/admin',
      headers: { cookie: `dl_admin_session=key_bootstrap_admin.99999999999999.${'A'.repeat(43)}` },
    });
    expect(forged.statusCode).toBe(303);
  });
});
