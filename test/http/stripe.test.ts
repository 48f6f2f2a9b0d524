import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { JobsService } from '../../src/jobs/jobs.service';
import { MembersService } from '../../src/members/members.service';
import { SeatsService } from '../../src/stripe/seats.service';
import { fundedAccount } from '../support/accounts';
import { startApp, startAppOnFreshDatabase, uid, type Harness } from '../support/app';
import { sample } from '../support/prometheus-text';
import { StripeFake } from '../support/stripe-fake';

const SECRET = 'whsec_test_secret';
const SEAT_PRICE = 'price_team_seat_placeholder';

describe('Stripe over HTTP, against the local fake', () => {
  // A database of its own: the seat reconciliation's test counts every live subscription, and another
  // file's, in the shared database, is one this file's Stripe fake does not know.
  let h: Harness;
  let fake: StripeFake;
  let admin: string;

  beforeAll(async () => {
    fake = await new StripeFake().start();
    h = await startAppOnFreshDatabase('stripe_http', {
      env: {
        ...fake.env(SECRET),
        STRIPE_TIMEOUT_MS: '1000',
        STRIPE_MAX_NETWORK_RETRIES: '3',
        STRIPE_PAST_DUE_GRACE_MS: '0',
        DATABASE_POOL_SIZE: '20',
      },
    });
    admin = await h.key('admin');
  });
  afterAll(async () => {
    await h.close();
    await fake.stop();
  });

  const deliver = (event: object, opts: { secret?: string; timestamp?: number; body?: string } = {}) => {
    const payload = JSON.stringify(event);
    const signature = StripeFake.sign(payload, opts.secret ?? SECRET, opts.timestamp);
    return h.request('POST', '/v1/stripe/webhooks', { body: opts.body ?? payload, headers: { 'stripe-signature': signature } });
  };
  const wallet = async (accountId: string) => (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body;

  /** A top-up started through the API and paid in the fake: the paid session. */
  const paidTopUp = async (accountId: string, pack = 'credits-100') => {
    const started = await h.request('POST', `/v1/accounts/${accountId}/top-ups`, { key: admin, body: { pack } });
    expect(started.status).toBe(201);
    return fake.pay(started.body.sessionId);
  };

  it('starts a top-up as a Checkout Session with the account and the pack in it', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'enterprise' });
    const own = await h.key(`account:${accountId}`);
    const started = await h.request('POST', `/v1/accounts/${accountId}/top-ups`, { key: own, body: { pack: 'credits-500' } });
    expect(started.status).toBe(201);
    expect(started.body.checkoutUrl).toMatch(/^https:\/\/checkout\.stripe\.test\//);
    const session = fake.sessions.get(started.body.sessionId)!;
    expect(session).toMatchObject({
      mode: 'payment',
      client_reference_id: accountId,
      metadata: { accountId, pack: 'credits-500', credits: '500.000000' },
    });

    const other = await h.key(`account:${uid('acc')}`);
    expect((await h.request('POST', `/v1/accounts/${accountId}/top-ups`, { key: other, body: { pack: 'credits-500' } })).status).toBe(403);
    const bad = await h.request('POST', `/v1/accounts/${accountId}/top-ups`, { key: own, body: { pack: 'credits-7' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'DL_BILLING_REQUEST_INVALID', findings: [{ field: 'pack' }] });
  });

  it('refuses a bad signature, a stale timestamp and a body changed after signing, changing nothing', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'enterprise', credits: '5.000000' });
    const session = await paidTopUp(accountId);
    const event = fake.emit('checkout.session.completed', session);
    const before = await wallet(accountId);

    const refused = [
      await deliver(event, { secret: 'whsec_someone_else' }),
      await deliver(event, { timestamp: Math.floor(Date.now() / 1000) - 600 }),
      await deliver(event, { body: JSON.stringify(event).replace('"100.000000"', '"100000.000000"') }),
      await h.request('POST', '/v1/stripe/webhooks', { body: JSON.stringify(event) }),
    ];
    for (const r of refused) {
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('DL_BILLING_STRIPE_SIGNATURE_INVALID');
    }
    expect(await wallet(accountId)).toEqual(before);
    expect(await h.ds.query(`SELECT 1 FROM inbox WHERE source = 'stripe' AND message_id = $1`, [event.id])).toHaveLength(0);

    const accepted = await deliver(event);
    expect(accepted.status).toBe(200);
    expect((await wallet(accountId)).total).toBe('105.000000');
  });

  it('credits a top-up once when its checkout.session.completed comes 5 times, some at once, and in another event too', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'enterprise' });
    const session = await paidTopUp(accountId, 'credits-500');
    const event = fake.emit('checkout.session.completed', session);
    const answers = [
      ...(await Promise.all([deliver(event), deliver(event), deliver(event)])),
      await deliver(event),
      await deliver(event),
      // Another event carrying the same session (e.g. async_payment_succeeded): still once per session.
      await deliver(fake.emit('checkout.session.async_payment_succeeded', session)),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(answers.slice(0, 5).filter((a) => !a.body.duplicate)).toHaveLength(1);
    const w = await wallet(accountId);
    expect(w.total).toBe('500.000000');
    expect(w.grants).toHaveLength(1);
    expect(w.grants[0]).toMatchObject({ source: 'top_up', remaining: '500.000000', expiresAt: null });
    // One credits.granted for the top-up, whatever the number of deliveries.
    const notes = await h.ds.query(
      `SELECT payload FROM outbox WHERE key = $1 AND payload->>'type' = 'credits.granted' AND payload->'data'->>'source' = 'top_up'`,
      [accountId],
    );
    expect(notes.map((n: { payload: { data: unknown } }) => n.payload.data)).toEqual([
      { grantId: w.grants[0].id, source: 'top_up', credits: '500.000000', expiresAt: null, sessionId: session.id },
    ]);
  });

  it('does not credit an unpaid session, and acknowledges unknown event types', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'enterprise' });
    const started = await h.request('POST', `/v1/accounts/${accountId}/top-ups`, { key: admin, body: { pack: 'credits-100' } });
    const unpaid = { ...fake.sessions.get(started.body.sessionId)!, status: 'complete', payment_status: 'unpaid' };
    expect((await deliver(fake.emit('checkout.session.completed', unpaid))).status).toBe(200);
    const unknown = await deliver(fake.emit('customer.tax_id.created', { id: 'txi_1', object: 'tax_id' }));
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ received: true, ignored: true });
    expect((await wallet(accountId)).total).toBe('0.000000');
  });

  it('claws back what is left of a refunded or disputed top-up, never below zero, audited', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'enterprise', credits: '10.000000' });
    const session = await paidTopUp(accountId);
    await deliver(fake.emit('checkout.session.completed', session));
    expect((await wallet(accountId)).total).toBe('110.000000');
    const clawedBack = async (): Promise<number> =>
      sample((await h.request('GET', '/metrics')).body as string, 'dl_billing_credits_microcredits_total', { flow: 'clawed_back' });
    const clawedBefore = await clawedBack();
    const charge = { id: uid('ch'), object: 'charge', payment_intent: session.payment_intent, amount: 1000, amount_refunded: 250 };
    const partial = fake.emit('charge.refunded', charge);
    await deliver(partial);
    await deliver(partial);
    expect((await wallet(accountId)).total).toBe('85.000000');
    await deliver(fake.emit('charge.refunded', { ...charge, amount_refunded: 1000 }));
    expect((await wallet(accountId)).total).toBe('10.000000');
    // The 100 credits of the top-up, taken back in two claw-backs.
    expect((await clawedBack()) - clawedBefore).toBe(100_000_000);
    await deliver(
      fake.emit('charge.dispute.created', { id: uid('dp'), object: 'dispute', payment_intent: session.payment_intent, amount: 1000 }),
    );
    expect((await wallet(accountId)).total).toBe('10.000000');
    const audit = await h.request('GET', `/v1/audit?accountId=${accountId}`, { key: admin });
    const actions = (audit.body.items ?? audit.body).map((a: { action: string }) => a.action);
    expect(actions.filter((a: string) => a === 'credits.clawed_back')).toHaveLength(2);
    // The holder is told of each, once (the partial refund was delivered twice).
    const told: { payload: { type: string; data: Record<string, unknown> } }[] = await h.ds.query(
      `SELECT payload FROM outbox WHERE key = $1 AND payload->>'type' = 'credits.clawed_back' ORDER BY id`,
      [accountId],
    );
    expect(told.map((t) => t.payload.data)).toEqual([
      expect.objectContaining({ credits: '25.000000', reason: 'refund', chargeId: charge.id, topUpSession: session.id }),
      expect.objectContaining({ credits: '75.000000', reason: 'refund', chargeId: charge.id, topUpSession: session.id }),
    ]);
  });

  it('claws back a refund that came before the checkout of its top-up, when the checkout comes', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'enterprise', credits: '10.000000' });
    const session = await paidTopUp(accountId);
    const refund = fake.emit('charge.refunded', {
      id: uid('ch'),
      object: 'charge',
      payment_intent: session.payment_intent,
      amount: 3000,
      amount_refunded: 3000,
    });
    const early = await deliver(refund);
    expect(early.status).toBe(200);
    expect(early.body).toMatchObject({ ignored: true, waiting: `no top-up paid by ${session.payment_intent} is recorded yet` });
    expect((await wallet(accountId)).total).toBe('10.000000');
    // The recovery job sees it waiting: neither applied nor a problem.
    const recovery = await h.request('POST', '/v1/admin/jobs/stripe-recovery/run', { key: admin });
    expect(recovery.body.result).toMatchObject({ waiting: 1, problems: 0 });
    // The checkout comes: the top-up is credited, and the refund that came first takes it back at once.
    await deliver(fake.emit('checkout.session.completed', session));
    expect((await wallet(accountId)).total).toBe('10.000000');
    expect(await h.ds.query(`SELECT clawed_back::text FROM stripe_top_ups WHERE session_id = $1`, [session.id])).toEqual([
      { clawed_back: '100000000' },
    ]);
    // Once: the refund delivered again, or seen again by the recovery job, takes nothing more.
    await deliver(refund);
    await h.request('POST', '/v1/admin/jobs/stripe-recovery/run', { key: admin });
    expect((await wallet(accountId)).total).toBe('10.000000');
    const audit = (await h.request('GET', `/v1/audit?accountId=${accountId}`, { key: admin })).body.items as { action: string }[];
    expect(audit.filter((a) => a.action === 'credits.clawed_back')).toHaveLength(1);
  });

  it('answers a checkout 200 once its top-up is credited, even when Stripe cannot list the refund waiting for it; the recovery job applies that', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'enterprise', credits: '10.000000' });
    const session = await paidTopUp(accountId);
    const charge = { id: uid('ch'), object: 'charge', payment_intent: session.payment_intent, amount: 3000, amount_refunded: 3000 };
    await deliver(fake.emit('charge.refunded', charge));
    const checkout = fake.emit('checkout.session.completed', session);
    fake.outage = true;
    const delivered = await deliver(checkout);
    fake.outage = false;
    expect(delivered.status).toBe(200);
    expect((await wallet(accountId)).total).toBe('110.000000');
    const recovery = await h.request('POST', '/v1/admin/jobs/stripe-recovery/run', { key: admin });
    expect(recovery.body.result).toMatchObject({ waiting: 0, problems: 0 });
    expect((await wallet(accountId)).total).toBe('10.000000');
  });

  it('downgrades a subscription Stripe cancelled, even when an invoice event created after the cancellation came first', async () => {
    const { accountId, subscriptionId } = await teamAccount();
    const t = Math.floor(Date.now() / 1000) + 100;
    const invoice = fake.invoice(subscriptionId, { created: t - 10 });
    await deliver(fake.emit('invoice.payment_failed', invoice, t - 10));
    // The customer pays the open invoice after Stripe cancelled the subscription; the payment is delivered first.
    await deliver(fake.emit('invoice.paid', { ...invoice, status: 'paid' }, t + 5));
    await deliver(fake.emit('customer.subscription.deleted', { ...fake.subscriptions.get(subscriptionId)!, status: 'canceled' }, t));
    const view = (await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body;
    expect(view).toMatchObject({ plan: 'free', subscription: { status: 'canceled' } });
  });

  it("keeps a seat quantity changed on Stripe's side when its subscription event comes after a later invoice event", async () => {
    const { accountId, subscriptionId } = await teamAccount();
    const t = Math.floor(Date.now() / 1000) + 100;
    await deliver(fake.emit('invoice.paid', fake.invoice(subscriptionId, { created: t + 5 }), t + 5));
    // 4 seats set in Stripe's Dashboard at t; its event is delivered after the invoice's.
    const changed = structuredClone(fake.subscriptions.get(subscriptionId)!);
    const seatItem = (changed.items as { data: { price: { id: string }; quantity: number }[] }).data.find(
      (i) => i.price.id === SEAT_PRICE,
    )!;
    seatItem.quantity = 4;
    expect((await deliver(fake.emit('customer.subscription.updated', changed, t))).status).toBe(200);
    const view = (await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body;
    expect(view).toMatchObject({ plan: 'team', subscription: { status: 'active', seatQuantity: 4 } });
    // An older one still changes nothing.
    seatItem.quantity = 2;
    await deliver(fake.emit('customer.subscription.updated', changed, t - 50));
    expect((await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body.subscription.seatQuantity).toBe(4);
  });

  it('explains each claw-back in the ledger: the charge reversed, the top-up session and the amount taken back', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'enterprise' });
    const session = await paidTopUp(accountId);
    await deliver(fake.emit('checkout.session.completed', session));
    const grant = (await wallet(accountId)).grants[0].id;
    const charge = { id: uid('ch'), object: 'charge', payment_intent: session.payment_intent, amount: 1000, amount_refunded: 250 };
    expect((await deliver(fake.emit('charge.refunded', charge))).status).toBe(200);
    // 60 credits are spent (reserved) before the dispute: only what is left unspent is taken back.
    const cp = await h.key('control-plane');
    const runtimeId = uid('rt');
    const reserved = await h.request('POST', '/v1/reservations', {
      key: cp,
      body: { accountId, runtimeId, variant: 'datalayer', environment: { name: 'big', sizeClass: 'large' }, minutes: 514 },
    });
    expect(reserved.status, JSON.stringify(reserved.body)).toBe(201);
    const dispute = { id: uid('dp'), object: 'dispute', charge: charge.id, payment_intent: session.payment_intent, amount: 1000 };
    expect((await deliver(fake.emit('charge.dispute.created', dispute))).status).toBe(200);

    const own = await h.key(`account:${accountId}`);
    const ledger = await h.request('GET', `/v1/accounts/${accountId}/ledger`, { key: own });
    expect(ledger.status).toBe(200);
    const clawBacks = ledger.body.items.filter((e: { kind: string; explanation: string }) => e.kind === 'adjustment');
    const left = reserved.body.balance.available;
    expect(left).toBe('15.033333');
    expect(clawBacks.map((e: { amount: string; explanation: string }) => [e.amount, e.explanation])).toEqual([
      [
        `-${left}`,
        `Clawed back ${left} credits of the top-up paid in Checkout session ${session.id} (grant ${grant}): Stripe charge ${charge.id} was disputed (dispute ${dispute.id}); 75.000000 reversed, only ${left} of them left unspent.`,
      ],
      [
        '-25.000000',
        `Clawed back 25.000000 credits of the top-up paid in Checkout session ${session.id} (grant ${grant}): Stripe charge ${charge.id} was refunded.`,
      ],
    ]);
    expect(JSON.stringify(ledger.body.items)).not.toMatch(/hold null|corrected from 0\.000000/);
  });

  /** A Team account with a subscription in the fake. */
  const teamAccount = async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'team', kind: 'organization' });
    const created = await h.request('POST', `/v1/admin/accounts/${accountId}/subscription`, { key: admin });
    expect(created.status).toBe(201);
    return { accountId, subscriptionId: created.body.subscription.id as string };
  };

  it('ends the same whether invoice.paid comes before or after customer.subscription.updated for the cycle', async () => {
    const base = Math.floor(Date.now() / 1000);
    const period = { start: base - 86_400, end: base + 29 * 86_400 };
    const run = async (order: 'invoice-first' | 'subscription-first') => {
      const { accountId, subscriptionId } = await teamAccount();
      // The previous invoice failed: past due, suspended (grace 0).
      await deliver(
        fake.emit(
          'invoice.payment_failed',
          fake.invoice(subscriptionId, { periodStart: period.start - 30 * 86_400, periodEnd: period.start }),
          base - 100,
        ),
      );
      const sub = structuredClone(fake.subscriptions.get(subscriptionId)!);
      sub.billing_cycle_anchor = period.start;
      for (const i of sub.items.data) Object.assign(i, { current_period_start: period.start, current_period_end: period.end });
      const updated = fake.emit('customer.subscription.updated', { ...sub, status: 'active' }, base + 10);
      const paid = fake.emit(
        'invoice.paid',
        fake.invoice(subscriptionId, { periodStart: period.start, periodEnd: period.end, created: base }),
        base + 5,
      );
      for (const e of order === 'invoice-first' ? [paid, updated] : [updated, paid]) expect((await deliver(e)).status).toBe(200);
      const view = (await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body;
      const w = await wallet(accountId);
      return {
        view: { ...view, accountId: null, subscription: { ...view.subscription, id: null, customerId: null } },
        wallet: {
          total: w.total,
          grants: w.grants.map((g: Record<string, unknown>) => ({ ...g, id: null })),
          runs: { ...w.runs, allowance: { ...w.runs.allowance, grantId: null } },
        },
      };
    };
    const a = await run('invoice-first');
    const b = await run('subscription-first');
    expect(a).toEqual(b);
    expect(a.view).toMatchObject({
      plan: 'team',
      accountStatus: 'active',
      billingCycleAnchor: new Date(period.start * 1000).toISOString(),
      subscription: {
        status: 'active',
        pastDueSince: null,
        currentPeriod: { start: new Date(period.start * 1000).toISOString(), end: new Date(period.end * 1000).toISOString() },
      },
    });
    expect(a.wallet.grants).toEqual([
      expect.objectContaining({ source: 'plan_allowance', remaining: '500.000000', expiresAt: new Date(period.end * 1000).toISOString() }),
    ]);
  });

  it('grants the cycle allowance once: an invoice of seat prorations only, paid within the cycle, grants nothing and keeps the cycle', async () => {
    const { accountId, subscriptionId } = await teamAccount();
    const cycle = fake.invoice(subscriptionId);
    expect((await deliver(fake.emit('invoice.paid', cycle))).status).toBe(200);
    const before = (await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body;
    expect((await wallet(accountId)).total).toBe('500.000000');
    // A seat added mid-cycle and invoiced at once (always_invoice): the unused time of 1 seat, the rest of the cycle for 2.
    const now = Math.floor(Date.now() / 1000);
    const end = cycle.lines.data[0].period.end as number;
    const added = (cycle.lines.data[0].period.start as number) + 3600;
    const seatPrice = cycle.lines.data[1].pricing.price_details.price as string;
    const prorationLine = (quantity: number, amount: number) => ({
      id: uid('il'),
      object: 'line_item',
      quantity,
      amount,
      currency: 'usd',
      period: { start: added, end },
      pricing: { price_details: { price: seatPrice } },
      parent: { type: 'subscription_item_details', subscription_item_details: { proration: true, subscription: subscriptionId } },
    });
    const prorations = {
      ...cycle,
      id: uid('in_prorate'),
      created: now + 1,
      billing_reason: 'subscription_update',
      lines: { object: 'list', data: [prorationLine(1, -1400), prorationLine(2, 2800)] },
      period_start: added,
      period_end: added,
      total: 1400,
      amount_paid: 1400,
    };
    expect((await deliver(fake.emit('invoice.paid', prorations, now + 2))).status).toBe(200);
    const w = await wallet(accountId);
    expect(w.total).toBe('500.000000');
    expect(w.grants.filter((g: { source: string }) => g.source === 'plan_allowance')).toHaveLength(1);
    const after = (await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body;
    expect(after.subscription.currentPeriod).toEqual(before.subscription.currentPeriod);
    const [recorded] = await h.ds.query(`SELECT status, total_cents FROM stripe_invoices WHERE invoice_id = $1`, [prorations.id]);
    expect(recorded).toEqual({ status: 'paid', total_cents: '1400' });
  });

  it('links a subscription started through Checkout, moves the account to Team and sets its seats to the active members at once', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'free', kind: 'organization' });
    expect((await h.request('PUT', `/v1/accounts/${accountId}/members/alice`, { key: admin })).status).toBe(200);
    // Checkout was started for 5 seats; the account has 1 active member.
    const { subscription: sub, session } = fake.teamCheckout(accountId, 5);
    const answer = await deliver(fake.emit('checkout.session.completed', session));
    expect(answer.body).toMatchObject({ received: true, duplicate: false, ignored: false });
    const view = (await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body;
    expect(view).toMatchObject({ plan: 'team', subscription: { id: sub.id, status: 'active', seatQuantity: 1 } });
    expect(fake.seatItem(sub.id, SEAT_PRICE).quantity).toBe(1);
    // What is left of this month's Free credits stays until the month ends; Team's come with its paid invoice.
    expect(await wallet(accountId)).toMatchObject({
      total: '50.000000',
      grants: [expect.objectContaining({ source: 'plan_allowance', amount: '50.000000' })],
    });
  });

  it('goes past due, suspends after the grace period, notifies once; deletion downgrades to Free', async () => {
    const { accountId, subscriptionId } = await teamAccount();
    const failed = fake.emit('invoice.payment_failed', fake.invoice(subscriptionId));
    await deliver(failed);
    await deliver(failed);
    let view = (await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body;
    expect(view).toMatchObject({ plan: 'team', accountStatus: 'suspended', subscription: { status: 'past_due' } });
    const notes = await h.ds.query(
      `SELECT payload->>'type' AS type FROM outbox WHERE key = $1 AND payload->>'type' = 'subscription.past_due'`,
      [accountId],
    );
    expect(notes).toHaveLength(1);
    await deliver(fake.emit('customer.subscription.deleted', { ...fake.subscriptions.get(subscriptionId)!, status: 'canceled' }));
    view = (await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body;
    expect(view).toMatchObject({ plan: 'free', billingCycleAnchor: null, subscription: { status: 'canceled' } });
    // Free's credits for this month come with the downgrade, not at the first launch or the next reset; once.
    const allowances = async () =>
      ((await wallet(accountId)).grants as { source: string; amount: string }[]).filter((g) => g.source === 'plan_allowance');
    expect(await allowances()).toEqual([expect.objectContaining({ amount: '50.000000' })]);
    await deliver(fake.emit('customer.subscription.deleted', { ...fake.subscriptions.get(subscriptionId)!, status: 'canceled' }));
    expect(await allowances()).toHaveLength(1);
  });

  it('keeps an account whose invoice is paid active when a failure of that invoice comes after, in the same second', async () => {
    const { accountId, subscriptionId } = await teamAccount();
    const created = Math.floor(Date.now() / 1000) + 1;
    const invoice = fake.invoice(subscriptionId, { created });
    await deliver(fake.emit('invoice.paid', { ...invoice, status: 'paid' }, created));
    expect((await deliver(fake.emit('invoice.payment_failed', invoice, created))).status).toBe(200);
    const view = (await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body;
    expect(view).toMatchObject({ plan: 'team', accountStatus: 'active', subscription: { status: 'active', pastDueSince: null } });
    const notes = await h.ds.query(`SELECT 1 FROM outbox WHERE key = $1 AND payload->>'type' = 'subscription.past_due'`, [accountId]);
    expect(notes).toEqual([]);
  });

  it("grants nothing for an invoice of a cancelled subscription paid later, and keeps the account's plan and cycle", async () => {
    const { accountId, subscriptionId } = await teamAccount();
    await deliver(fake.emit('customer.subscription.deleted', { ...fake.subscriptions.get(subscriptionId)!, status: 'canceled' }));
    const before = (await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body;
    expect(before).toMatchObject({ plan: 'free', subscription: { status: 'canceled' } });
    const totalBefore = (await wallet(accountId)).total;
    const start = Math.floor(Date.now() / 1000) + 86_400;
    const paid = await deliver(
      fake.emit('invoice.paid', fake.invoice(subscriptionId, { periodStart: start, periodEnd: start + 30 * 86_400, created: start })),
    );
    expect(paid.status).toBe(200);
    expect((await wallet(accountId)).total).toBe(totalBefore);
    expect((await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body).toEqual(before);
  });

  it('writes no seat change for removing someone who never was a member', async () => {
    const { accountId } = await teamAccount();
    const removed = await h.request('DELETE', `/v1/accounts/${accountId}/members/nobody`, { key: admin });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ active: false, seats: 0 });
    expect(await h.ds.query(`SELECT action FROM audit_log WHERE account_id = $1 AND action LIKE 'seat.%'`, [accountId])).toEqual([]);
  });

  it("pushes the members' count even when the quantity recorded here already equals it (the record can be behind Stripe's)", async () => {
    const { accountId, subscriptionId } = await teamAccount();
    const seats = h.app.get(SeatsService);
    for (const user of ['a', 'b', 'c']) await h.request('PUT', `/v1/accounts/${accountId}/members/${user}`, { key: admin });
    await seats.idle();
    const item = fake.seatItem(subscriptionId, SEAT_PRICE);
    expect(item.quantity).toBe(3);
    // A fourth member while Stripe is down: the push fails, the record here stays at 3.
    fake.outage = true;
    await h.request('PUT', `/v1/accounts/${accountId}/members/d`, { key: admin });
    await seats.idle();
    fake.outage = false;
    // Someone sets 4 in Stripe's dashboard; its event is not applied here (it came after a later invoice event).
    fake.setQuantity(String(item.id), 4);
    // The fourth member leaves: 3 members, as the record says, but Stripe bills 4 until this push.
    await h.request('DELETE', `/v1/accounts/${accountId}/members/d`, { key: admin });
    await seats.idle();
    expect(fake.seatItem(subscriptionId, SEAT_PRICE).quantity).toBe(3);
  });

  it('pushes a return to an earlier seat count under a new key, even when the change making it occurred before the newest one', async () => {
    const { accountId, subscriptionId } = await teamAccount();
    const members = h.app.get(MembersService);
    const quantity = () => fake.seatItem(subscriptionId, SEAT_PRICE).quantity;
    // Changes as the membership topic delivers them: late, with an occurredAt before the newest change.
    const late = async (type: 'member.added' | 'member.removed', minutesAgo: number) => {
      const occurredAt = new Date(Date.now() - minutesAgo * 60_000);
      await h.ds.transaction((em) => members.apply(em, [{ id: uid('evt'), type, occurredAt, accountId, userId: 'bob' }], 'kafka', 'test'));
      members.seatsChanged([accountId]);
      await h.app.get(SeatsService).idle();
    };
    await h.request('PUT', `/v1/accounts/${accountId}/members/ada`, { key: admin });
    await h.app.get(SeatsService).idle();
    expect(quantity()).toBe(1);
    await late('member.added', 60);
    expect(quantity()).toBe(2);
    await late('member.removed', 30);
    expect((await h.request('GET', `/v1/accounts/${accountId}/members`, { key: admin })).body.seats).toBe(1);
    // Stripe bills the seat no more: the push of 1 was not a replay of the first push of 1.
    expect(quantity()).toBe(1);
    const seatWrites = fake.requests.filter((r) => r.path === `/v1/subscription_items/${fake.seatItem(subscriptionId, SEAT_PRICE).id}`);
    expect(seatWrites.map((r) => r.replayed)).toEqual([false, false, false]);
  });

  it('keeps the seat quantity absolute through random churn, retries a timed-out call into one object, and reconciles drift', async () => {
    // The subscription create answers after the SDK's timeout (1 s), though the fake created it: the retry replays it.
    fake.delayAfterCommit((m, p) => m === 'POST' && p === '/v1/subscriptions', 2_500);
    const subsBefore = fake.subscriptions.size;
    const { accountId, subscriptionId } = await teamAccount();
    expect(fake.subscriptions.size).toBe(subsBefore + 1);
    expect(fake.requests.filter((r) => r.path === '/v1/subscriptions' && r.replayed).length).toBeGreaterThanOrEqual(1);

    const users = Array.from({ length: 8 }, (_, i) => `u${i}`);
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    // A seat update that times out after succeeding, in the middle of the churn.
    fake.delayAfterCommit((m, p) => m === 'POST' && p.startsWith('/v1/subscription_items/'), 2_500);
    for (let round = 0; round < 10; round++) {
      await Promise.all(
        Array.from({ length: 4 }, () => {
          const user = users[Math.floor(random() * users.length)]!;
          return h.request(random() < 0.6 ? 'PUT' : 'DELETE', `/v1/accounts/${accountId}/members/${user}`, { key: admin });
        }),
      );
    }
    await h.app.get(SeatsService).idle();
    const members = (await h.request('GET', `/v1/accounts/${accountId}/members`, { key: admin })).body;
    const seatItem = fake.seatItem(subscriptionId, SEAT_PRICE);
    expect(seatItem.quantity).toBe(members.seats);
    // The seat update that timed out was retried by the SDK under its key and replayed, not applied twice.
    expect(fake.requests.filter((r) => r.path.startsWith('/v1/subscription_items/') && r.replayed).length).toBeGreaterThanOrEqual(1);

    // Drift behind the service's back; reconciliation sets it right, records and audits it.
    fake.setQuantity(seatItem.id, members.seats + 3);
    const run = await h.request('POST', '/v1/admin/jobs/seat-reconciliation/run', { key: admin });
    expect(run.status).toBe(200);
    expect(run.body.result.corrected).toEqual([
      { accountId, subscriptionId, stripeQuantity: members.seats + 3, activeSeats: members.seats },
    ]);
    expect(fake.seatItem(subscriptionId, SEAT_PRICE).quantity).toBe(members.seats);
    const found = await h.request('GET', `/v1/admin/reconciliation/discrepancies?accountId=${accountId}`, { key: admin });
    expect(found.body.items).toEqual([
      expect.objectContaining({ kind: 'quantity_drift', stripeQuantity: members.seats + 3, activeSeats: members.seats }),
    ]);
    const again = await h.request('POST', '/v1/admin/reconciliation/run', { key: admin });
    expect(again.body.result.corrected.filter((c: { accountId: string }) => c.accountId === accountId)).toEqual([]);
    expect(fake.writesWithoutKey()).toEqual([]);
  });

  it('says what a seat reconciliation left undone, and fails a run that could check no subscription (Stripe down)', async () => {
    const { subscriptionId } = await teamAccount();
    const jobRun = async () => (await h.app.get(JobsService).lastRuns()).find((r) => r.job === 'seat-reconciliation')!;
    const problems = async () =>
      sample(String((await h.request('GET', '/metrics')).body), 'dl_billing_job_last_problems', { job_name: 'seat-reconciliation' });
    // One subscription Stripe no longer knows: the others are checked, that one is listed, the run succeeds with 1 problem.
    const gone = fake.subscriptions.get(subscriptionId)!;
    fake.subscriptions.delete(subscriptionId);
    const partial = await h.request('POST', '/v1/admin/jobs/seat-reconciliation/run', { key: admin });
    expect(partial.status).toBe(200);
    expect(partial.body.result.failed).toEqual([expect.objectContaining({ error: expect.stringContaining('Stripe refused the request') })]);
    expect(partial.body.result).toMatchObject({ problems: 1 });
    expect(partial.body.result.checked).toBeGreaterThan(1);
    expect(await jobRun()).toMatchObject({ outcome: 'succeeded' });
    expect(await problems()).toBe(1);
    fake.subscriptions.set(subscriptionId, gone);
    // Stripe down: no subscription can be checked; the run failed, and says why.
    fake.outage = true;
    const down = await h.request('POST', '/v1/admin/jobs/seat-reconciliation/run', { key: admin });
    fake.outage = false;
    expect(down.status).toBe(503);
    expect(down.body.error).toMatchObject({ code: 'DL_BILLING_UNAVAILABLE', message: 'Stripe cannot be reached now; try again later' });
    expect(await jobRun()).toMatchObject({ outcome: 'failed', error: 'Stripe cannot be reached now; try again later' });
    const back = await h.request('POST', '/v1/admin/reconciliation/run', { key: admin });
    expect(back.body.result).toMatchObject({ failed: [], problems: 0 });
    expect(await jobRun()).toMatchObject({ outcome: 'succeeded' });
    expect(await problems()).toBe(0);
  });

  it('flags an invoice billed for other seats than were active', async () => {
    const { accountId, subscriptionId } = await teamAccount();
    await h.request('PUT', `/v1/accounts/${accountId}/members/alice`, { key: admin });
    await h.app.get(SeatsService).idle();
    await deliver(fake.emit('invoice.paid', fake.invoice(subscriptionId, { seatQuantity: 4, created: Math.floor(Date.now() / 1000) + 1 })));
    const found = await h.request('GET', `/v1/admin/reconciliation/discrepancies?accountId=${accountId}`, { key: admin });
    expect(found.body.items).toEqual([expect.objectContaining({ kind: 'invoice_seats', stripeQuantity: 4, activeSeats: 1 })]);
  });

  it('recovers events the webhook missed from the events list, once', async () => {
    const { accountId, subscriptionId } = await teamAccount();
    fake.emit('invoice.paid', fake.invoice(subscriptionId)); // never delivered
    const first = await h.request('POST', '/v1/admin/jobs/stripe-recovery/run', { key: admin });
    expect(first.status).toBe(200);
    expect(first.body.result.applied).toBeGreaterThanOrEqual(1);
    expect((await wallet(accountId)).total).toBe('500.000000');
    const second = await h.request('POST', '/v1/admin/jobs/stripe-recovery/run', { key: admin });
    expect(second.body.result.applied).toBe(0);
    expect((await wallet(accountId)).total).toBe('500.000000');
  });
});

describe('Stripe past-due grace period (manual clock)', () => {
  let h: Harness;
  let fake: StripeFake;
  let admin: string;
  const clock = new ManualClock();

  beforeAll(async () => {
    fake = await new StripeFake().start();
    h = await startApp({
      clock,
      env: { ...fake.env(SECRET), STRIPE_PAST_DUE_GRACE_MS: String(24 * 3_600_000) },
    });
    admin = await h.key('admin');
  });
  afterAll(async () => {
    await h.close();
    await fake.stop();
  });

  it('suspends a past-due account only once the grace period is over, and reactivates it when the invoice is paid', async () => {
    const deliver = (event: object) => {
      const payload = JSON.stringify(event);
      return h.request('POST', '/v1/stripe/webhooks', { body: payload, headers: { 'stripe-signature': StripeFake.sign(payload, SECRET) } });
    };
    const status = async (accountId: string) => (await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body;
    const accountId = await fundedAccount(h, admin, { plan: 'team', kind: 'organization' });
    const subscriptionId = (await h.request('POST', `/v1/admin/accounts/${accountId}/subscription`, { key: admin })).body.subscription
      .id as string;
    const invoice = fake.invoice(subscriptionId);
    await deliver(fake.emit('invoice.payment_failed', invoice));
    expect(await status(accountId)).toMatchObject({ accountStatus: 'active', subscription: { status: 'past_due' } });

    clock.advance(23 * 3_600_000);
    const early = await h.request('POST', '/v1/admin/jobs/stripe-recovery/run', { key: admin });
    expect(early.body.result.suspended).toEqual([]);
    expect((await status(accountId)).accountStatus).toBe('active');

    clock.advance(3_600_000);
    const due = await h.request('POST', '/v1/admin/jobs/stripe-recovery/run', { key: admin });
    expect(due.body.result.suspended).toEqual([accountId]);
    expect(await status(accountId)).toMatchObject({ accountStatus: 'suspended', subscription: { status: 'past_due' } });

    await deliver(fake.emit('invoice.paid', invoice, Math.floor(Date.now() / 1000) + 1));
    expect(await status(accountId)).toMatchObject({ accountStatus: 'active', subscription: { status: 'active', pastDueSince: null } });
  });
});
