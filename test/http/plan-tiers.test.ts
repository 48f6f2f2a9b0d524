import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SeatsService } from '../../src/stripe/seats.service';
import { SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';
import { StripeFake } from '../support/stripe-fake';
import { tempDir } from '../support/temp-dir';

const SECRET = 'whsec_plan_tiers';
const BASE_PRICE = 'price_business_base_test';
const SEAT_PRICE = 'price_business_seat_test';

/**
 * The shipped plans file with a fourth tier added, and nothing else: Business is billed by Stripe
 * per seat on a billing cycle, its credits come with the paid invoice, and it has quotas of its own.
 */
function plansFileWithBusiness(): string {
  const shipped = JSON.parse(readFileSync('config/plans.json', 'utf8')) as { plans: Record<string, unknown> };
  shipped.plans.business = {
    name: 'Business',
    billing: {
      source: 'stripe_subscription',
      currency: 'usd',
      basePrice: { priceId: BASE_PRICE, unitAmountCents: 9900 },
      seatPrice: { priceId: SEAT_PRICE, unitAmountCents: 2500 },
      fallbackPlan: 'free',
    },
    allowanceTrigger: 'paid_invoice',
    includedCredits: '2000.000000',
    period: 'billing_cycle',
    runsPerPeriod: 2,
    agentsPerPeriod: null,
    concurrentRuntimes: 10,
    sizeClasses: ['small', 'medium', 'large'],
    gpus: false,
    topUps: true,
  };
  const file = join(tempDir('plans-business-'), 'plans.json');
  writeFileSync(file, JSON.stringify(shipped));
  return file;
}

describe('a fourth plan tier from the plans file alone', () => {
  let h: Harness;
  let fake: StripeFake;
  let admin: string;
  let cp: string;

  beforeAll(async () => {
    fake = await new StripeFake({ [BASE_PRICE]: 9900, [SEAT_PRICE]: 2500 }).start();
    h = await startApp({ env: { ...fake.env(SECRET), PLANS_FILE: plansFileWithBusiness(), STRIPE_TIMEOUT_MS: '2000' } });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(async () => {
    await h?.close();
    await fake?.stop();
  });

  const deliver = (event: object) => {
    const payload = JSON.stringify(event);
    return h.request('POST', '/v1/stripe/webhooks', { body: payload, headers: { 'stripe-signature': StripeFake.sign(payload, SECRET) } });
  };
  const wallet = async (accountId: string) => (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body;
  const reserve = (accountId: string, environment: Record<string, unknown> = SMALL.environment, variant: string = SMALL.variant) =>
    h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: uid('rt'), variant, environment, minutes: 10 } });

  it('refuses a plan the file does not list, naming every plan it does', async () => {
    const res = await h.request('POST', '/v1/accounts', { key: admin, body: { id: uid('acc'), kind: 'user', plan: 'gold' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'DL_BILLING_REQUEST_INVALID',
      message: 'The request is invalid',
      findings: [{ field: 'plan', message: 'Invalid option: expected one of "free"|"team"|"enterprise"|"business"' }],
    });
  });

  it('takes an account on it, syncs its seats to Stripe, grants its credits on the paid invoice, enforces its quotas and reports it', async () => {
    const accountId = uid('biz');
    const created = await h.request('POST', '/v1/accounts', {
      key: admin,
      body: { id: accountId, kind: 'organization', plan: 'business', name: 'Biz' },
    });
    expect(created.status).toBe(201);
    expect(created.body.plan).toBe('business');
    for (const user of ['alice', 'bob']) {
      expect((await h.request('PUT', `/v1/accounts/${accountId}/members/${user}`, { key: admin })).status).toBe(200);
    }
    // Nothing is granted before the invoice is paid.
    expect((await wallet(accountId)).total).toBe('0.000000');

    // The subscription is made with the tier's prices, for the active seats; a new member moves the quantity.
    const subscribed = await h.request('POST', `/v1/admin/accounts/${accountId}/subscription`, { key: admin });
    expect(subscribed.status).toBe(201);
    expect(subscribed.body).toMatchObject({ plan: 'business', seats: 2, subscription: { status: 'active', seatQuantity: 2 } });
    const subscriptionId = subscribed.body.subscription.id as string;
    expect(
      fake.subscriptions.get(subscriptionId)!.items.data.map((i: { price: { id: string }; quantity: number }) => [i.price.id, i.quantity]),
    ).toEqual([
      [BASE_PRICE, 1],
      [SEAT_PRICE, 2],
    ]);
    expect((await h.request('PUT', `/v1/accounts/${accountId}/members/carol`, { key: admin })).status).toBe(200);
    await h.app.get(SeatsService).idle();
    expect(fake.seatItem(subscriptionId, SEAT_PRICE).quantity).toBe(3);

    // The paid invoice grants the cycle's credits, expiring at the cycle's end.
    const invoice = fake.invoice(subscriptionId);
    expect((await deliver(fake.emit('invoice.paid', invoice))).body).toMatchObject({ duplicate: false, ignored: false });
    const cycleEnd = new Date(invoice.period_end * 1000).toISOString();
    const funded = await wallet(accountId);
    expect(funded.total).toBe('2000.000000');
    expect(funded.grants).toEqual([expect.objectContaining({ source: 'plan_allowance', remaining: '2000.000000', expiresAt: cycleEnd })]);
    expect(funded.runs).toMatchObject({ used: 0, included: 2, resetsAt: cycleEnd });

    // Its quotas at reservation: its size classes, no GPUs, 2 runs per cycle.
    const gpu = await reserve(
      accountId,
      { name: 'gpu', sizeClass: 'gpu-small', accelerator: { type: 'T4', count: 1, cuda: '12.8' } },
      'modal',
    );
    expect(gpu.status).toBe(403);
    expect(gpu.body.error.code).toBe('DL_BILLING_PLAN_FORBIDS');
    expect(gpu.body.error.findings.map((f: { message: string }) => f.message)).toEqual([
      'gpu-small is not in the Business plan (allowed: small, medium, large)',
      'GPUs are not in the Business plan',
    ]);
    expect((await reserve(accountId, { name: 'big', sizeClass: 'large' })).status).toBe(201);
    expect((await reserve(accountId)).body.runsRemaining).toBe(0);
    const third = await reserve(accountId);
    expect(third.status).toBe(429);
    expect(third.body.error).toMatchObject({ code: 'DL_BILLING_QUOTA_EXCEEDED', quota: 'runs', resetsAt: cycleEnd });

    // The seats report lists it with its own prices.
    const month = new Date();
    const from = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), 1)).toISOString();
    const to = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1)).toISOString();
    const seats = await h.request('GET', `/v1/reports/seats?from=${from}&to=${to}`, { key: admin });
    expect(seats.status).toBe(200);
    expect(seats.body.items.find((i: { account: string }) => i.account === accountId)).toMatchObject({
      plan: 'business',
      seats: 3,
      stripeQuantity: 3,
      drift: 0,
      expectedMrrCents: 9900 + 3 * 2500,
      stripeMrrCents: 9900 + 3 * 2500,
    });

    // When the subscription ends, the account falls back to the plan the tier names.
    await deliver(fake.emit('customer.subscription.deleted', { ...fake.subscriptions.get(subscriptionId)!, status: 'canceled' }));
    expect((await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body).toMatchObject({
      plan: 'free',
      subscription: { status: 'canceled' },
    });
  });
});
