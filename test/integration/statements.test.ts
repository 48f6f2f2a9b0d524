import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { parseCredits } from '../../src/common/money';
import { LedgerService } from '../../src/ledger/ledger.service';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { GIB, pricedRateCardFile, usageEvent } from '../support/ancillary';
import { startAppOnFreshDatabase, uid, type FreshHarness } from '../support/app';
import { events, ok } from '../support/requests';

const MIN = 60_000;
const t = (iso: string) => new Date(iso);

describe('statements of a generated month reconcile to the ledger to the micro-credit', () => {
  let h: FreshHarness;
  let admin: string;
  let cp: string;
  const clock = new ManualClock(t('2031-02-20T10:00:00.000Z'));
  const accounts: string[] = [];

  beforeAll(async () => {
    h = await startAppOnFreshDatabase('statements', { clock, env: { RATE_CARD_FILE: pricedRateCardFile('2031-01-01T00:00:00.000Z') } });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(async () => {
    await h.close();
  });

  const job = (name: string) => ok(h.request('POST', `/v1/admin/jobs/${name}/run`, { key: admin }));
  const run = async (accountId: string, minutes: number) => {
    const runtimeId = uid('rt');
    await ok(h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes: 120 } }), 201);
    const start = clock.now();
    await events(
      h,
      cp,
      lifecycle(accountId, runtimeId, 'runtime.started', start, 1),
      lifecycle(accountId, runtimeId, 'runtime.terminated', new Date(start.getTime() + minutes * MIN), 2, { reason: 'user' }),
    );
  };
  const statement = (accountId: string, period: string) =>
    ok(h.request('GET', `/v1/accounts/${accountId}/statements/${period}`, { key: admin }));
  /** The balance the ledger's entries give at `before`, summed here independently of the statement's code. */
  const ledgerBalance = async (accountId: string, before: Date): Promise<bigint> => {
    const [r] = await h.ds.query(
      `SELECT coalesce(sum(CASE WHEN e.ledger_account LIKE 'grant:%' OR e.ledger_account LIKE 'hold:%' OR e.ledger_account = 'debt' THEN e.amount END), 0)::text AS b
       FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id WHERE t.account_id = $1 AND t.created_at < $2`,
      [accountId, before],
    );
    return BigInt(r.b);
  };

  it('generates February to April: allowances, grants, runtimes, storage across the month end, egress, a late correction, an expiry', async () => {
    // February: a Free account runs half an hour; an Enterprise account is funded; a third gets a grant expiring in March.
    const free = await fundedAccount(h, admin, { plan: 'free' });
    const rich = await fundedAccount(h, admin, { credits: '100.000000' });
    const expiring = await fundedAccount(h, admin, {});
    await ok(
      h.request('POST', `/v1/admin/accounts/${expiring}/grants`, {
        key: admin,
        body: { credits: '20.000000', reason: 'trial', expiresAt: '2031-03-10T00:00:00.000Z' },
        headers: { 'idempotency-key': uid('g') },
      }),
      201,
    );
    accounts.push(free, rich, expiring);
    await run(free, 30);

    // March.
    clock.set(t('2031-03-01T00:00:05.000Z'));
    await job('monthly-reset');
    await job('grant-expiry');
    clock.set(t('2031-03-02T09:00:00.000Z'));
    await run(free, 45);
    await run(rich, 90);
    await run(expiring, 20);
    const volumeId = uid('vol');
    await events(
      h,
      cp,
      usageEvent(rich, 'volume.created', t('2031-03-02T01:00:00.000Z'), { volumeId, sizeGiB: 10 }),
      usageEvent(rich, 'volume.deleted', t('2031-03-03T01:00:00.000Z'), { volumeId }),
      usageEvent(
        free,
        'egress.reported',
        t('2031-03-02T08:00:00.000Z'),
        { bytes: 3 * GIB, from: '2031-03-02T07:00:00.000Z', to: '2031-03-02T08:00:00.000Z' },
        { runtimeId: uid('rt') },
      ),
    );
    clock.set(t('2031-03-04T00:00:00.000Z'));
    await job('ancillary-accrual');
    // A late resize of the deleted volume: its hours are corrected.
    await events(h, cp, usageEvent(rich, 'volume.resized', t('2031-03-02T13:00:00.000Z'), { volumeId, sizeGiB: 30 }));
    await job('ancillary-accrual');
    clock.set(t('2031-03-11T00:00:00.000Z'));
    await job('grant-expiry');
    // A snapshot from the last two hours of March, charged by April's first accrual run (dated in March).
    clock.set(t('2031-03-31T22:00:00.000Z'));
    await events(h, cp, usageEvent(expiring, 'snapshot.created', clock.now(), { snapshotId: uid('snap'), sizeBytes: 4 * GIB }));
    // A hold of the Free account open across the month end, and a runtime started in March that ends in April.
    const ledger = h.app.get(LedgerService);
    const heldOver = uid('hold');
    await ledger.createHoldTx({ accountId: free, holdId: heldOver, amount: 2_000_000n, reference: null, idempotencyKey: uid('k') });
    clock.set(t('2031-03-31T23:00:00.000Z'));
    const lateRuntime = uid('rt');
    await ok(
      h.request('POST', '/v1/reservations', { key: cp, body: { accountId: rich, runtimeId: lateRuntime, ...SMALL, minutes: 120 } }),
      201,
    );
    await events(h, cp, lifecycle(rich, lateRuntime, 'runtime.started', clock.now(), 1));

    // April.
    clock.set(t('2031-04-01T02:00:00.000Z'));
    await job('monthly-reset');
    await job('grant-expiry');
    await job('ancillary-accrual');
    await events(h, cp, lifecycle(rich, lateRuntime, 'runtime.terminated', t('2031-04-01T00:30:00.000Z'), 2, { reason: 'user' }));
    // The hold settled after April's reset, dated in March's last millisecond (as metering dates a charge when it
    // dated the usage): a March transaction written after April's.
    await ledger.transact((em) => ledger.settleHold(em, { holdId: heldOver, amount: 2_000_000n }, t('2031-03-31T23:59:59.999Z')));
    clock.set(t('2031-04-02T00:00:00.000Z'));
  });

  it('for every account and month: opening + lines = closing = the ledger entries, each month opens where the last closed, and April closes at the wallet', async () => {
    for (const accountId of accounts) {
      let previousClosing: string | undefined;
      for (const period of ['2031-02', '2031-03', '2031-04']) {
        const s = await statement(accountId, period);
        const sum = (s.lines as { credits: string }[]).reduce((acc, l) => acc + parseCredits(l.credits)!, 0n);
        expect(parseCredits(s.openingBalance)! + sum).toBe(parseCredits(s.closingBalance));
        expect(s.reconciliation.movements).toBe(formatSigned(sum));
        expect(parseCredits(s.openingBalance)).toBe(await ledgerBalance(accountId, new Date(s.from)));
        expect(parseCredits(s.closingBalance)).toBe(await ledgerBalance(accountId, new Date(s.to)));
        if (previousClosing !== undefined) expect(s.openingBalance).toBe(previousClosing);
        previousClosing = s.closingBalance;
      }
      const wallet = await ok(h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin }));
      expect(previousClosing).toBe(wallet.total);
    }
    // The balance changes kept per month (from which the opening balances are read) agree with the entries.
    expect(await h.app.get(LedgerService).reconcile()).toEqual([]);
  });

  it('explains March line by line', async () => {
    const [free, rich, expiring] = accounts as [string, string, string];
    const march = await statement(rich, '2031-03');
    expect(march.creditValue).toEqual({ currency: 'usd', centsPerCredit: 30 });
    expect(march.openingBalance).toBe('100.000000');
    // 90 minutes at 1 credit/h; the volume: 10 GiB 01:00-13:00, 30 GiB 13:00-01:00 next day, 2,000 µcr per GiB-hour.
    expect(march.lines).toEqual([
      expect.objectContaining({
        section: 'runtime_charges',
        description: 'Runtimes: python-simple, small',
        credits: '-1.500000',
        count: 1,
      }),
      expect.objectContaining({ section: 'ancillary_charges', description: 'Volume charges', credits: '-0.960000' }),
    ]);
    expect(march.ancillary).toEqual([expect.objectContaining({ kind: 'volume', priced: true, unpaid: '0.000000', amount: '0.960000' })]);

    const freeMarch = await statement(free, '2031-03');
    expect(freeMarch.lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ section: 'included_credits', credits: '50.000000' }),
        expect.objectContaining({ section: 'runtime_charges', credits: '-0.750000' }),
        expect.objectContaining({ section: 'ancillary_charges', description: 'Egress charges', credits: '-0.300000' }),
        // The hold open across the month end, settled in full after April's reset but dated on March's last
        // millisecond; what was left unheld of March's 50 credits (46.95), expired by April's reset, on March's last day.
        expect.objectContaining({ section: 'other_charges', credits: '-2.000000' }),
        expect.objectContaining({ section: 'expiries', credits: '-46.950000' }),
      ]),
    );
    // What was left of February's 50 credits (49.5) is February's expiry, though the reset posted it on March 1st.
    const freeFebruary = await statement(free, '2031-02');
    expect(freeFebruary.lines).toEqual(expect.arrayContaining([expect.objectContaining({ section: 'expiries', credits: '-49.500000' })]));
    expect(freeFebruary.closingBalance).toBe('0.000000');

    const expiringMarch = await statement(expiring, '2031-03');
    expect(expiringMarch.lines).toEqual([
      expect.objectContaining({ section: 'runtime_charges', credits: '-0.333334' }),
      expect.objectContaining({ section: 'expiries', credits: '-19.666666' }),
    ]);
    // The snapshot's last two March hours are metered in March; the wallet has nothing left to pay them.
    expect(expiringMarch.ancillary).toEqual([
      expect.objectContaining({ kind: 'snapshot', priced: true, amount: '0.008000', charged: '0.000000', unpaid: '0.008000' }),
    ]);

    const csv = await h.request('GET', `/v1/accounts/${rich}/statements/2031-03?format=csv`, { key: admin });
    expect(csv.status).toBe(200);
    expect(String(csv.headers['content-type'])).toMatch(/^text\/csv/);
    const lines = String(csv.body).trim().split('\r\n');
    expect(lines[0]).toBe('section,description,count,quantity,unit,included,beyond_included,credits,usd_cents,due,charged,unpaid');
    expect(lines[1]).toBe('opening_balance,Opening balance 2031-03-01T00:00:00.000Z,,,,,,100.000000,,,,');
    expect(lines).toContain(`closing_balance,Closing balance 2031-04-01T00:00:00.000Z,,,,,,${march.closingBalance},,,,`);
    // What the wallet could not pay yet shows in the CSV as in the JSON.
    const expiringCsv = await h.request('GET', `/v1/accounts/${expiring}/statements/2031-03?format=csv`, { key: admin });
    const ancillary = String(expiringCsv.body)
      .trim()
      .split('\r\n')
      .filter((l) => l.startsWith('ancillary_usage,'));
    const snapshot = expiringMarch.ancillary[0]!;
    expect(ancillary).toEqual([`ancillary_usage,snapshot,,${snapshot.quantity},GiB-month,,,,,0.008000,0.000000,0.008000`]);
  });

  it('is a printable page of the admin console, linked from the account page', async () => {
    const [, rich] = accounts as [string, string];
    const cookie = await h.consoleSession(admin);
    const account = await h.app.inject({ method: 'GET', url: `/admin/accounts/${rich}`, headers: { cookie } });
    expect(account.body).toContain(`href="/admin/accounts/${rich}/statements/2031-04" data-link="statement"`);
    const page = await h.app.inject({ method: 'GET', url: `/admin/accounts/${rich}/statements/2031-03`, headers: { cookie } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<b data-statement="opening">100.00</b>');
    expect(page.body).toContain('<b data-statement="closing">97.54</b>');
    expect(page.body).toContain('1 credit = $0.30');
    expect(page.body).toContain('Volume charges');
    expect(page.body).toContain('@media print');
    // Its CSV link opens with the console's session, the same file as the API's format=csv.
    const link = `/admin/accounts/${rich}/statements/2031-03?format=csv`;
    expect(page.body).toContain(`href="${link.replace('&', '&amp;')}"`);
    const csv = await h.app.inject({ method: 'GET', url: link, headers: { cookie } });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const api = await h.request('GET', `/v1/accounts/${rich}/statements/2031-03?format=csv`, { key: admin });
    expect(csv.body).toBe(api.body);
    // Signed out, it asks for the sign-in.
    expect((await h.app.inject({ method: 'GET', url: link })).statusCode).toBe(303);
  });

  it('refuses a malformed period and an unknown account, and another account’s key', async () => {
    const [free, rich] = accounts as [string, string];
    // A month that does not exist, one before 1970 (Date.UTC would have ended year 50's June in 1950), and one ending in year 10000.
    for (const period of ['2031-13', '0050-06', '1969-12', '9999-12']) {
      const bad = await h.request('GET', `/v1/accounts/${free}/statements/${period}`, { key: admin });
      expect(bad.status, period).toBe(400);
      expect(bad.body.error.findings).toEqual([
        { field: 'period', message: 'must be a calendar month, YYYY-MM, from 1970-01 through 9999-11' },
      ]);
    }
    expect((await h.request('GET', `/v1/accounts/${free}/statements/1970-01`, { key: admin })).body).toMatchObject({
      period: '1970-01',
      from: '1970-01-01T00:00:00.000Z',
      to: '1970-02-01T00:00:00.000Z',
    });
    expect((await h.request('GET', `/v1/accounts/acc_nobody/statements/2031-03`, { key: admin })).status).toBe(404);
    const own = await h.key(`account:${free}`);
    expect((await h.request('GET', `/v1/accounts/${free}/statements/2031-03`, { key: own })).status).toBe(200);
    expect((await h.request('GET', `/v1/accounts/${rich}/statements/2031-03`, { key: own })).status).toBe(403);
  });
});

function formatSigned(micros: bigint): string {
  const abs = micros < 0n ? -micros : micros;
  return `${micros < 0n ? '-' : ''}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, '0')}`;
}
