import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SeatsService } from '../../src/stripe/seats.service';
import { fundedAccount } from '../support/accounts';
import { type Harness } from '../support/app';
import { startStripeApp, type StripeApp } from '../support/stripe-app';
import { StripeFake } from '../support/stripe-fake';

const SECRET = 'whsec_test_out_of_order';
const SEAT_PRICE = 'price_team_seat_placeholder';

/** Events around a Team subscription's start and end, in the orders Stripe sends them: against the local fake. */
describe('Stripe: a Team subscription started and ended, events in any order', () => {
  let h: Harness;
  let fake: StripeFake;
  let admin: string;

  let deliver: StripeApp['deliver'];

  beforeAll(async () => {
    ({ h, fake, admin, deliver } = await startStripeApp('stripe_order', SECRET, { env: { STRIPE_PAST_DUE_GRACE_MS: '0' } }));
  });
  afterAll(() => h.close().then(() => fake.stop()));

  const subscription = async (accountId: string) => (await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body;
  const reserve = async (accountId: string) =>
    h.request('POST', '/v1/reservations', {
      key: admin,
      body: {
        accountId,
        runtimeId: `rt_${accountId}_${Date.now()}`,
        variant: 'datalayer',
        environment: { name: 'python', sizeClass: 'small' },
      },
    });
  /** A Team organization with its subscription created through the API. */
  const teamAccount = async (overrides?: Record<string, string>) => {
    const accountId = await fundedAccount(h, admin, { plan: 'free', kind: 'organization' });
    const plan = await h.request('PUT', `/v1/admin/accounts/${accountId}/plan`, {
      key: admin,
      body: { plan: 'team', ...(overrides ? { overrides } : {}) },
    });
    expect(plan.status, JSON.stringify(plan.body)).toBe(200);
    const created = await h.request('POST', `/v1/admin/accounts/${accountId}/subscription`, { key: admin });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { accountId, subscriptionId: created.body.subscription.id as string };
  };
  /** A Free organization and a Team subscription made on Stripe's side that names it in its metadata (not delivered yet). */
  const subscribedOrganization = async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'free', kind: 'organization' });
    const prices = [
      { price: 'price_team_base_placeholder', quantity: 1 },
      { price: SEAT_PRICE, quantity: 1 },
    ];
    return { accountId, sub: fake.subscribe(prices, { accountId }) };
  };
  const cancelled = (subscriptionId: string, created?: number) =>
    fake.emit('customer.subscription.deleted', { ...fake.subscriptions.get(subscriptionId)!, status: 'canceled' }, created);

  it('grants the cycle of an invoice paid before Checkout linked its subscription, once the checkout comes', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'free', kind: 'organization' });
    expect((await h.request('PUT', `/v1/accounts/${accountId}/members/alice`, { key: admin })).status).toBe(200);
    // Made by Checkout: nothing in the subscription names the account; only the session does.
    const { subscription: sub, session } = fake.teamCheckout(accountId, 1);
    const paid = fake.emit('invoice.paid', fake.invoice(sub.id));
    const early = await deliver(paid, 503);
    expect(early.body.error.code).toBe('DL_BILLING_UNAVAILABLE');
    await deliver(fake.emit('checkout.session.completed', session));
    const allowances = async () =>
      ((await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.grants as { source: string; amount: string }[])
        .filter((g) => g.source === 'plan_allowance')
        .map((g) => g.amount)
        .sort();
    // Free's 50 of the month, and Team's 500 of the paid cycle.
    expect(await allowances()).toEqual(['50.000000', '500.000000']);
    // Stripe delivering it again, and the recovery job, change nothing.
    expect((await deliver(paid)).body).toMatchObject({ duplicate: true });
    expect((await h.request('POST', '/v1/admin/jobs/stripe-recovery/run', { key: admin })).status).toBe(200);
    expect(await allowances()).toEqual(['50.000000', '500.000000']);
  });

  it('applies a failed first payment that came before Checkout linked its subscription once the checkout comes: Stripe says active, so not past due', async () => {
    for (const order of ['failure first', 'checkout first'] as const) {
      const accountId = await fundedAccount(h, admin, { plan: 'free', kind: 'organization' });
      // Stripe's record of the subscription says active by now: the first payment failed, then Checkout's retry paid it.
      const { subscription: sub, session } = fake.teamCheckout(accountId, 1);
      const at = Math.floor(Date.now() / 1000);
      const invoice = fake.invoice(sub.id);
      const failed = fake.emit('invoice.payment_failed', invoice, at);
      const completed = fake.emit('checkout.session.completed', session, at);
      if (order === 'failure first') {
        expect((await deliver(failed, 503)).body.error.code, order).toBe('DL_BILLING_UNAVAILABLE');
        await deliver(completed);
      } else {
        // The checkout replays the failure from Stripe's events; Stripe's own delivery comes after.
        await deliver(completed);
      }
      expect((await deliver(failed)).body, order).toMatchObject({ duplicate: true });
      // (With no grace period, a past due account is suspended at once.)
      expect(await subscription(accountId), order).toMatchObject({
        plan: 'team',
        accountStatus: 'active',
        subscription: { id: sub.id, status: 'active', pastDueSince: null },
      });
      expect(
        await h.ds.query(`SELECT 1 FROM outbox WHERE key = $1 AND payload->>'type' = 'subscription.past_due'`, [accountId]),
        order,
      ).toEqual([]);
      expect((await reserve(accountId)).status, order).toBe(201);
      // The failure is kept with the invoice's record.
      expect(await h.ds.query(`SELECT status FROM stripe_invoices WHERE invoice_id = $1`, [invoice.id]), order).toEqual([
        { status: 'payment_failed' },
      ]);
    }
  });

  it('makes a subscription Checkout linked past due when Stripe reports it past due: a failure replayed by the checkout', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'free', kind: 'organization' });
    const { subscription: sub, session } = fake.teamCheckout(accountId, 1);
    // Stripe's record: the payment failed and was not made good.
    fake.subscriptions.get(sub.id)!.status = 'past_due';
    const failed = fake.emit('invoice.payment_failed', fake.invoice(sub.id));
    expect((await deliver(failed, 503)).body.error.code).toBe('DL_BILLING_UNAVAILABLE');
    await deliver(fake.emit('checkout.session.completed', session));
    expect(await subscription(accountId)).toMatchObject({ plan: 'team', subscription: { id: sub.id, status: 'past_due' } });
    expect(
      await h.ds.query(`SELECT 1 FROM outbox WHERE key = $1 AND payload->>'type' = 'subscription.past_due'`, [accountId]),
    ).toHaveLength(1);
    expect((await deliver(failed)).body).toMatchObject({ duplicate: true });
  });

  it('downgrades to Free without the Team overrides: no Free credits beyond the 50 of the month', async () => {
    const { accountId, subscriptionId } = await teamAccount({ includedCredits: '800.000000' });
    const before = (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.total as string;
    await deliver(cancelled(subscriptionId));
    const plan = (await h.request('GET', `/v1/admin/accounts/${accountId}/plan`, { key: admin })).body;
    expect(plan).toMatchObject({ plan: 'free', overrides: null, effective: expect.objectContaining({ includedCredits: '50.000000' }) });
    // The month's 50 Free credits came when the account was created on Free: nothing more now.
    expect((await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.total).toBe(before);
  });

  it('keeps a cancelled subscription cancelled when its last failed invoice comes with the cancellation, in either order', async () => {
    for (const order of ['failure after', 'failure before'] as const) {
      const { accountId, subscriptionId } = await teamAccount();
      const at = Math.floor(Date.now() / 1000);
      const failed = fake.emit('invoice.payment_failed', fake.invoice(subscriptionId), at);
      const deleted = cancelled(subscriptionId, at);
      for (const event of order === 'failure after' ? [deleted, failed] : [failed, deleted]) await deliver(event);
      expect(await subscription(accountId), order).toMatchObject({
        plan: 'free',
        accountStatus: 'active',
        subscription: { status: 'canceled' },
      });
      expect((await h.request('POST', '/v1/admin/jobs/stripe-recovery/run', { key: admin })).body.result.suspended ?? []).not.toContain(
        accountId,
      );
      expect((await reserve(accountId)).status, order).toBe(201);
    }
  });

  it('grants a cycle paid before its subscription ended and takes back one paid after, whichever event comes first', async () => {
    const outcomes: Record<string, { total: string; cycle: { amount: string; remaining: string } | null }> = {};
    const outcome = (key: string) => outcomes[key]!;
    for (const paid of ['before the end', 'after the end'] as const) {
      for (const order of ['cancellation first', 'invoice first'] as const) {
        const { accountId, subscriptionId } = await teamAccount();
        const sub = fake.subscriptions.get(subscriptionId)!;
        // The next cycle's invoice, paid 10 s before or after Stripe ended the subscription.
        const start = sub.items.data[0].current_period_end as number;
        const invoice = fake.invoice(subscriptionId, { periodStart: start, periodEnd: start + 30 * 86_400 });
        const at = Math.floor(Date.now() / 1000);
        const deleted = cancelled(subscriptionId, at);
        const paidEvent = fake.emit('invoice.paid', invoice, paid === 'before the end' ? at - 10 : at + 10);
        for (const event of order === 'cancellation first' ? [deleted, paidEvent] : [paidEvent, deleted]) await deliver(event);
        const wallet = (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body as {
          total: string;
          grants: { amount: string; remaining: string; expiresAt: string | null; source: string }[];
        };
        const end = new Date((start + 30 * 86_400) * 1000).toISOString();
        const cycle = wallet.grants.find((g) => g.source === 'plan_allowance' && g.expiresAt === end);
        outcomes[`${paid}, ${order}`] = { total: wallet.total, cycle: cycle ? { amount: cycle.amount, remaining: cycle.remaining } : null };
        if (paid === 'after the end' && order === 'invoice first') {
          // Granted when it came, taken back when the cancellation came: audited, explained, and told to the holder.
          const audit = (await h.request('GET', `/v1/audit?accountId=${accountId}`, { key: admin })).body.items as {
            action: string;
            after: Record<string, unknown>;
          }[];
          expect(audit.find((a) => a.action === 'credits.clawed_back')?.after).toMatchObject({ clawedBack: '500.000000' });
          const [notice] = await h.ds.query(`SELECT payload FROM outbox WHERE key = $1 AND payload->>'type' = 'credits.clawed_back'`, [
            accountId,
          ]);
          expect(notice.payload.data).toMatchObject({
            credits: '500.000000',
            reason: 'paid_after_end',
            invoiceId: invoice.id,
            subscriptionId,
          });
          const month = new Date().toISOString().slice(0, 7);
          const statement = (await h.request('GET', `/v1/accounts/${accountId}/statements/${month}`, { key: admin })).body as {
            lines: { section: string; description: string; credits: string }[];
          };
          expect(statement.lines.find((l) => l.section === 'claw_backs')).toMatchObject({
            description: 'Credits clawed back (a top-up refunded or disputed, or a cycle paid after its subscription ended)',
            credits: '-500.000000',
          });
          // Delivered again, the cancellation takes back nothing more.
          await deliver(cancelled(subscriptionId, at));
          expect((await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.total).toBe(wallet.total);
        }
      }
    }
    // Paid before the end: the cycle's 500 credits, in both orders.
    expect(outcome('before the end, cancellation first').cycle).toEqual({ amount: '500.000000', remaining: '500.000000' });
    expect(outcome('before the end, invoice first').cycle).toEqual({ amount: '500.000000', remaining: '500.000000' });
    expect(outcome('before the end, invoice first').total).toBe(outcome('before the end, cancellation first').total);
    // Paid after the end: nothing left of it in either order (granted, then taken back, when the invoice came first).
    expect(outcome('after the end, cancellation first').cycle).toBeNull();
    expect(outcome('after the end, invoice first').cycle).toBeNull();
    expect(outcome('after the end, invoice first').total).toBe(outcome('after the end, cancellation first').total);
  });

  it('grants a cycle paid before the end on the Team terms the subscription ended with, even when the cancellation came first', async () => {
    const totals: Record<string, string> = {};
    for (const order of ['in order', 'cancellation first'] as const) {
      const { accountId, subscriptionId } = await teamAccount({ includedCredits: '800.000000' });
      const start = fake.subscriptions.get(subscriptionId)!.items.data[0].current_period_end as number;
      // Paid on the 800 set above, 10 s before the end (the allowance is decided by the terms at the payment).
      const at = Math.floor(Date.now() / 1000);
      const paid = fake.emit('invoice.paid', fake.invoice(subscriptionId, { periodStart: start, periodEnd: start + 30 * 86_400 }), at);
      const deleted = cancelled(subscriptionId, at + 10);
      for (const event of order === 'in order' ? [paid, deleted] : [deleted, paid]) await deliver(event);
      const wallet = (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body as {
        total: string;
        grants: { amount: string; source: string; expiresAt: string | null }[];
      };
      const end = new Date((start + 30 * 86_400) * 1000).toISOString();
      expect(wallet.grants.find((g) => g.source === 'plan_allowance' && g.expiresAt === end)?.amount, order).toBe('800.000000');
      totals[order] = wallet.total;
    }
    expect(totals['cancellation first']).toBe(totals['in order']);
  });

  it("grants the cycle of an old subscription's invoice paid before it ended, delivered once the next one is live", async () => {
    const { accountId, subscriptionId: first } = await teamAccount();
    const start = fake.subscriptions.get(first)!.items.data[0].current_period_end as number;
    const at = Math.floor(Date.now() / 1000);
    const late = fake.invoice(first, { periodStart: start, periodEnd: start + 30 * 86_400 });
    await deliver(cancelled(first, at));
    // Stripe's record of the first subscription says when it ended.
    Object.assign(fake.subscriptions.get(first)!, { status: 'canceled', ended_at: at });
    expect((await h.request('PUT', `/v1/admin/accounts/${accountId}/plan`, { key: admin, body: { plan: 'team' } })).status).toBe(200);
    expect((await h.request('POST', `/v1/admin/accounts/${accountId}/subscription`, { key: admin })).status).toBe(201);
    const before = (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.total as string;
    await deliver(fake.emit('invoice.paid', late, at - 10));
    const after = (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.total as string;
    expect(Number(after) - Number(before)).toBe(500);
  });

  it('grants no Stripe cycle to an account an admin moved to Enterprise: its credits come by its own month', async () => {
    const { accountId, subscriptionId } = await teamAccount();
    const plan = await h.request('PUT', `/v1/admin/accounts/${accountId}/plan`, {
      key: admin,
      body: { plan: 'enterprise', overrides: { includedCredits: '1000.000000' } },
    });
    expect(plan.status, JSON.stringify(plan.body)).toBe(200);
    const before = (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.total as string;
    const start = fake.subscriptions.get(subscriptionId)!.items.data[0].current_period_end as number;
    await deliver(fake.emit('invoice.paid', fake.invoice(subscriptionId, { periodStart: start, periodEnd: start + 30 * 86_400 })));
    expect((await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.total).toBe(before);
  });

  it('grants a Team cycle paid before an admin moved the account to Enterprise, on the terms of then, whichever comes first', async () => {
    const outcomes: Record<string, { total: string; cycle: { amount: string; expiresAt: string | null }[]; later: string[] }> = {};
    for (const order of ['invoice first', 'move first'] as const) {
      const { accountId, subscriptionId } = await teamAccount({ includedCredits: '800.000000' });
      const sub = fake.subscriptions.get(subscriptionId)!;
      const end = sub.items.data[0].current_period_end as number;
      // Paid now, on Team (with its 800); the admin's move comes in a later second.
      const paidAt = Math.floor(Date.now() / 1000);
      const paid = fake.emit('invoice.paid', { ...fake.invoice(subscriptionId), status: 'paid', status_transitions: { paid_at: paidAt } });
      await new Promise((resolve) => setTimeout(resolve, (paidAt + 1) * 1000 + 50 - Date.now()));
      const move = async () => {
        const plan = await h.request('PUT', `/v1/admin/accounts/${accountId}/plan`, { key: admin, body: { plan: 'enterprise' } });
        expect(plan.status, JSON.stringify(plan.body)).toBe(200);
      };
      if (order === 'invoice first') {
        await deliver(paid);
        await move();
      } else {
        await move();
        await deliver(paid);
      }
      // Stripe delivering it again, and the recovery job, grant nothing more.
      expect((await deliver(paid)).body).toMatchObject({ duplicate: true });
      expect((await h.request('POST', '/v1/admin/jobs/stripe-recovery/run', { key: admin })).status).toBe(200);
      // The next cycle's invoice, paid on Enterprise: nothing (the contract's credits come by its own month).
      await deliver(fake.emit('invoice.paid', fake.invoice(subscriptionId, { periodStart: end, periodEnd: end + 30 * 86_400 })));
      const wallet = (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body as {
        total: string;
        grants: { amount: string; source: string; expiresAt: string | null }[];
      };
      const cycleEnd = new Date(end * 1000).toISOString();
      const laterEnd = new Date((end + 30 * 86_400) * 1000).toISOString();
      outcomes[order] = {
        total: wallet.total,
        cycle: wallet.grants
          .filter((g) => g.source === 'plan_allowance' && g.expiresAt === cycleEnd)
          .map(({ amount, expiresAt }) => ({ amount, expiresAt })),
        later: wallet.grants.filter((g) => g.source === 'plan_allowance' && g.expiresAt === laterEnd).map((g) => g.amount),
      };
      expect(await subscription(accountId), order).toMatchObject({
        plan: 'enterprise',
        subscription: { id: subscriptionId, status: 'active' },
      });
    }
    // The paid Team cycle's 800 (the override it had then), once, expiring at the cycle's end, in both orders.
    for (const order of ['invoice first', 'move first'] as const) {
      expect(outcomes[order]!.cycle, order).toEqual([{ amount: '800.000000', expiresAt: expect.any(String) }]);
      expect(outcomes[order]!.later, order).toEqual([]);
    }
    expect(outcomes['move first']!.total).toBe(outcomes['invoice first']!.total);
  });

  it('moves an account to Team when its incomplete subscription becomes active in the second it was created, whichever event says so', async () => {
    for (const order of ['subscription events only', 'invoice first', 'update first'] as const) {
      const { accountId, sub } = await subscribedOrganization();
      const at = Math.floor(Date.now() / 1000);
      const created = fake.emit('customer.subscription.created', { ...sub, status: 'incomplete' }, at);
      const updated = fake.emit('customer.subscription.updated', { ...sub, status: 'active' }, at);
      const paid = fake.emit('invoice.paid', fake.invoice(String(sub.id)), at);
      const events = {
        'subscription events only': [created, updated],
        'invoice first': [created, paid, updated],
        'update first': [created, updated, paid],
      }[order];
      for (const event of events) await deliver(event);
      expect(await subscription(accountId), order).toMatchObject({ plan: 'team', subscription: { status: 'active' } });
    }
  });

  it('keeps a subscription whose first payment failed incomplete: no past due, no suspension, and its expiry leaves the account on Free', async () => {
    const { accountId, sub } = await subscribedOrganization();
    const at = Math.floor(Date.now() / 1000);
    await deliver(fake.emit('customer.subscription.created', { ...sub, status: 'incomplete' }, at - 30));
    // (With no grace period, a past due account is suspended at once.)
    await deliver(fake.emit('invoice.payment_failed', fake.invoice(String(sub.id)), at - 29));
    expect(await subscription(accountId)).toMatchObject({ plan: 'free', accountStatus: 'active', subscription: { status: 'incomplete' } });
    await deliver(fake.emit('customer.subscription.updated', { ...sub, status: 'incomplete_expired' }, at - 1));
    expect(await subscription(accountId)).toMatchObject({ plan: 'free', accountStatus: 'active' });
    expect(await h.ds.query(`SELECT 1 FROM outbox WHERE key = $1 AND payload->>'type' = 'subscription.past_due'`, [accountId])).toEqual([]);
    expect((await reserve(accountId)).status).toBe(201);
  });

  it('ends a first payment that failed, then was paid, the same whether its failure comes before the subscription or after', async () => {
    const pastDueNotices = (accountId: string) =>
      h.ds.query(`SELECT 1 FROM outbox WHERE key = $1 AND payload->>'type' = 'subscription.past_due'`, [accountId]);
    for (const order of ['in order', 'failure first'] as const) {
      // Stripe's record of the subscription says active by now: a retry paid the first invoice.
      const { accountId, sub } = await subscribedOrganization();
      const at = Math.floor(Date.now() / 1000);
      const invoice = fake.invoice(String(sub.id));
      const created = fake.emit('customer.subscription.created', { ...sub, status: 'incomplete' }, at - 30);
      const failed = fake.emit('invoice.payment_failed', invoice, at - 29);
      const rest = [
        fake.emit('customer.subscription.updated', { ...sub, status: 'active' }, at - 20),
        fake.emit('invoice.paid', invoice, at - 20),
      ];
      if (order === 'in order') {
        await deliver(created);
        await deliver(failed);
      } else {
        await deliver(failed);
        // (With no grace period, a past due account is suspended at once.)
        expect(await subscription(accountId), order).toMatchObject({ accountStatus: 'active', subscription: { status: 'active' } });
        expect((await reserve(accountId)).status, order).toBe(201);
        await deliver(created);
      }
      for (const event of rest) await deliver(event);
      expect(await subscription(accountId), order).toMatchObject({
        plan: 'team',
        accountStatus: 'active',
        subscription: { status: 'active', pastDueSince: null },
      });
      expect(await pastDueNotices(accountId), order).toEqual([]);
    }
  });

  it("leaves an admin's suspension alone when a failed payment of the account is paid after all", async () => {
    const { accountId, subscriptionId } = await teamAccount();
    const suspended = await h.request('PUT', `/v1/admin/accounts/${accountId}/suspension`, {
      key: admin,
      body: { suspended: true, reason: 'fraud review' },
    });
    expect(suspended.status, JSON.stringify(suspended.body)).toBe(200);
    const at = Math.floor(Date.now() / 1000);
    const invoice = fake.invoice(subscriptionId);
    await deliver(fake.emit('invoice.payment_failed', invoice, at - 2));
    expect((await h.request('POST', '/v1/admin/jobs/stripe-recovery/run', { key: admin })).status).toBe(200);
    await deliver(fake.emit('invoice.paid', invoice, at - 1));
    expect(await subscription(accountId)).toMatchObject({ accountStatus: 'suspended', subscription: { status: 'active' } });
    expect((await reserve(accountId)).status).toBe(403);
  });

  it('shows the seat quantity of the last of two changes Stripe made in one second, delivered in order', async () => {
    const { accountId, subscriptionId } = await teamAccount();
    const at = Math.floor(Date.now() / 1000) + 1;
    for (const quantity of [2, 3]) {
      const s = structuredClone(fake.subscriptions.get(subscriptionId)!);
      s.items.data.find((i: { price: { id: string } }) => i.price.id === SEAT_PRICE).quantity = quantity;
      await deliver(fake.emit('customer.subscription.updated', s, at));
    }
    expect(await subscription(accountId)).toMatchObject({ subscription: { seatQuantity: 3 } });
  });

  it("applies missed events of one second in Stripe's order, not their ids' (the recovery job)", async () => {
    for (let round = 0; round < 2; round++) {
      const { accountId, subscriptionId } = await teamAccount();
      const at = Math.floor(Date.now() / 1000) + 1;
      // Two seat changes in one second that the webhook never delivered: Stripe lists them, newest first;
      // their ids say nothing of their order (here the later one's sorts first).
      for (const [quantity, id] of [
        [2, `evt_z${round}_${subscriptionId}`],
        [3, `evt_a${round}_${subscriptionId}`],
      ] as const) {
        const s = structuredClone(fake.subscriptions.get(subscriptionId)!);
        s.items.data.find((i: { price: { id: string } }) => i.price.id === SEAT_PRICE).quantity = quantity;
        fake.emit('customer.subscription.updated', s, at, id);
      }
      expect((await h.request('POST', '/v1/admin/jobs/stripe-recovery/run', { key: admin })).status).toBe(200);
      expect(await subscription(accountId), `round ${round}`).toMatchObject({ subscription: { seatQuantity: 3 } });
    }
  });

  it('lifts a suspension for non-payment when the subscription is cancelled: the account is on Free', async () => {
    const { accountId, subscriptionId } = await teamAccount();
    await deliver(fake.emit('invoice.payment_failed', fake.invoice(subscriptionId)));
    expect(await subscription(accountId)).toMatchObject({ accountStatus: 'suspended' });
    expect((await reserve(accountId)).status).toBe(403);
    await deliver(cancelled(subscriptionId));
    expect(await subscription(accountId)).toMatchObject({ plan: 'free', accountStatus: 'active' });
    expect((await reserve(accountId)).status).toBe(201);
  });

  it('never lets a late event of a cancelled subscription take the place of the live one', async () => {
    const { accountId, subscriptionId: first } = await teamAccount();
    const old = structuredClone(fake.subscriptions.get(first)!);
    const at = Math.floor(Date.now() / 1000);
    await deliver(cancelled(first, at));
    expect((await h.request('PUT', `/v1/admin/accounts/${accountId}/plan`, { key: admin, body: { plan: 'team' } })).status).toBe(200);
    const created = await h.request('POST', `/v1/admin/accounts/${accountId}/subscription`, { key: admin });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const live = created.body.subscription.id as string;
    // An update of the first one, sent before its cancellation, arrives now.
    await deliver(fake.emit('customer.subscription.updated', { ...old, status: 'active' }, at - 60));
    expect(await subscription(accountId)).toMatchObject({ plan: 'team', subscription: { id: live } });
    // A seat change goes to the live subscription.
    const put = await h.request('PUT', `/v1/accounts/${accountId}/members/u_late`, { key: admin });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    await h.app.get(SeatsService).idle();
    expect(fake.seatItem(live, SEAT_PRICE).quantity).toBe(1);
    expect(await subscription(accountId)).toMatchObject({ subscription: { id: live, seatQuantity: 1 } });
    // Invoices of the first one, even newer than its cancellation, change nothing: no suspension, no grant;
    // a paid one is kept for the statement's fees.
    const total = (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.total as string;
    expect((await deliver(fake.emit('invoice.payment_failed', fake.invoice(first), at + 5))).body).toMatchObject({ ignored: true });
    const oldInvoice = fake.invoice(first);
    expect((await deliver(fake.emit('invoice.paid', oldInvoice, at + 5))).body).toMatchObject({ ignored: false });
    expect(
      await h.ds.query(`SELECT account_id, subscription_id, status FROM stripe_invoices WHERE invoice_id = $1`, [oldInvoice.id]),
    ).toEqual([{ account_id: accountId, subscription_id: first, status: 'paid' }]);
    expect(await subscription(accountId)).toMatchObject({
      plan: 'team',
      accountStatus: 'active',
      subscription: { id: live, status: 'active' },
    });
    expect((await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.total).toBe(total);
  });
});
