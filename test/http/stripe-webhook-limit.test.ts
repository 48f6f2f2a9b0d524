import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount } from '../support/accounts';
import type { Harness } from '../support/app';
import { startStripeApp, type StripeApp } from '../support/stripe-app';
import type { StripeFake } from '../support/stripe-fake';

const SECRET = 'whsec_limit_test_secret';
const LIMIT = 3;

describe('Stripe webhook brute force', () => {
  let stripe: StripeApp;
  let h: Harness;
  let fake: StripeFake;
  let admin: string;

  beforeAll(async () => {
    stripe = await startStripeApp('webhook_limit', SECRET, { env: { STRIPE_WEBHOOK_FAILURES_PER_MINUTE: String(LIMIT) } });
    ({ h, fake, admin } = stripe);
  });
  afterAll(() => stripe.close());

  /** A webhook delivery from a given client address, signed with `secret` (Stripe's own test helper). */
  const deliver = async (from: string, event: object, secret = SECRET) => {
    const payload = JSON.stringify(event);
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret });
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/stripe/webhooks',
      remoteAddress: from,
      headers: { 'content-type': 'application/json', 'stripe-signature': signature },
      payload,
    });
    return { status: res.statusCode, body: JSON.parse(res.body), headers: res.headers };
  };
  const available = async (accountId: string) =>
    (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.available as string;

  /** A paid top-up of 100 credits and its completion event, not delivered yet. */
  const paidTopUpEvent = async (accountId: string) => {
    const started = await h.request('POST', `/v1/accounts/${accountId}/top-ups`, { key: admin, body: { pack: 'credits-100' } });
    expect(started.status).toBe(201);
    return fake.emit('checkout.session.completed', fake.pay(started.body.sessionId));
  };

  it('answers 429 DL_BILLING_RATE_LIMITED to a client past the limit of bad signatures, and changes nothing', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'enterprise', credits: '5.000000' });
    const event = await paidTopUpEvent(accountId);
    const attacker = '198.51.100.7';
    for (let i = 0; i < LIMIT; i++) {
      const r = await deliver(attacker, event, `whsec_guess_${i}`);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('DL_BILLING_STRIPE_SIGNATURE_INVALID');
    }
    const limited = await deliver(attacker, event, 'whsec_guess_again');
    expect(limited.status).toBe(429);
    expect(limited.body.error).toMatchObject({
      code: 'DL_BILLING_RATE_LIMITED',
      message: expect.any(String),
      retryAfterSeconds: expect.any(Number),
    });
    expect(limited.body.error.retryAfterSeconds).toBeGreaterThan(0);
    expect(limited.body.error.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(limited.headers['retry-after']).toBe(String(limited.body.error.retryAfterSeconds));
    expect(await available(accountId)).toBe('5.000000');

    // Another client is not affected; its bad signature is still a plain 400.
    const other = await deliver('198.51.100.8', event, 'whsec_wrong');
    expect(other.status).toBe(400);
    expect(other.body.error.code).toBe('DL_BILLING_STRIPE_SIGNATURE_INVALID');
    // The API-key limiter counts separately: the limited address still gets in with a good key.
    const withKey = await h.app.inject({
      method: 'GET',
      url: `/v1/accounts/${accountId}/wallet`,
      remoteAddress: attacker,
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(withKey.statusCode).toBe(200);
  });

  it("still applies a correctly signed event from a limited client (it may share Stripe's address)", async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'enterprise', credits: '5.000000' });
    const event = await paidTopUpEvent(accountId);
    const shared = '203.0.113.20';
    for (let i = 0; i < LIMIT; i++) expect((await deliver(shared, event, 'whsec_forged')).status).toBe(400);
    expect((await deliver(shared, event, 'whsec_forged')).status).toBe(429);

    const real = await deliver(shared, event);
    expect(real.status).toBe(200);
    expect(real.body).toMatchObject({ received: true, eventId: (event as { id: string }).id, duplicate: false });
    expect(await available(accountId)).toBe('105.000000');
    // Stripe's retry of the same event is still a duplicate, not a refusal.
    expect((await deliver(shared, event)).body).toMatchObject({ received: true, duplicate: true });
    // Forged ones from that address are still refused with 429.
    expect((await deliver(shared, event, 'whsec_forged')).status).toBe(429);
  });
});
