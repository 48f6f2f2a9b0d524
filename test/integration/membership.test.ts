import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { SeatsService } from '../../src/stripe/seats.service';
import { fundedAccount } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';
import { startStripeApp, type StripeApp } from '../support/stripe-app';
import { nestedArrays, nestedObjects } from '../support/hostile';
import { sample } from '../support/prometheus-text';
import { eventually, produce, readTopic } from '../support/kafka';
import { StripeFake } from '../support/stripe-fake';

const SEAT_PRICE = 'price_team_seat_placeholder';

describe('membership from accounts.membership.v1 (real broker) drives Stripe seats', () => {
  let stripe: StripeApp;
  let h: Harness;
  let fake: StripeFake;
  let admin: string;

  beforeAll(async () => {
    stripe = await startStripeApp('membership_seats', 'whsec_test', { kafka: true, env: { STRIPE_TIMEOUT_MS: '2000' } });
    ({ h, fake, admin } = stripe);
  });
  afterAll(() => stripe.close());

  it('applies shuffled, duplicated, concurrent membership events once each, by occurredAt; the seat quantity follows', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'free', kind: 'organization' });
    const created = await h.request('POST', `/v1/admin/accounts/${accountId}/subscription`, { key: admin });
    expect(created.status).toBe(201);
    const subscriptionId = created.body.subscription.id as string;

    // 60 changes over 7 users, one second apart; the expected state is each user's latest change.
    let seed = 11;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const t0 = Date.now() - 3_600_000;
    const events = Array.from({ length: 60 }, (_, i) => ({
      id: uid('mem'),
      type: random() < 0.6 ? 'member.added' : 'member.removed',
      occurredAt: new Date(t0 + i * 1_000).toISOString(),
      accountId,
      userId: `user${Math.floor(random() * 7)}`,
    }));
    const expected = new Map<string, boolean>();
    for (const e of events) expected.set(e.userId, e.type === 'member.added');
    const seats = [...expected.values()].filter(Boolean).length;

    // Shuffled, 15 redelivered, plus a malformed message and an unknown account; sent by 3 producers at once.
    const shuffled = [...events, ...events.slice(0, 15)].sort(() => random() - 0.5);
    const noise = [{ value: 'not json' }, { value: { ...events[0]!, id: uid('mem'), accountId: uid('nobody') } }];
    const thirds = [0, 1, 2].map((k) =>
      shuffled.filter((_, i) => i % 3 === k).map((value): { key: string; value: string | object } => ({ key: accountId, value })),
    );
    thirds[1]!.push(...noise.map((n) => ({ key: accountId, ...n })));
    const topic = h.config.topics.membership;
    await Promise.all(thirds.map((batch) => produce(topic, batch)));

    await eventually(
      async () => (await h.ds.query(`SELECT count(*)::int AS n FROM account_member_events WHERE account_id = $1`, [accountId]))[0].n === 60,
      60_000,
      'all membership events applied',
    );
    const members = (await h.request('GET', `/v1/accounts/${accountId}/members`, { key: admin })).body;
    expect(Object.fromEntries(members.members.map((m: { userId: string; active: boolean }) => [m.userId, m.active]))).toEqual(
      Object.fromEntries(expected),
    );
    expect(members.seats).toBe(seats);

    await h.app.get(SeatsService).idle();
    await eventually(async () => fake.seatItem(subscriptionId, SEAT_PRICE).quantity === seats, 20_000, 'Stripe seat quantity');
    const reconciled = await h.request('POST', '/v1/admin/reconciliation/run', { key: admin });
    expect(reconciled.body.result.corrected).toEqual([]);
    expect(fake.seatItem(subscriptionId, SEAT_PRICE).quantity).toBe(seats);
    // Each event id is in the inbox once.
    const inbox = await h.ds.query(
      `SELECT count(*)::int AS n FROM inbox WHERE source = 'accounts.membership.v1' AND message_id = ANY($1)`,
      [events.map((e) => e.id)],
    );
    expect(inbox[0].n).toBe(60);
  });

  it('audits each applied change under its event id, and ignores a change for a user account (no members)', async () => {
    const org = await fundedAccount(h, admin, { plan: 'enterprise', kind: 'organization' });
    const user = await fundedAccount(h, admin, { plan: 'enterprise', kind: 'user' });
    const at = new Date().toISOString();
    const added = { id: uid('mem'), type: 'member.added', occurredAt: at, accountId: org, userId: 'dana' };
    const ignored = { id: uid('mem'), type: 'member.added', occurredAt: at, accountId: user, userId: 'erin' };
    await produce(
      h.config.topics.membership,
      [ignored, added].map((value) => ({ key: value.accountId, value })),
    );
    await eventually(
      async () =>
        (await h.ds.query(`SELECT count(*)::int AS n FROM inbox WHERE message_id = ANY($1)`, [[added.id, ignored.id]]))[0].n === 2,
      60_000,
      'both membership events taken',
    );
    const rows = await h.ds.query(
      `SELECT account_id, action, correlation_id FROM audit_log WHERE account_id = ANY($1) AND action LIKE 'seat.%'`,
      [[org, user]],
    );
    expect(rows).toEqual([{ account_id: org, action: 'seat.added', correlation_id: added.id }]);
    expect((await h.request('GET', `/v1/accounts/${user}/members`, { key: admin })).body.members).toEqual([]);
  });

  it('parks malformed and hostile membership messages on the dead-letter topic with their reason, and goes on', async () => {
    const org = await fundedAccount(h, admin, { plan: 'enterprise', kind: 'organization' });
    const good = { id: uid('mem'), type: 'member.added', occurredAt: new Date().toISOString(), accountId: org, userId: 'frank' };
    const hostile = [
      { name: 'arrays 5,000 deep', value: nestedArrays(5_000), reason: /nest/i },
      { name: 'objects 100,000 deep', value: nestedObjects(100_000), reason: /nest/i },
      {
        name: 'a key twice',
        value: `{"id":"${uid('mem')}","id":"x","type":"member.added","occurredAt":"${good.occurredAt}","accountId":"${org}","userId":"u"}`,
        reason: /twice|duplicate/i,
      },
      { name: 'not JSON', value: 'member added', reason: /not JSON/ },
      { name: 'year 0000', value: JSON.stringify({ ...good, id: uid('mem'), occurredAt: '0000-01-01T00:00:00Z' }), reason: /occurredAt/ },
    ];
    const deadLettered = async () =>
      sample((await h.request('GET', '/metrics')).body as string, 'dl_billing_membership_dead_lettered_total');
    const before = await deadLettered();
    const topic = h.config.topics.membership;
    await produce(topic, [...hostile.map((m) => ({ key: org, value: m.value })), { key: org, value: good }]);
    const parked = await readTopic(h.config.topics.membershipDlq, hostile.length, 60_000, 2_000);
    for (const m of hostile) {
      const letter = parked.find((p) => p.value === m.value);
      expect(letter, m.name).toBeDefined();
      expect(letter!.headers['x-dlq-code'], m.name).toBe('DL_BILLING_REQUEST_INVALID');
      expect(letter!.headers['x-dlq-reason'], m.name).toMatch(m.reason);
      expect(JSON.parse(letter!.headers['x-dlq-findings']!).length, m.name).toBeGreaterThan(0);
      expect(letter!.headers['x-dlq-source'], m.name).toMatch(new RegExp(`^${topic.replace(/\./g, '\\.')}/\\d+/\\d+$`));
    }
    await eventually(
      async () => (await h.request('GET', `/v1/accounts/${org}/members`, { key: admin })).body.seats === 1,
      60_000,
      'the good change applied after the bad ones',
    );
    // Counted where the on-call engineer's alert (DlBillingDeadLetters) reads them.
    expect((await deadLettered()) - before).toBe(hostile.length);
  });

  describe('an invoice rechecked by a membership change dated before it and consumed after', () => {
    const minute = 60_000;
    type Change = { id: string; type: 'member.added' | 'member.removed'; occurredAt: string; accountId: string; userId: string };
    const change = (accountId: string, userId: string, type: Change['type'], at: number): Change => ({
      id: uid('mem'),
      type,
      occurredAt: new Date(at).toISOString(),
      accountId,
      userId,
    });
    /** Sends membership changes on the topic and waits until the service took them (their ids in its inbox). */
    const consume = async (...changes: Change[]) => {
      await produce(
        h.config.topics.membership,
        changes.map((value) => ({ key: value.accountId, value })),
      );
      const ids = [...new Set(changes.map((c) => c.id))];
      await eventually(
        async () =>
          (
            await h.ds.query(`SELECT count(*)::int AS n FROM inbox WHERE source = 'accounts.membership.v1' AND message_id = ANY($1)`, [ids])
          )[0].n === ids.length,
        60_000,
        'membership changes consumed',
      );
      await h.app.get(SeatsService).idle();
    };
    const deliver = (event: object) => {
      const payload = JSON.stringify(event);
      return h.request('POST', '/v1/stripe/webhooks', {
        body: payload,
        headers: { 'stripe-signature': StripeFake.sign(payload, 'whsec_test') },
      });
    };
    /** A Team subscription of an organization whose members alice and bob joined at `joined`. */
    const team = async (joined: number) => {
      const accountId = await fundedAccount(h, admin, { plan: 'free', kind: 'organization' });
      const created = await h.request('POST', `/v1/admin/accounts/${accountId}/subscription`, { key: admin });
      expect(created.status).toBe(201);
      await consume(change(accountId, 'alice', 'member.added', joined), change(accountId, 'bob', 'member.added', joined));
      return { accountId, subscriptionId: created.body.subscription.id as string };
    };
    /** invoice.paid of an invoice created at `at` billing `seats` seats, delivered signed; the invoice. */
    const paidInvoice = async (subscriptionId: string, at: number, seats: number) => {
      const invoice = fake.invoice(subscriptionId, { seatQuantity: seats, created: Math.floor(at / 1000) });
      const event = fake.emit('invoice.paid', invoice);
      expect((await deliver(event)).status).toBe(200);
      return { invoice, event };
    };
    const flags = async (accountId: string) =>
      (await h.request('GET', `/v1/admin/reconciliation/discrepancies?accountId=${accountId}`, { key: admin })).body.items;
    const activeSeatsOf = async (invoiceId: string): Promise<number> =>
      (await h.ds.query(`SELECT active_seats FROM stripe_invoices WHERE invoice_id = $1`, [invoiceId]))[0].active_seats;
    const reconciliation = async (accountId: string) => {
      const from = new Date(Date.now() - 3_600_000).toISOString();
      const to = new Date(Date.now() + 3_600_000).toISOString();
      const report = (await h.request('GET', `/v1/reports/reconciliation?from=${from}&to=${to}`, { key: admin })).body;
      return report.items.filter((i: { account: string; kind: string }) => i.account === accountId && i.kind === 'invoice_seats');
    };

    it('flags an invoice billed for a member whose removal, dated before it, was consumed after it, and corrects its active seats', async () => {
      const t0 = Date.now();
      const { accountId, subscriptionId } = await team(t0 - 60 * minute);
      // Billed for alice and bob: both were members when it was created, as known then.
      const { invoice } = await paidInvoice(subscriptionId, t0 - 30 * minute, 2);
      expect(await flags(accountId)).toEqual([]);
      expect(await activeSeatsOf(invoice.id)).toBe(2);

      // Bob had left 15 minutes before the invoice was created; the removal comes now.
      const removal = change(accountId, 'bob', 'member.removed', t0 - 45 * minute);
      await consume(removal);
      expect(await flags(accountId)).toEqual([
        expect.objectContaining({
          kind: 'invoice_seats',
          invoiceId: invoice.id,
          stripeQuantity: 2,
          activeSeats: 1,
          resolvedAt: null,
          resolvedBy: null,
        }),
      ]);
      expect(await activeSeatsOf(invoice.id)).toBe(1);
      expect(await reconciliation(accountId)).toEqual([
        expect.objectContaining({ invoice: invoice.id, stripeQuantity: 2, activeSeats: 1, difference: 1, resolvedAt: null }),
      ]);
    });

    it('rechecks with a change stale for the member now (a later change of theirs came first)', async () => {
      const t0 = Date.now();
      const { accountId, subscriptionId } = await team(t0 - 60 * minute);
      const { invoice } = await paidInvoice(subscriptionId, t0 - 30 * minute, 2);
      // Bob left after the invoice (known), and had also left before it, between two stints (consumed last).
      await consume(change(accountId, 'bob', 'member.removed', t0 - 10 * minute));
      expect(await flags(accountId)).toEqual([]);
      await consume(change(accountId, 'bob', 'member.removed', t0 - 45 * minute));
      expect((await h.request('GET', `/v1/accounts/${accountId}/members`, { key: admin })).body.seats).toBe(1);
      expect(await flags(accountId)).toEqual([expect.objectContaining({ invoiceId: invoice.id, stripeQuantity: 2, activeSeats: 1 })]);
      expect(await activeSeatsOf(invoice.id)).toBe(1);
    });

    it('resolves a flag that an addition dated before the invoice, consumed after it, shows wrong; redeliveries change nothing', async () => {
      const t0 = Date.now();
      const accountId = await fundedAccount(h, admin, { plan: 'free', kind: 'organization' });
      const subscriptionId = (await h.request('POST', `/v1/admin/accounts/${accountId}/subscription`, { key: admin })).body.subscription
        .id as string;
      const alice = change(accountId, 'alice', 'member.added', t0 - 60 * minute);
      await consume(alice);
      // Billed for 2 when, as known then, only alice was a member: flagged.
      const { invoice, event } = await paidInvoice(subscriptionId, t0 - 30 * minute, 2);
      expect(await flags(accountId)).toEqual([expect.objectContaining({ invoiceId: invoice.id, stripeQuantity: 2, activeSeats: 1 })]);

      // Carol joined 15 minutes before the invoice was created; her addition comes now.
      const carol = change(accountId, 'carol', 'member.added', t0 - 45 * minute);
      await consume(carol);
      const resolved = await flags(accountId);
      expect(resolved).toEqual([
        expect.objectContaining({
          kind: 'invoice_seats',
          invoiceId: invoice.id,
          stripeQuantity: 2,
          activeSeats: 2,
          resolvedAt: expect.any(String),
          resolvedBy: carol.id,
        }),
      ]);
      expect(await activeSeatsOf(invoice.id)).toBe(2);
      const [row] = await reconciliation(accountId);
      expect(row).toMatchObject({
        invoice: invoice.id,
        stripeQuantity: 2,
        activeSeats: 2,
        difference: 0,
        resolvedAt: resolved[0].resolvedAt,
      });

      // The same changes again (Kafka redelivery, a duplicate within a batch) and the invoice event again: nothing moves.
      // (Dave, who joined after the invoice, follows them on the account's partition: once he is in, they were read.)
      await consume(carol, carol, alice, change(accountId, 'dave', 'member.added', t0));
      const redelivered = await deliver(event);
      expect(redelivered.body).toMatchObject({ duplicate: true });
      expect(await flags(accountId)).toEqual(resolved);
      expect(await activeSeatsOf(invoice.id)).toBe(2);
      expect(await reconciliation(accountId)).toEqual([row]);

      // A change consumed late that makes it wrong again (carol left before it too) opens the flag again.
      await consume(change(accountId, 'carol', 'member.removed', t0 - 40 * minute));
      expect(await flags(accountId)).toEqual([
        expect.objectContaining({ invoiceId: invoice.id, stripeQuantity: 2, activeSeats: 1, resolvedAt: null, resolvedBy: null }),
      ]);
      expect(await activeSeatsOf(invoice.id)).toBe(1);
    });
  });
});

describe('membership events stamped ahead of the service clock (real broker)', () => {
  const T0 = new Date('2031-06-01T12:00:00.000Z');
  const clock = new ManualClock(T0);
  const hour = 3_600_000;
  let h: Harness;
  let admin: string;

  beforeAll(async () => {
    h = await startApp({ kafka: true, clock });
    admin = await h.key('admin');
  });
  afterAll(() => h.close());

  it('dead-letters a change dated more than 24 hours ahead (the member stays as it was, later HTTP changes apply) and applies one within', async () => {
    const org = await fundedAccount(h, admin, { plan: 'enterprise', kind: 'organization' });
    expect((await h.request('PUT', `/v1/accounts/${org}/members/alice`, { key: admin })).body).toMatchObject({ active: true, seats: 1 });
    clock.advance(60_000);

    const at = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();
    const ahead = [
      { id: uid('mem'), type: 'member.removed', occurredAt: at(24 * hour + 60_000), accountId: org, userId: 'alice' },
      { id: uid('mem'), type: 'member.removed', occurredAt: '9999-12-31T23:59:59.000Z', accountId: org, userId: 'alice' },
    ];
    const within = { id: uid('mem'), type: 'member.added', occurredAt: at(23 * hour), accountId: org, userId: 'bob' };
    await produce(
      h.config.topics.membership,
      [...ahead, within].map((value) => ({ key: org, value })),
    );

    const parked = await readTopic(h.config.topics.membershipDlq, ahead.length, 60_000, 2_000);
    expect(parked.map((p) => JSON.parse(p.value).id).sort()).toEqual(ahead.map((e) => e.id).sort());
    for (const letter of parked) {
      expect(letter.headers['x-dlq-code']).toBe('DL_BILLING_REQUEST_INVALID');
      expect(letter.headers['x-dlq-reason']).toBe(
        'invalid event: occurredAt: must be after 2000-01-01 and not more than 24 hours in the future',
      );
      expect(JSON.parse(letter.headers['x-dlq-findings']!)).toEqual([
        { field: 'occurredAt', message: 'must be after 2000-01-01 and not more than 24 hours in the future' },
      ]);
    }
    // Consumption went on: the change within the bound is applied; alice is as HTTP left her.
    await eventually(
      async () => (await h.request('GET', `/v1/accounts/${org}/members`, { key: admin })).body.seats === 2,
      60_000,
      'the change within the bound applied',
    );
    expect((await h.request('GET', `/v1/accounts/${org}/members`, { key: admin })).body.members).toEqual([
      { userId: 'alice', active: true, changedAt: T0.toISOString() },
      { userId: 'bob', active: true, changedAt: within.occurredAt },
    ]);

    // Later HTTP changes of alice take effect.
    clock.advance(60_000);
    expect((await h.request('DELETE', `/v1/accounts/${org}/members/alice`, { key: admin })).body).toMatchObject({
      active: false,
      seats: 1,
    });
    clock.advance(60_000);
    expect((await h.request('PUT', `/v1/accounts/${org}/members/alice`, { key: admin })).body).toMatchObject({ active: true, seats: 2 });
  });
});
