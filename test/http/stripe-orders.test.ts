import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/common/database/transaction';
import { LedgerService } from '../../src/ledger/ledger.service';
import { allowanceGrantId, allowanceKey, cycleGrantId } from '../../src/plans/allowance-keys';
import { fundedAccount } from '../support/accounts';
import { type Harness } from '../support/app';
import { startStripeApp, type StripeApp } from '../support/stripe-app';
import { StripeFake } from '../support/stripe-fake';

const SECRET = 'whsec_test_orders';

/** A Team cycle's grant beside an Enterprise month's, and a first payment's failure applied late: against the local fake. */
describe('Stripe: cycle grants beside month grants, and late first-payment failures', () => {
  let h: Harness;
  let fake: StripeFake;
  let admin: string;
  let deliver: StripeApp['deliver'];

  beforeAll(async () => {
    ({ h, fake, admin, deliver } = await startStripeApp('stripe_orders', SECRET, { env: { STRIPE_PAST_DUE_GRACE_MS: '0' } }));
  });
  afterAll(() => h.close().then(() => fake.stop()));

  const setPlan = async (accountId: string, body: object) => {
    const res = await h.request('PUT', `/v1/admin/accounts/${accountId}/plan`, { key: admin, body });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  };
  /** An Enterprise account moved to Team, with its subscription created through the API. */
  const toTeam = async (accountId: string) => {
    await setPlan(accountId, { plan: 'team' });
    const created = await h.request('POST', `/v1/admin/accounts/${accountId}/subscription`, { key: admin });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.subscription.id as string;
  };
  const allowances = async (accountId: string) =>
    ((await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.grants as { source: string; amount: string }[])
      .filter((g) => g.source === 'plan_allowance')
      .map((g) => g.amount)
      .sort();
  const now = new Date();
  const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) / 1000;
  const monthEnd = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) / 1000;
  /** The invoice of a Team cycle starting on the 1st (the calendar month), paid at `at`. */
  const monthCycleInvoice = (subscriptionId: string, at: number) =>
    Object.assign(fake.invoice(subscriptionId, { periodStart: monthStart, periodEnd: monthEnd }), {
      status: 'paid',
      status_transitions: { paid_at: at },
    });
  const ENTERPRISE_300 = { plan: 'enterprise', overrides: { includedCredits: '300.000000' } };
  const ENTERPRISE_1000 = { plan: 'enterprise', overrides: { includedCredits: '1000.000000' } };

  it('grants a Team cycle starting on the 1st and the Enterprise month of the same month, each once, in both orders of the move', async () => {
    for (const order of ['Team, then Enterprise', 'Enterprise, then Team'] as const) {
      const accountId = await fundedAccount(h, admin, { plan: 'enterprise', kind: 'organization' });
      if (order === 'Enterprise, then Team') await setPlan(accountId, ENTERPRISE_300);
      const subscriptionId = await toTeam(accountId);
      const at = Math.floor(Date.now() / 1000);
      const invoice = monthCycleInvoice(subscriptionId, at);
      const paid = fake.emit('invoice.paid', invoice, at);
      await deliver(paid);
      if (order === 'Team, then Enterprise') await setPlan(accountId, ENTERPRISE_300);
      // The month's 300 of Enterprise and the cycle's 500 of Team, both expiring at the month's end.
      expect(await allowances(accountId), order).toEqual(['300.000000', '500.000000']);
      // Replays: the same event, another event of the same invoice, the monthly reset, the same plan set again.
      expect((await deliver(paid)).body, order).toMatchObject({ duplicate: true });
      await deliver(fake.emit('invoice.paid', invoice, at + 1));
      expect((await h.request('POST', '/v1/admin/jobs/monthly-reset/run', { key: admin })).status, order).toBe(200);
      await setPlan(accountId, ENTERPRISE_300);
      expect(await allowances(accountId), order).toEqual(['300.000000', '500.000000']);
      // Told once each.
      const notices = await h.ds.query(`SELECT 1 FROM outbox WHERE key = $1 AND payload->>'type' = 'credits.granted'`, [accountId]);
      expect(notices, order).toHaveLength(2);
    }
  });

  const runsAllowance = async (accountId: string) =>
    (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.runs.allowance as Record<string, unknown>;

  it("shows in the wallet's runs the allowance of the current plan only, not the other plan's grant of the same month", async () => {
    const period = { start: new Date(monthStart * 1000), end: new Date(monthEnd * 1000) };
    const expiresAt = period.end.toISOString();
    for (const order of ['Team, then Enterprise', 'Enterprise, then Team'] as const) {
      const accountId = await fundedAccount(h, admin, { plan: 'enterprise', kind: 'organization' });
      if (order === 'Enterprise, then Team') await setPlan(accountId, ENTERPRISE_1000);
      const subscriptionId = await toTeam(accountId);
      // Its cycles start on the 1st, as the month's.
      await setPlan(accountId, { plan: 'team', billingCycleAnchor: period.start.toISOString() });
      if (order === 'Enterprise, then Team') {
        // The cycle is not paid yet: Enterprise's 1000 credits of the month are not Team's allowance.
        expect(await runsAllowance(accountId), order).toEqual({
          included: '500.000000',
          granted: false,
          grantId: null,
          remaining: null,
          expiresAt: null,
        });
      }
      const at = Math.floor(Date.now() / 1000);
      await deliver(fake.emit('invoice.paid', monthCycleInvoice(subscriptionId, at), at));
      if (order === 'Team, then Enterprise') await setPlan(accountId, ENTERPRISE_300);
      expect(await runsAllowance(accountId), order).toEqual(
        order === 'Team, then Enterprise'
          ? { included: '300.000000', granted: true, grantId: allowanceGrantId(accountId, period), remaining: '300.000000', expiresAt }
          : { included: '500.000000', granted: true, grantId: cycleGrantId(accountId, period), remaining: '500.000000', expiresAt },
      );
    }
  });

  it('does not grant again a cycle granted under the id it shared with the month before the ids were distinct', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'enterprise', kind: 'organization' });
    const subscriptionId = await toTeam(accountId);
    const at = Math.floor(Date.now() / 1000);
    const invoice = monthCycleInvoice(subscriptionId, at);
    const period = { start: new Date(monthStart * 1000), end: new Date(monthEnd * 1000) };
    // The cycle's grant as it was made before: the month's id and key, its invoice as reference.
    await inTransaction(h.ds, (em) =>
      h.app.get(LedgerService).grant(em, {
        accountId,
        source: 'plan_allowance',
        amount: 500_000_000n,
        expiresAt: period.end,
        grantId: allowanceGrantId(accountId, period),
        idempotencyKey: allowanceKey(period),
        reason: 'Team plan allowance',
        reference: invoice.id,
        actor: 'stripe',
      }),
    );
    await deliver(fake.emit('invoice.paid', invoice, at));
    expect(await allowances(accountId)).toEqual(['500.000000']);
    await setPlan(accountId, { plan: 'team', billingCycleAnchor: period.start.toISOString() });
    expect(await runsAllowance(accountId)).toMatchObject({
      granted: true,
      grantId: allowanceGrantId(accountId, period),
      remaining: '500.000000',
    });
    // Moved to Enterprise: that cycle's grant is not the month's allowance, which comes as the rest of an upgrade.
    await setPlan(accountId, ENTERPRISE_300);
    expect(await allowances(accountId)).toEqual(['300.000000', '500.000000']);
    const enterprise = await runsAllowance(accountId);
    expect(enterprise).toMatchObject({ included: '300.000000', granted: true, remaining: '300.000000' });
    expect(enterprise.grantId).not.toBe(allowanceGrantId(accountId, period));
  });

  const subscription = async (accountId: string) => (await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body;
  const pastDueNotices = (accountId: string) =>
    h.ds.query(`SELECT 1 FROM outbox WHERE key = $1 AND payload->>'type' = 'subscription.past_due'`, [accountId]);
  const eventsList = (method: string, path: string) => method === 'GET' && path === '/v1/events';

  it("follows Stripe's record of a failed first payment applied after the checkout, by Stripe's retry or the recovery job", async () => {
    for (const order of ['failure first, Stripe retries', 'checkout first, Stripe delivers', 'failure first, recovery job'] as const) {
      const accountId = await fundedAccount(h, admin, { plan: 'free', kind: 'organization' });
      // Stripe's record says active by now: the first payment failed, then Checkout's retry paid it.
      const { subscription: sub, session } = fake.teamCheckout(accountId, 1);
      const at = Math.floor(Date.now() / 1000);
      const invoice = fake.invoice(sub.id, { billingReason: 'subscription_create' });
      const failed = fake.emit('invoice.payment_failed', invoice, at);
      const completed = fake.emit('checkout.session.completed', session, at);
      if (order !== 'checkout first, Stripe delivers') {
        expect((await deliver(failed, 503)).body.error.code, order).toBe('DL_BILLING_UNAVAILABLE');
      }
      // The checkout cannot list Stripe's events: it does not replay the failure.
      fake.failNext(eventsList);
      await deliver(completed);
      expect((await subscription(accountId)).subscription, order).toMatchObject({ id: sub.id, status: 'active' });
      if (order === 'failure first, recovery job') {
        expect((await h.request('POST', '/v1/admin/jobs/stripe-recovery/run', { key: admin })).status, order).toBe(200);
        expect((await deliver(failed)).body, order).toMatchObject({ duplicate: true });
      } else {
        expect((await deliver(failed)).body, order).toMatchObject({ duplicate: false });
      }
      // (With no grace period, a past due account is suspended at once.)
      expect(await subscription(accountId), order).toMatchObject({
        plan: 'team',
        accountStatus: 'active',
        subscription: { id: sub.id, status: 'active', pastDueSince: null },
      });
      expect(await pastDueNotices(accountId), order).toEqual([]);
      expect(await h.ds.query(`SELECT status FROM stripe_invoices WHERE invoice_id = $1`, [invoice.id]), order).toEqual([
        { status: 'payment_failed' },
      ]);
    }
  });

  it('makes the subscription past due when Stripe reports it so: a failed first payment applied after the checkout', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'free', kind: 'organization' });
    const { subscription: sub, session } = fake.teamCheckout(accountId, 1);
    const at = Math.floor(Date.now() / 1000);
    const failed = fake.emit('invoice.payment_failed', fake.invoice(sub.id, { billingReason: 'subscription_create' }), at);
    expect((await deliver(failed, 503)).body.error.code).toBe('DL_BILLING_UNAVAILABLE');
    fake.failNext(eventsList);
    await deliver(fake.emit('checkout.session.completed', session, at));
    // Stripe's record by the retry: the payment was not made good.
    fake.subscriptions.get(sub.id)!.status = 'past_due';
    await deliver(failed);
    expect((await subscription(accountId)).subscription).toMatchObject({ id: sub.id, status: 'past_due' });
    expect(await pastDueNotices(accountId)).toHaveLength(1);
  });
});
