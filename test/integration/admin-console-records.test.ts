import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeysService } from '../../src/accounts/auth/api-keys.service';
import { credits } from '../../src/admin/render';
import { formatCredits, parseCredits } from '../../src/common/money';
import { ManualClock } from '../../src/infra/clock/clock';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';
import { launchChromium, screenshots, signInToConsole } from '../support/browser';
import { StripeFake } from '../support/stripe-fake';

// A month of its own in the run's database (the other console tests read February 2034 and May 2032).
const T0 = new Date('2034-05-09T09:00:00.000Z');
const MAY = 'from=2034-05-01T00:00:00Z&to=2034-06-01T00:00:00Z';
const JUNE = 'from=2034-06-01T00:00:00Z&to=2034-07-01T00:00:00Z';
const SECRET = 'whsec_admin_console_records';
/** The catalog's Stripe prices, so the fake's invoices and checkouts carry real amounts. */
const PRICES = { price_team_base_placeholder: 4900, price_team_seat_placeholder: 1500, price_topup_100_placeholder: 3000 };

type Shots = Awaited<ReturnType<typeof screenshots>>;
function fits(shots: Shots): void {
  expect(shots.overflow).toEqual({ 1400: 0, 420: 0 });
  expect(shots.unlabelled).toEqual([]);
  expect(shots.stackedWiderThanCard).toEqual([]);
  expect(shots.widerThanCardOnLaptop).toEqual([]);
}

/**
 * The console's records as support and finance read them, in a real Chromium: every filter of the
 * accounts list, a Team account's members, seats, subscription, invoices and top-ups in dollars, a
 * wallet in burn order, the ledger and audit trail paged, alerts with the limit they fired under (on
 * the account page and in the reports), seats that follow the period; then actions by keyboard,
 * errors as the API's, and every action refused to a reports key and to a forged POST.
 */
describe('admin console in a browser: records and every action guarded', () => {
  let h: Harness;
  let fake: StripeFake;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let admin: string;
  let subscriptionId: string;
  let entKeyId: string;
  const clock = new ManualClock(T0);
  const tag = uid('nw');
  // Team: three members, a paid invoice, then a failed one (past due), a top-up. Its id sorts early: the
  // reports page shows the run's shared database's Team accounts 200 a page, and the test reads the first.
  const org = `aa_${tag}_org`;
  const held = `${tag}_held`; // Enterprise, suspended
  const ent = `${tag}_ent`; // Enterprise: grants with expiries, a ledger longer than a page, two alerts at one instant
  const orgName = `Northwind ${uid('labs')}`;
  const runtime = `${tag}_rt`;
  const gpuAccount = uid('gpu');
  const gpuRuntime = uid('rt');
  let gpuRate: string;

  const deliver = async (event: object) => {
    const payload = JSON.stringify(event);
    const res = await h.request('POST', '/v1/stripe/webhooks', {
      body: payload,
      headers: { 'stripe-signature': StripeFake.sign(payload, SECRET), 'content-type': 'application/json' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  };
  const ok = async (res: Promise<{ status: number; body: unknown }>) => {
    const r = await res;
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    return r.body as Record<string, unknown>;
  };
  const grant = (accountId: string, credits: string, reason: string, expiresAt?: string) =>
    ok(
      h.request('POST', `/v1/admin/accounts/${accountId}/grants`, {
        key: admin,
        body: { credits, reason, ...(expiresAt ? { expiresAt } : {}) },
        headers: { 'idempotency-key': uid('grant') },
      }),
    );
  const signIn = () => signInToConsole(page, base, admin);
  const column = (table: string, col: string) =>
    page.$$eval(`#${table} tbody td[data-col=${col}]`, (tds) => tds.map((t) => t.textContent ?? ''));
  const search = async (fields: { q?: string; plan?: string; checks?: string[] }) => {
    await page.goto(`${base}/admin/accounts`);
    await page.fill('#q', fields.q ?? '');
    if (fields.plan) await page.selectOption('#plan', fields.plan);
    for (const c of fields.checks ?? []) await page.check(`#f-${c}`);
    await Promise.all([page.waitForURL(/\?/), page.click('form[role=search] button[type=submit]')]);
    return (await column('table-accounts', 'id')).sort();
  };

  beforeAll(async () => {
    fake = await new StripeFake(PRICES).start();
    h = await startApp({ clock, env: fake.env(SECRET) });
    admin = await h.key('admin');
    const cp = await h.key('control-plane');

    // A Team organization with three members and its subscription; one paid invoice, then a failed one.
    await ok(h.request('POST', '/v1/accounts', { key: admin, body: { id: org, kind: 'organization', plan: 'team', name: orgName } }));
    for (const user of ['u1', 'u2', 'u3']) await ok(h.request('PUT', `/v1/accounts/${org}/members/${user}`, { key: admin }));
    subscriptionId = (
      (await ok(h.request('POST', `/v1/admin/accounts/${org}/subscription`, { key: admin }))).subscription as { id: string }
    ).id;
    await deliver(fake.emit('invoice.paid', fake.invoice(subscriptionId)));
    await deliver(fake.emit('invoice.payment_failed', fake.invoice(subscriptionId)));
    // A top-up of 100 credits, paid $30.00 through Checkout (now, by the service's clock: a top-up is dated when paid).
    const started = await ok(h.request('POST', `/v1/accounts/${org}/top-ups`, { key: admin, body: { pack: 'credits-100' } }));
    await deliver(fake.emit('checkout.session.completed', fake.pay(String(started.sessionId)), clock.now().getTime() / 1000));

    await fundedAccount(h, admin, { id: held, credits: '5.000000' });
    await ok(h.request('PUT', `/v1/admin/accounts/${held}/suspension`, { key: admin, body: { suspended: true, reason: 'chargeback' } }));

    // Grants: 10 never expiring, 3 expiring in June, 2 in May, and 24 more of 0.1 (a ledger longer than a page).
    await fundedAccount(h, admin, { id: ent, credits: '10.000000' });
    await grant(ent, '3.000000', 'June promotion', '2034-06-30T00:00:00Z');
    await grant(ent, '2.000000', 'May promotion', '2034-05-20T00:00:00Z');
    for (let i = 0; i < 24; i++) await grant(ent, '0.100000', `batch ${i}`);
    // A limit of 2 credits alerting at 50 and 75 %: one 96-minute hold (1.6 credits) crosses both at one instant.
    await ok(h.request('PUT', `/v1/accounts/${ent}/spend-limit`, { key: admin, body: { credits: '2.000000', thresholds: [50, 75] } }));
    await ok(
      h.request('POST', '/v1/reservations', {
        key: cp,
        body: { accountId: ent, runtimeId: runtime, userId: 'ada', ...SMALL, minutes: 96 },
      }),
    );
    await ok(h.request('PUT', `/v1/accounts/${ent}/spend-limit`, { key: admin, body: { credits: '10.000000', thresholds: [50, 75] } }));
    // A GPU runtime (gpu-small with a T4) that ran 30 minutes: the trends by size class and GPU type.
    await fundedAccount(h, admin, { id: gpuAccount, credits: '100.000000' });
    const gpuEnvironment = {
      apiVersion: 'environments.datalayer.io/v1alpha1',
      kind: 'Environment',
      metadata: { name: 'torch-gpu' },
      spec: {
        base: { ref: 'datalayer/python-cuda:2026.09' },
        resources: { sizeClass: 'gpu-small', accelerator: { type: 'T4', count: 1, cuda: '12.8' } },
        compatibility: { variants: { required: ['modal'] } },
      },
    };
    gpuRate = String(
      (
        await ok(
          h.request('POST', '/v1/reservations', {
            key: cp,
            body: { accountId: gpuAccount, runtimeId: gpuRuntime, variant: 'modal', environment: gpuEnvironment, minutes: 60 },
          }),
        )
      ).ratePerHour,
    );
    await ok(
      h.request('POST', '/v1/events', {
        key: cp,
        body: [
          lifecycle(gpuAccount, gpuRuntime, 'runtime.started', T0, 1),
          lifecycle(gpuAccount, gpuRuntime, 'runtime.terminated', new Date(T0.getTime() + 30 * 60_000), 2, { reason: 'user' }),
        ],
      }),
    );
    entKeyId = String(
      (await ok(h.request('POST', '/v1/admin/api-keys', { key: admin, body: { scopes: [`account:${ent}`], name: 'ent app' } }))).id,
    );

    clock.set(new Date(T0.getTime() + 10 * 60_000));
    base = await h.listen();
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    page = await context.newPage();
    await signIn();
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await h?.close();
    await fake?.stop();
  });

  it('finds an account by its name, and filters by plan, suspended and past due', async () => {
    // The name alone (a space never appears in an id).
    expect(await search({ q: orgName })).toEqual([org]);
    expect(await search({ q: tag })).toEqual([ent, held, org].sort());
    expect(await search({ q: tag, plan: 'team' })).toEqual([org]);
    expect(await search({ q: tag, plan: 'enterprise' })).toEqual([ent, held].sort());
    expect(await search({ q: tag, checks: ['suspended'] })).toEqual([held]);
    expect(await search({ q: tag, checks: ['pastDue'] })).toEqual([org]);
    expect(await page.textContent(`#table-accounts tr:has-text("${org}") td[data-col=status]`)).toContain('past_due');
    expect(await search({ q: tag, plan: 'team', checks: ['suspended'] })).toEqual([]);
    expect(await page.textContent('#table-accounts')).toContain('No account matches.');
  });

  it("shows a Team account's members and seats, its Stripe subscription, invoices and top-ups in dollars, and its statement", async () => {
    await page.goto(`${base}/admin/accounts/${org}`);
    expect(await page.textContent('#summary h2')).toContain('Stripe past_due');
    expect(await page.textContent('#members p')).toBe('3 active seats.');
    expect(await column('table-members', 'userId')).toEqual(['u1', 'u2', 'u3']);
    expect(await page.textContent('#stripe dl')).toContain(subscriptionId);
    expect(await page.textContent('#stripe dl')).toContain('past_due');
    // The paid invoice: the base fee and three seats, $49 + 3 × $15.
    expect(await column('table-invoices', 'amountCents')).toContain('$94.00');
    expect(await column('table-invoices', 'status')).toContain('paid');
    expect(await column('table-topups', 'pack')).toEqual(['credits-100']);
    expect(await column('table-topups', 'credits')).toEqual(['100.00']);
    expect(await column('table-topups', 'amountCents')).toEqual(['$30.00']);
    expect(await column('table-grants', 'source')).toContain('Top-up');
    fits(await screenshots(page, 'account-team'));

    await Promise.all([page.waitForURL(/\/statements\/2034-05$/), page.click('a[data-link=statement]')]);
    expect(await page.textContent('#statement h2')).toContain(orgName);
    expect(await page.textContent('#statement')).toContain('$30.00');
    fits(await screenshots(page, 'statement'));
  });

  it('shows the wallet in burn order with expiries, quotas with their reset, and pages the ledger and the audit trail', async () => {
    await page.goto(`${base}/admin/accounts/${ent}`);
    const expiries = await column('table-grants', 'expiresAt');
    expect(expiries.slice(0, 2)).toEqual(['2034-05-20 00:00 UTC', '2034-06-30 00:00 UTC']);
    expect(new Set(expiries.slice(2))).toEqual(new Set(['never']));
    expect(expiries).toHaveLength(27);
    expect(await page.textContent('#table-quotas tr:has-text("Runs") td[data-col=resetsAt]')).toBe('2034-06-01 00:00 UTC');
    // A live reservation whose runtime has not started: its hold, no running time yet.
    const reserved = page.locator(`#table-runtimes tr:has-text("${runtime}")`);
    expect(await reserved.locator('td[data-col=status]').textContent()).toBe('reserved');
    expect(await reserved.locator('td[data-col=reserved]').textContent()).toBe('1.60');
    expect(await reserved.locator('td[data-col=runningSeconds]').textContent()).toBe('0 s');

    // 28 ledger entries (27 grants and the hold): 25 on the first page, the 3 oldest on the next.
    expect(await page.locator('#table-ledger tbody tr').count()).toBe(25);
    expect((await column('table-ledger', 'explanation'))[0]).toContain(`Reserved 1.6`);
    await Promise.all([page.waitForURL(/ledgerCursor=/), page.click('#ledger a:has-text("Older entries")')]);
    const older = await column('table-ledger', 'explanation');
    expect(older).toHaveLength(3);
    expect(older[2]).toContain('10.000000 credits, not expiring — test funds');
    expect(await page.textContent('#ledger .pager')).toContain('No older entries.');
    await Promise.all([page.waitForURL(/\/admin\/accounts\/[^?]+$/), page.click('#ledger a:has-text("Newest")')]);

    // The audit trail (account, 27 grants, 2 limits, the hold, the key): older rows on the next page, ending with the account's creation.
    await Promise.all([page.waitForURL(/auditCursor=/), page.click('#audit a:has-text("Older entries")')]);
    const actions = await column('table-audit', 'action');
    expect(actions[actions.length - 1]).toBe('account.created');
    expect(await page.textContent('#audit .pager')).toContain('No older entries.');
  });

  it('shows alerts raised at one instant in the same order every time, each with the limit it fired under, here and in the reports', async () => {
    for (let i = 0; i < 3; i++) {
      await page.goto(`${base}/admin/accounts/${ent}`);
      expect(await column('table-alerts', 'kind')).toEqual(['50 % crossed', '75 % crossed']);
      expect(await column('table-alerts', 'limitAtTheTime')).toEqual(['2.00', '2.00']);
    }
    expect(await column('table-limits', 'credits')).toEqual(['10.00']);

    const rowsOf = () =>
      page.$$eval(
        '#table-spend tbody tr',
        (trs, account) =>
          trs
            .filter((tr) => tr.querySelector('td[data-col=account]')?.textContent === account)
            .map((tr) => ['threshold', 'spent', 'limit'].map((c) => tr.querySelector(`td[data-col=${c}]`)!.textContent)),
        ent,
      );
    for (let i = 0; i < 3; i++) {
      await page.goto(`${base}/admin?${MAY}`);
      expect(await rowsOf()).toEqual([
        ['50', '1.60', '2.00'],
        ['75', '1.60', '2.00'],
      ]);
    }
    // The credit totals in dollars too, at 30 cents a credit, as the JSON report counts them.
    const report = (await h.request('GET', `/v1/reports/credits?${MAY}`, { key: admin })).body;
    const cents = (credits: string) => Math.round(Number(credits) * 30);
    expect(await page.textContent('[data-dollars=granted]')).toBe(`$${(cents(report.totals.granted) / 100).toFixed(2)}`);
    expect(await page.textContent('[data-dollars=topUps]')).toBe(`$${(cents(report.totals.topUps) / 100).toFixed(2)}`);
    // Trends: the GPU runtime's half hour, under its size class and GPU type, in the chart and the table.
    expect(await page.$$eval('#chart-classes .bar', (bars) => bars.map((b) => b.getAttribute('data-series')))).toContain('gpu-small · T4');
    const gpuRow = page.locator('#table-classes tr', { hasText: 'T4' });
    expect(await gpuRow.locator('td[data-col=sizeClass]').textContent()).toBe('gpu-small');
    expect(await gpuRow.locator('td[data-col=day]').textContent()).toBe('2034-05-09');
    expect(await gpuRow.locator('td[data-col=seconds]').textContent()).toBe('30 min 00 s');
    expect(await gpuRow.locator('td[data-col=credits]').textContent()).toBe(credits(formatCredits(parseCredits(gpuRate)! / 2n)));
    fits(await screenshots(page, 'reports-may'));
  });

  it('acts by keyboard alone: a grant with an expiry, confirmed with Enter', async () => {
    await page.goto(`${base}/admin/accounts/${ent}`);
    await page.focus('summary:has-text("Grant credits")');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    await page.keyboard.type('5');
    await page.keyboard.press('Tab');
    await page.keyboard.type('keyboard goodwill');
    await page.keyboard.press('Tab');
    await page.keyboard.type('2034-05-15T00:00:00Z');
    await Promise.all([page.waitForSelector('#confirm'), page.keyboard.press('Enter')]);
    expect(await page.textContent('#confirm p')).toMatch(
      /^Grant 5\.00 credits to .+, expiring 2034-05-15T00:00:00(\.000)?Z, because: keyboard goodwill$/,
    );
    fits(await screenshots(page, 'confirm'));
    // The confirmation button has the focus: Enter confirms.
    expect(
      await page.evaluate(
        () => (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document.activeElement.textContent,
      ),
    ).toBe('Grant');
    await Promise.all([page.waitForURL(/done=/), page.keyboard.press('Enter')]);
    expect(await page.textContent('.flash')).toBe('Granted 5.00 credits.');
    // It burns first: the earliest expiry.
    expect((await column('table-grants', 'expiresAt'))[0]).toBe('2034-05-15 00:00 UTC');
    expect((await column('table-grants', 'remaining'))[0]).toBe('5.00');
  });

  it('changes the plan of an account, confirmed and audited', async () => {
    await page.goto(`${base}/admin/accounts/${held}`);
    await page.click('summary:has-text("Change plan or Enterprise overrides")');
    await page.selectOption('#plan-plan', 'free');
    await Promise.all([page.waitForSelector('#confirm'), page.click('button:has-text("Change plan…")')]);
    expect(await page.textContent('#confirm p')).toBe(`Change ${held} from enterprise to free without overrides`);
    await Promise.all([page.waitForURL(/done=/), page.click('#confirm button[type=submit]')]);
    expect(await page.textContent('.flash')).toBe('Plan set to free.');
    expect(await page.textContent('#plan dl')).toContain('free');
    const [row] = await h.ds.query(`SELECT actor, before, after FROM audit_log WHERE account_id = $1 AND action = 'plan.changed'`, [held]);
    expect(row).toMatchObject({ before: { plan: 'enterprise' }, after: { plan: 'free' } });
    expect(row.actor).toBe(`key:${(await h.app.get(ApiKeysService).authenticate(admin))!.keyId}`);
    expect(await page.$$eval('#table-audit td[data-col=action]', (tds) => tds.map((t) => t.textContent))).toContain('plan.changed');
  });

  it("refuses a bad request with the API's own findings", async () => {
    const findings = () =>
      page.$$eval('.problem li', (lis) =>
        lis.map((li) => [li.querySelector('code')!.textContent, li.textContent!.replace(/^[^:]*: /, '')]),
      );
    const apiFindings = (body: { error: { findings: { field: string; message: string }[] } }) =>
      body.error.findings.map((f) => [f.field, f.message]);
    const submit = async (summary: string, fields: Record<string, string>, button: string): Promise<number> => {
      await page.goto(`${base}/admin/accounts/${ent}`);
      await page.click(`summary:has-text("${summary}")`);
      for (const [selector, value] of Object.entries(fields)) await page.fill(selector, value);
      const [res] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click(button)]);
      return res.status();
    };

    expect(
      await submit(
        'Set or clear a spend limit',
        { '#limit-credits': '5', '#limit-thresholds': '50, 150' },
        'button:has-text("Set limit…")',
      ),
    ).toBe(400);
    const limitApi = await h.request('PUT', `/v1/accounts/${ent}/spend-limit`, {
      key: admin,
      body: { credits: '5', thresholds: [50, 150] },
    });
    expect(limitApi.status).toBe(400);
    expect(await findings()).toEqual(apiFindings(limitApi.body));

    expect(
      await submit(
        'Change plan or Enterprise overrides',
        { '#plan-overrides': '{"concurrentRuntimes": -1}' },
        'button:has-text("Change plan…")',
      ),
    ).toBe(400);
    const planApi = await h.request('PUT', `/v1/admin/accounts/${ent}/plan`, {
      key: admin,
      body: { plan: 'enterprise', overrides: { concurrentRuntimes: -1 } },
    });
    expect(planApi.status).toBe(400);
    expect(await findings()).toEqual(apiFindings(planApi.body));

    expect(
      await submit(
        'Grant credits',
        { '#grant-credits': '1', '#grant-reason': 'x', '#grant-expires': 'next week' },
        'button:has-text("Grant…")',
      ),
    ).toBe(400);
    const grantApi = await h.request('POST', `/v1/admin/accounts/${ent}/grants`, {
      key: admin,
      body: { credits: '1', reason: 'x', expiresAt: 'next week' },
      headers: { 'idempotency-key': uid('grant') },
    });
    expect(grantApi.status).toBe(400);
    expect(await findings()).toEqual(apiFindings(grantApi.body));
    fits(await screenshots(page, 'action-refused'));
  });

  it('refuses every action to a reports key and to a forged POST, changing nothing', async () => {
    const reportsKey = await h.key('reports');
    const actors = await Promise.all(
      [admin, reportsKey].map(async (k) => `key:${(await h.app.get(ApiKeysService).authenticate(k))!.keyId}`),
    );
    // What either key did, and anything done to the account (other test files share the database).
    const auditRows = async () =>
      Number((await h.ds.query(`SELECT count(*)::int AS n FROM audit_log WHERE account_id = $1 OR actor = ANY($2)`, [ent, actors]))[0].n);
    const walletOf = async () => (await h.request('GET', `/v1/accounts/${ent}/wallet`, { key: admin })).body.available;
    const actions: [string, Record<string, string>][] = [
      [`/admin/accounts/${ent}/grant`, { credits: '1000', reason: 'forged', idempotencyKey: 'abcdefgh-1234' }],
      [`/admin/accounts/${ent}/plan`, { plan: 'free', overrides: '' }],
      [`/admin/accounts/${ent}/spend-limit`, { credits: '', thresholds: '50' }],
      [`/admin/accounts/${ent}/suspension`, { suspended: 'yes', reason: 'forged' }],
      [`/admin/accounts/${ent}/runtimes/${runtime}/terminate`, {}],
      [`/admin/accounts/${ent}/keys/${entKeyId}/revoke`, {}],
      ['/admin/jobs/grant-expiry/run', {}],
    ];
    const before = { audit: await auditRows(), wallet: await walletOf() };

    const readOnly = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const p = await readOnly.newPage();
    await signInToConsole(p, base, reportsKey);
    // The reports scope sees everything and no form that changes anything.
    for (const path of [`/admin/accounts/${ent}`, '/admin/health']) {
      await p.goto(`${base}${path}`);
      expect(await p.locator('main form[method=post]').count()).toBe(0);
      expect(await p.textContent('header .who')).toContain('read-only (reports)');
    }
    await p.goto(`${base}/admin/accounts/${ent}`);
    expect(await p.locator('#table-ledger tbody tr').count()).toBe(25);
    const csrf = (await p.getAttribute('header input[name=csrf]', 'value'))!;
    for (const [path, form] of actions) {
      const res = await readOnly.request.post(`${base}${path}`, { form: { ...form, csrf, confirmed: 'yes' }, maxRedirects: 0 });
      expect(res.status(), path).toBe(403);
      expect(await res.text(), path).toContain('reports scope');
    }
    await readOnly.close();

    // The admin's own session, but a form from elsewhere: no token, or a wrong one.
    for (const [path, form] of actions) {
      for (const extra of [{}, { csrf: 'A'.repeat(43) }] as Record<string, string>[]) {
        const res = await context.request.post(`${base}${path}`, { form: { ...form, ...extra, confirmed: 'yes' }, maxRedirects: 0 });
        expect(res.status(), path).toBe(403);
        expect(await res.text(), path).toContain('security token');
      }
    }
    expect({ audit: await auditRows(), wallet: await walletOf() }).toEqual(before);
    expect((await h.request('GET', `/v1/admin/accounts/${ent}/plan`, { key: admin })).body).toMatchObject({ plan: 'enterprise' });
    expect((await h.request('GET', `/v1/accounts/${ent}/subscription`, { key: admin })).body).toMatchObject({ accountStatus: 'active' });
    expect((await h.request('GET', `/v1/reservations/${runtime}`, { key: admin })).body.commands).toEqual([]);
  });

  it('counts the seats a Team account had in the period shown', async () => {
    clock.set('2034-06-03T10:00:00.000Z');
    await ok(h.request('DELETE', `/v1/accounts/${org}/members/u3`, { key: admin }));
    // Weeks later by the service's clock: the 8-hour session is over, sign in again.
    await page.goto(`${base}/admin`);
    expect(new URL(page.url()).pathname).toBe('/admin/login');
    await signIn();
    const seats = async (query: string) => {
      await page.goto(`${base}/admin?${query}`);
      return page.textContent(`#table-seats tr:has-text("${org}") td[data-col=seats]`);
    };
    expect(await seats(MAY)).toBe('3');
    expect(await seats(JUNE)).toBe('2');
  });
});
