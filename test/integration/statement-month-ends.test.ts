import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { formatCredits, parseCredits } from '../../src/common/money';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { GIB, pricedRateCardFile, usageEvent } from '../support/ancillary';
import { uid, type FreshHarness } from '../support/app';
import { events as postEvents, ok } from '../support/requests';
import { startStripeApp, type StripeApp } from '../support/stripe-app';
import type { StripeFake } from '../support/stripe-fake';

const MIN = 60_000;
const SECRET = 'whsec_test_secret';
const t = (iso: string) => new Date(iso);
const JANUARY = { from: '2031-01-01T00:00:00.000Z', to: '2031-02-01T00:00:00.000Z' };

type Line = { section: string; credits: string };
const sumOf = (lines: Line[], section?: string) =>
  lines.filter((l) => section === undefined || l.section === section).reduce((s, l) => s + parseCredits(l.credits)!, 0n);

/**
 * What happens around midnight on the last day of a month is in that month everywhere: a storage
 * hour charged by the accrual run after midnight and an egress report received then (the statement's
 * lines, its ancillary table, the account's usage view and the ledger), a top-up paid just before
 * midnight and delivered just after, and a Free allowance's expiry.
 */
describe('a month end: usage, payments and expiries are in the month they belong to', () => {
  let stripe: StripeApp;
  let h: FreshHarness;
  let fake: StripeFake;
  let admin: string;
  let cp: string;
  const clock = new ManualClock(t('2031-01-10T10:00:00.000Z'));

  beforeAll(async () => {
    stripe = await startStripeApp('month_ends', SECRET, {
      clock,
      env: { STRIPE_TIMEOUT_MS: '1000', RATE_CARD_FILE: pricedRateCardFile('2031-01-01T00:00:00.000Z') },
    });
    ({ h, fake, admin } = stripe);
    cp = await h.key('control-plane');
  });
  afterAll(() => stripe.close());

  const events = (batch: unknown[]) => postEvents(h, cp, ...batch);
  const job = (name: string) => ok(h.request('POST', `/v1/admin/jobs/${name}/run`, { key: admin }));
  const statement = (accountId: string, period: string) =>
    ok(h.request('GET', `/v1/accounts/${accountId}/statements/${period}`, { key: admin }));
  const run = async (accountId: string, minutes: number) => {
    const runtimeId = uid('rt');
    await ok(h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes: 120 } }), 201);
    const start = clock.now();
    await events([
      lifecycle(accountId, runtimeId, 'runtime.started', start, 1),
      lifecycle(accountId, runtimeId, 'runtime.terminated', new Date(start.getTime() + minutes * MIN), 2, { reason: 'user' }),
    ]);
  };
  /** What the ledger's entries say the account's ancillary holds consumed in [from, to), summed here. */
  const ancillaryConsumed = async (accountId: string, period: { from: string; to: string }): Promise<bigint> => {
    const [r] = await h.ds.query(
      `SELECT coalesce(sum(e.amount), 0)::text AS c FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
       WHERE t.account_id = $1 AND t.hold_id LIKE 'anc\\_%' AND e.ledger_account = 'consumption' AND t.created_at >= $2 AND t.created_at < $3`,
      [accountId, period.from, period.to],
    );
    return BigInt(r.c);
  };

  let storage: string;
  let topUp: string;
  let free: string;
  let sessionId: string;

  it('lives through January, two month ends and into March', async () => {
    storage = await fundedAccount(h, admin, { credits: '100.000000' });
    topUp = await fundedAccount(h, admin, {});
    free = await fundedAccount(h, admin, { plan: 'free' });
    await run(free, 30);

    // A 10 GiB volume from 22:00 on January 31st, and egress reported for the last hour of January.
    clock.set(t('2031-01-31T22:00:00.000Z'));
    const volumeId = uid('vol');
    await events([usageEvent(storage, 'volume.created', clock.now(), { volumeId, sizeGiB: 10 })]);
    // A top-up paid at 23:59:50, its webhook delivered after midnight.
    const started = await ok(h.request('POST', `/v1/accounts/${topUp}/top-ups`, { key: admin, body: { pack: 'credits-100' } }), 201);
    sessionId = started.sessionId;
    const paid = fake.emit('checkout.session.completed', fake.pay(sessionId), Date.parse('2031-01-31T23:59:50.000Z') / 1000);

    clock.set(t('2031-02-01T00:00:20.000Z'));
    await stripe.deliver(paid);
    await events([
      usageEvent(
        storage,
        'egress.reported',
        clock.now(),
        { bytes: 3 * GIB, from: '2031-01-31T23:00:00.000Z', to: '2031-02-01T00:00:00.000Z' },
        { runtimeId: uid('rt') },
      ),
    ]);
    // Just after midnight: January's allowance expires (the expiry job), February's is granted.
    clock.set(t('2031-02-01T00:00:30.000Z'));
    await job('grant-expiry');
    await job('monthly-reset');
    // The accrual after midnight charges January's last two hours; the next one February's first two.
    clock.set(t('2031-02-01T00:05:00.000Z'));
    await job('ancillary-accrual');
    clock.set(t('2031-02-01T02:00:00.000Z'));
    await events([usageEvent(storage, 'volume.deleted', clock.now(), { volumeId })]);
    await job('ancillary-accrual');

    clock.set(t('2031-02-10T10:00:00.000Z'));
    await run(free, 45);
    // The second month end: the reset (which expires what is due itself) before the expiry job.
    clock.set(t('2031-03-01T00:00:30.000Z'));
    await job('monthly-reset');
    await job('grant-expiry');
    clock.set(t('2031-03-02T10:00:00.000Z'));
  });

  it("puts a storage hour charged after midnight and an egress report received then in January's lines, usage view and ledger", async () => {
    // 10 GiB × 2 hours at 2,000 µcr per GiB-hour; 3 GiB of egress at 0.1 credit per GiB.
    const january = await statement(storage, '2031-01');
    expect(january.lines.filter((l: Line) => l.section === 'ancillary_charges')).toEqual([
      expect.objectContaining({ description: 'Egress charges', credits: '-0.300000' }),
      expect.objectContaining({ description: 'Volume charges', credits: '-0.040000' }),
    ]);
    const charged = (rows: { charged: string }[]) => rows.reduce((s, r) => s + parseCredits(r.charged)!, 0n);
    expect(charged(january.ancillary)).toBe(340_000n);
    const usage = await ok(h.request('GET', `/v1/accounts/${storage}/usage?from=${JANUARY.from}&to=${JANUARY.to}`, { key: admin }));
    expect(charged(usage.ancillary)).toBe(340_000n);
    expect(await ancillaryConsumed(storage, JANUARY)).toBe(340_000n);
    expect(-sumOf(january.lines, 'ancillary_charges')).toBe(340_000n);

    // February has its own two hours, and only them.
    const february = await statement(storage, '2031-02');
    expect(formatCredits(-sumOf(february.lines, 'ancillary_charges'))).toBe('0.040000');
    expect(charged(february.ancillary)).toBe(40_000n);
    expect(await ancillaryConsumed(storage, { from: JANUARY.to, to: '2031-03-01T00:00:00.000Z' })).toBe(40_000n);
  });

  it("puts a top-up paid before midnight in January's statement and billing history, whenever its webhook came", async () => {
    const january = await statement(topUp, '2031-01');
    expect(january.lines).toEqual([expect.objectContaining({ section: 'top_ups', credits: '100.000000' })]);
    expect(january.topUps).toEqual([expect.objectContaining({ sessionId, credits: '100.000000' })]);
    expect(january.closingBalance).toBe('100.000000');
    const february = await statement(topUp, '2031-02');
    expect(february.lines).toEqual([]);
    expect(february.topUps).toEqual([]);
    // The account page's billing history reads the top-up's row: dated when it was paid.
    const [row] = await h.ds.query(`SELECT created_at FROM stripe_top_ups WHERE session_id = $1`, [sessionId]);
    expect(row.created_at).toEqual(t('2031-01-31T23:59:50.000Z'));
  });

  it("has a Free month's allowance expire in that month's statement, each month from 0 to 0", async () => {
    const months = [
      { period: '2031-01', runtime: '-0.500000', expired: '-49.500000', closing: '0.000000' },
      { period: '2031-02', runtime: '-0.750000', expired: '-49.250000', closing: '0.000000' },
      { period: '2031-03', runtime: null, expired: null, closing: '50.000000' },
    ];
    let previous = '0.000000';
    for (const m of months) {
      const s = await statement(free, m.period);
      expect(s.openingBalance, m.period).toBe(previous);
      expect(parseCredits(s.openingBalance)! + sumOf(s.lines)).toBe(parseCredits(s.closingBalance));
      expect(s.closingBalance, m.period).toBe(m.closing);
      expect(s.lines.find((l: Line) => l.section === 'included_credits')?.credits).toBe('50.000000');
      expect(s.lines.find((l: Line) => l.section === 'runtime_charges')?.credits ?? null).toBe(m.runtime);
      expect(s.lines.find((l: Line) => l.section === 'expiries')?.credits ?? null).toBe(m.expired);
      previous = s.closingBalance;
    }
    const wallet = await ok(h.request('GET', `/v1/accounts/${free}/wallet`, { key: admin }));
    expect(wallet.total).toBe(previous);
  });

  it('dates a later payment of what the wallet could not pay when it is posted: the month of the usage stays as it closed', async () => {
    const broke = await fundedAccount(h, admin, {});
    clock.set(t('2031-04-10T10:00:00.000Z'));
    await events([
      usageEvent(
        broke,
        'egress.reported',
        clock.now(),
        { bytes: 3 * GIB, from: '2031-04-10T09:00:00.000Z', to: '2031-04-10T10:00:00.000Z' },
        { runtimeId: uid('rt') },
      ),
    ]);
    const april = await statement(broke, '2031-04');
    expect(april.lines).toEqual([]);
    expect(april.ancillary).toEqual([expect.objectContaining({ kind: 'egress', charged: '0.000000', unpaid: '0.300000' })]);

    clock.set(t('2031-05-02T10:00:00.000Z'));
    await ok(
      h.request('POST', `/v1/admin/accounts/${broke}/grants`, {
        key: admin,
        body: { credits: '10.000000', reason: 'test funds' },
        headers: { 'idempotency-key': uid('grant') },
      }),
      201,
    );
    await job('ancillary-accrual');
    const aprilAfter = await statement(broke, '2031-04');
    expect([aprilAfter.lines, aprilAfter.openingBalance, aprilAfter.closingBalance]).toEqual([[], '0.000000', '0.000000']);
    const may = await statement(broke, '2031-05');
    expect(may.openingBalance).toBe('0.000000');
    expect(may.lines).toEqual([
      expect.objectContaining({ section: 'grants', credits: '10.000000' }),
      expect.objectContaining({ section: 'ancillary_charges', description: 'Egress charges', credits: '-0.300000' }),
    ]);
    expect(may.closingBalance).toBe('9.700000');
  });
});

/**
 * A Team cycle's fees are dated by the cycle they bill and its credits by the invoice's payment: an
 * invoice paid on the 31st and delivered after midnight has both in that month's statement.
 */
describe("a Team invoice paid before midnight and delivered after: its fees and its cycle's credits in the same month", () => {
  let stripe: StripeApp;
  let h: FreshHarness;
  let fake: StripeFake;
  let admin: string;
  const clock = new ManualClock(t('2031-01-31T22:00:00.000Z'));
  const seconds = (iso: string) => Date.parse(iso) / 1000;

  beforeAll(async () => {
    stripe = await startStripeApp('team_month_end', SECRET, { clock, env: { STRIPE_TIMEOUT_MS: '1000' } });
    ({ h, fake, admin } = stripe);
  });
  afterAll(() => stripe.close());

  it('shows the fees (with the cycle they bill) and the 500 included credits in January', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'team', kind: 'organization' });
    for (const member of ['alice', 'bob']) await ok(h.request('PUT', `/v1/accounts/${accountId}/members/${member}`, { key: admin }));
    const subscription = await ok(h.request('POST', `/v1/admin/accounts/${accountId}/subscription`, { key: admin }), 201);
    const invoice = fake.invoice(subscription.subscription.id, {
      periodStart: seconds('2031-01-31T23:00:00.000Z'),
      periodEnd: seconds('2031-02-28T23:00:00.000Z'),
    });
    const paidAt = seconds('2031-01-31T23:59:30.000Z');
    const event = fake.emit('invoice.paid', { ...invoice, status: 'paid', status_transitions: { paid_at: paidAt } }, paidAt);

    clock.set(t('2031-02-01T00:00:10.000Z'));
    await stripe.deliver(event);

    const january = await ok(h.request('GET', `/v1/accounts/${accountId}/statements/2031-01`, { key: admin }));
    expect(january.fees.map((f: { periodStart: string; periodEnd: string }) => [f.periodStart, f.periodEnd])).toEqual([
      ['2031-01-31T23:00:00.000Z', '2031-02-28T23:00:00.000Z'],
      ['2031-01-31T23:00:00.000Z', '2031-02-28T23:00:00.000Z'],
    ]);
    expect(january.lines).toEqual([expect.objectContaining({ section: 'included_credits', credits: '500.000000' })]);
    const february = await ok(h.request('GET', `/v1/accounts/${accountId}/statements/2031-02`, { key: admin }));
    expect(february.fees).toEqual([]);
    expect(february.lines).toEqual([]);
    expect(february.openingBalance).toBe('500.000000');
  });
});
