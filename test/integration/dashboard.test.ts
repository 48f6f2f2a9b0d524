import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startApp, type Harness } from '../support/app';

const MIN = 60_000;
const T0 = new Date('2032-05-06T09:00:00.000Z');

/** The dashboard in a real headless Chromium: sign in with a key, then the charts show the reports' numbers. */
describe('admin dashboard in a browser', () => {
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
    for (const [day, minutes] of [[0, 30], [1, 90]] as const) {
      for (const [n, accountId] of accounts.entries()) {
        const runtimeId = `rt_dash_${day}_${n}`;
        const start = new Date(T0.getTime() + day * 86_400_000);
        clock.set(start);
        const reserved = await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, userId: 'u1', ...SMALL, minutes: 240 } });
        expect(reserved.status).toBe(201);
        await h.request('POST', '/v1/events', {
          key: cp,
          body: [
            lifecycle(accountId, runtimeId, 'runtime.started', start, 1),
            lifecycle(accountId, runtimeId, 'runtime.terminated', new Date(start.getTime() + minutes * (n + 1) * MIN), 2, { reason: 'user' }),
          ],
        });
      }
    }
    team = await fundedAccount(h, admin, { plan: 'team', kind: 'organization' });
    await h.ds.query(
      `INSERT INTO account_members (account_id, user_id, active, changed_at, change_id) SELECT $1, 'm' || i, true, now(), 'c' || i FROM generate_series(1, 4) i`,
      [team],
    );
    await h.ds.query(`INSERT INTO stripe_subscriptions (account_id, customer_id, subscription_id, status, seat_quantity) VALUES ($1, 'cus_dash', 'sub_dash', 'active', 3)`, [team]);
    clock.set(new Date(T0.getTime() + 2 * 86_400_000));
    await h.app.listen(0, '127.0.0.1');
    base = (await h.app.getUrl()).replace('[::1]', '127.0.0.1');
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('refuses a wrong key, signs in with an admin key, and draws the reports with data', async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 1600 } });
    const browserPage = await context.newPage();
    await browserPage.goto(`${base}/admin`);
    expect(new URL(browserPage.url()).pathname).toBe('/admin/login');

    await browserPage.fill('input[name=key]', 'dlb_not_a_key');
    await browserPage.click('button[type=submit]');
    await expect.poll(() => browserPage.textContent('.error')).toContain('Unknown or revoked API key');

    await browserPage.fill('input[name=key]', admin);
    await browserPage.click('button[type=submit]');
    await browserPage.waitForSelector('#chart-credits');
    expect(new URL(browserPage.url()).pathname).toBe('/admin');

    // The session cookie is HttpOnly and does not hold the key.
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'dl_admin_session', httpOnly: true, sameSite: 'Strict' });
    expect(cookie!.value).not.toContain(admin);
    expect(await browserPage.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie)).toBe('');

    const bars = (chart: string) =>
      browserPage.$$eval(`#${chart} rect.bar`, (rects) =>
        rects.map((r) => ({ series: r.getAttribute('data-series'), label: r.getAttribute('data-label'), value: Number(r.getAttribute('data-value')), height: r.getBoundingClientRect().height })),
      );
    const period = 'from=2032-05-01T00:00:00Z&to=2032-06-01T00:00:00Z';

    // Credits per day: consumed bars equal the JSON report's consumption per day, and have height.
    const credits = (await h.request('GET', `/v1/reports/credits?${period}&groupBy=day`, { key: admin })).body;
    const consumed = (await bars('chart-credits')).filter((b) => b.series === 'consumed');
    expect(consumed.map((b) => [b.label, b.value])).toEqual(credits.items.map((i: { day: string; consumed: string }) => [i.day, Number(i.consumed)]));
    expect(consumed.filter((b) => b.value > 0).length).toBe(2);
    for (const b of consumed.filter((x) => x.value > 0)) expect(b.height).toBeGreaterThan(0);
    expect(await browserPage.textContent('[data-total=consumed]')).toBe(credits.totals.consumed);

    // Top accounts: the same order and numbers as the top-consumers report.
    const top = (await h.request('GET', `/v1/reports/top-consumers?${period}`, { key: admin })).body;
    const topBars = await bars('chart-top');
    expect(topBars.map((b) => [b.label, b.value])).toEqual(top.items.map((i: { account: string; credits: string }) => [i.account, Number(i.credits)]));
    expect(topBars).toHaveLength(2);
    expect(topBars[0]!.height).toBeGreaterThan(topBars[1]!.height);
    expect(topBars[1]!.height).toBeGreaterThan(0);

    // Seats vs Stripe: 4 active seats, quantity 3 (other files' Team accounts share the database: this one's bars).
    const seatBars = (await bars('chart-seats')).filter((b) => b.label === team);
    expect(seatBars.map((b) => [b.series, b.value])).toEqual([['active seats', 4], ['Stripe quantity', 3]]);

    const dir = mkdtempSync(join(tmpdir(), 'dashboard-'));
    const file = join(dir, 'dashboard.png');
    await browserPage.screenshot({ path: file, fullPage: true });
    expect(statSync(file).size).toBeGreaterThan(10_000);
    console.log(`dashboard screenshot: ${file}`);

    // The CSV link works in the signed-in browser; signing out ends the session.
    const href = await browserPage.getAttribute('#credits a.csv', 'href');
    const csv = await (await context.request.get(`${base}${href}`)).text();
    expect(csv.split('\r\n')[0]).toBe('day,granted,topUps,clawedBack,consumed,refunded,expired,net');
    await browserPage.click('header form button');
    await browserPage.waitForURL(/\/admin\/login$/);
    await browserPage.goto(`${base}/admin`);
    expect(new URL(browserPage.url()).pathname).toBe('/admin/login');
    await context.close();
  });

  it('refuses a key without the admin or reports scope', async () => {
    const cp = await h.key('control-plane');
    const res = await h.app.inject({ method: 'POST', url: '/admin/login', payload: `key=${encodeURIComponent(cp)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.statusCode).toBe(401);
    expect(res.body).toContain('neither the admin nor the reports scope');
    expect(res.headers['set-cookie']).toBeUndefined();
    const forged = await h.app.inject({ method: 'GET', url: '/admin', headers: { cookie: `dl_admin_session=key_bootstrap_admin.99999999999999.${'A'.repeat(43)}` } });
    expect(forged.statusCode).toBe(303);
  });
});
