import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { MembersService, type MemberChange } from '../../src/members/members.service';
import { SeatsService } from '../../src/stripe/seats.service';
import { fundedAccount } from '../support/accounts';
import { uid, type Harness } from '../support/app';
import { startStripeApp } from '../support/stripe-app';
import { StripeFake } from '../support/stripe-fake';

const SECRET = 'whsec_test_seat_dates';
const BASE_PRICE = 'price_team_base_placeholder';
const SEAT_PRICE = 'price_team_seat_placeholder';
const SEAT_CENTS = 1500;
const day = 86_400_000;
const STRIPE_TIMEOUT_MS = 5_000;

/**
 * Stripe prorates a seat quantity change from the push's `proration_date`, else from the moment of
 * the call: a push made late (Stripe down, a membership event consumed late) must carry the date of
 * the change it pushes, or the customer is billed for the wrong part of the period. The service's
 * clock is moved days past the subscription's start; the fake's clock (`prorationDate`, Stripe's
 * "now" for a call without a date) is moved with it.
 */
describe('Stripe: a seat push is prorated from the membership change, not from the push', () => {
  let h: Harness;
  let fake: StripeFake;
  let admin: string;
  const clock = new ManualClock();

  beforeAll(async () => {
    ({ h, fake, admin } = await startStripeApp(
      'stripe_seat_dates',
      SECRET,
      // No network retries of the SDK: a call that times out is a failed push, retried by the next sync.
      // The timeout is well above a stall of this process on a loaded machine: with 1 s, a 1.2-s stall
      // during the reconciliation's read of Stripe failed that account's run (seen in CI, replayed).
      { clock, env: { STRIPE_TIMEOUT_MS: String(STRIPE_TIMEOUT_MS), STRIPE_MAX_NETWORK_RETRIES: '0' } },
      { [BASE_PRICE]: 4900, [SEAT_PRICE]: SEAT_CENTS },
    ));
  });
  afterAll(() => h.close().then(() => fake.stop()));

  /** A Team account with its subscription, begun now (0 seats); the service's clock is real time again. */
  const teamAccount = async () => {
    clock.set(new Date());
    fake.prorationDate = null;
    const accountId = await fundedAccount(h, admin, { plan: 'team', kind: 'organization' });
    const created = await h.request('POST', `/v1/admin/accounts/${accountId}/subscription`, { key: admin });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const subscriptionId = created.body.subscription.id as string;
    const item = fake.seatItem(subscriptionId, SEAT_PRICE);
    return { accountId, subscriptionId, start: item.current_period_start as number, end: item.current_period_end as number };
  };
  /** Both clocks at `at` (ms): ours, and Stripe's for a call without a proration date. */
  const setClocks = (at: number) => {
    clock.set(new Date(at));
    fake.prorationDate = Math.floor(at / 1000);
  };
  /** The seat proration lines Stripe puts on the subscription's next invoice: [quantity, cents, from]. */
  const prorations = (subscriptionId: string) =>
    (fake.invoice(subscriptionId).lines.data as Record<string, any>[])
      .filter((l) => l.parent?.invoice_item_details?.proration && l.pricing.price_details.price === SEAT_PRICE)
      .map((l) => [l.quantity, l.amount, new Date(l.period.start * 1000).toISOString()]);
  /** What `seats` seats cost from `from` (seconds) to the end of the period, as Stripe rounds it. */
  const rest = (seats: number, from: number, sub: { start: number; end: number }) =>
    Math.round(seats * SEAT_CENTS * ((sub.end - from) / (sub.end - sub.start)));
  const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
  const seatWrites = (subscriptionId: string) =>
    fake.requests.filter((r) => r.method === 'POST' && r.path === `/v1/subscription_items/${fake.seatItem(subscriptionId, SEAT_PRICE).id}`);

  it('bills a member added while Stripe was down for the whole rest of the period from the addition, when the reconciliation pushes it days later', async () => {
    const sub = await teamAccount();
    // Day 5 of the cycle: a member is added while Stripe is down; the push fails.
    const added = sub.start * 1000 + 5 * day + 1234;
    setClocks(added);
    fake.outage = true;
    expect((await h.request('PUT', `/v1/accounts/${sub.accountId}/members/ada`, { key: admin })).status).toBe(200);
    await h.app.get(SeatsService).idle();
    fake.outage = false;
    expect(fake.seatItem(sub.subscriptionId, SEAT_PRICE).quantity).toBe(0);

    // Day 15: the reconciliation pushes the seat, dated at the addition (a difference of ours, not Stripe's).
    setClocks(sub.start * 1000 + 15 * day);
    const run = await h.request('POST', '/v1/admin/jobs/seat-reconciliation/run', { key: admin });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(fake.seatItem(sub.subscriptionId, SEAT_PRICE).quantity, JSON.stringify(run.body)).toBe(1);
    const from = Math.floor(added / 1000);
    // One seat from day 5 to the end of the period (25 of 30 days), not from day 15 (15 of 30).
    expect(prorations(sub.subscriptionId)).toEqual([[1, rest(1, from, sub), iso(from)]]);
    expect(rest(1, from, sub)).toBeGreaterThan(rest(1, from + 10 * 86_400, sub) + 400);
    // Not a drift of Stripe's side: nothing to list as corrected.
    expect(run.body.result.corrected.filter((c: { accountId: string }) => c.accountId === sub.accountId)).toEqual([]);
  });

  it('pushes two members consumed late in one batch as two prorations, each from its own date, in order', async () => {
    const sub = await teamAccount();
    const members = h.app.get(MembersService);
    const change = (userId: string, at: number): MemberChange => ({
      id: uid('mem'),
      type: 'member.added',
      occurredAt: new Date(at),
      accountId: sub.accountId,
      userId,
    });
    // Day 12: one batch of the membership topic brings two additions, of day 3 and day 8.
    const first = sub.start * 1000 + 3 * day + 500;
    const second = sub.start * 1000 + 8 * day + 700;
    setClocks(sub.start * 1000 + 12 * day);
    await h.ds.transaction((em) => members.apply(em, [change('bo', second), change('al', first)], 'kafka', 'test'));
    members.seatsChanged([sub.accountId]);
    await h.app.get(SeatsService).idle();

    expect(fake.seatItem(sub.subscriptionId, SEAT_PRICE).quantity).toBe(2);
    const [a, b] = [Math.floor(first / 1000), Math.floor(second / 1000)];
    // 0 → 1 from day 3; 1 → 2 from day 8 (the one seat's unused time from then, and two seats' remaining time).
    expect(prorations(sub.subscriptionId)).toEqual([
      [1, rest(1, a, sub), iso(a)],
      [1, -rest(1, b, sub), iso(b)],
      [2, rest(2, b, sub), iso(b)],
    ]);
    expect(seatWrites(sub.subscriptionId).map((r) => r.replayed)).toEqual([false, false]);
  });

  it('retries a push that timed out after Stripe applied it with the same key and date, then pushes the next change at its own', async () => {
    const sub = await teamAccount();
    // Day 4: the push of a new member is applied by Stripe, but its answer comes after the SDK's timeout.
    const firstAt = sub.start * 1000 + 4 * day + 250;
    setClocks(firstAt);
    fake.delayAfterCommit((m, p) => m === 'POST' && p.startsWith('/v1/subscription_items/'), STRIPE_TIMEOUT_MS + 500);
    expect((await h.request('PUT', `/v1/accounts/${sub.accountId}/members/cy`, { key: admin })).status).toBe(200);
    await h.app.get(SeatsService).idle();
    expect(seatWrites(sub.subscriptionId)).toHaveLength(1);

    // Day 9: another member; the sync sends the failed push again first: the same key and the same
    // parameters (a date of day 9 under that key would be refused by Stripe), answered from the first.
    const secondAt = sub.start * 1000 + 9 * day + 250;
    setClocks(secondAt);
    expect((await h.request('PUT', `/v1/accounts/${sub.accountId}/members/di`, { key: admin })).status).toBe(200);
    await h.app.get(SeatsService).idle();
    const writes = seatWrites(sub.subscriptionId);
    expect(writes.map((r) => r.replayed)).toEqual([false, true, false]);
    expect(writes[1]!.idempotencyKey).toBe(writes[0]!.idempotencyKey);
    expect(fake.seatItem(sub.subscriptionId, SEAT_PRICE).quantity).toBe(2);
    const [a, b] = [Math.floor(firstAt / 1000), Math.floor(secondAt / 1000)];
    expect(prorations(sub.subscriptionId)).toEqual([
      [1, rest(1, a, sub), iso(a)],
      [1, -rest(1, b, sub), iso(b)],
      [2, rest(2, b, sub), iso(b)],
    ]);
    expect((await h.request('GET', `/v1/accounts/${sub.accountId}/subscription`, { key: admin })).body.subscription.seatQuantity).toBe(2);
  });

  it('bills a change dated before the current period from the period start, and one dated ahead from now', async () => {
    const sub = await teamAccount();
    const members = h.app.get(MembersService);
    setClocks(sub.start * 1000 + 6 * day);
    const at = (userId: string, ms: number): MemberChange => ({
      id: uid('mem'),
      type: 'member.added',
      occurredAt: new Date(ms),
      accountId: sub.accountId,
      userId,
    });
    // One change dated a week before the subscription began, one dated two hours after the service's clock.
    await h.ds.transaction((em) =>
      members.apply(em, [at('ed', sub.start * 1000 - 7 * day), at('fi', sub.start * 1000 + 6 * day + 2 * 3_600_000)], 'kafka', 'test'),
    );
    members.seatsChanged([sub.accountId]);
    await h.app.get(SeatsService).idle();
    expect(fake.seatItem(sub.subscriptionId, SEAT_PRICE).quantity).toBe(2);
    const now = sub.start + 6 * 86_400;
    expect(prorations(sub.subscriptionId)).toEqual([
      [1, rest(1, sub.start, sub), iso(sub.start)],
      [1, -rest(1, now, sub), iso(now)],
      [2, rest(2, now, sub), iso(now)],
    ]);
  });

  it("corrects drift dated at the period's start when the service's clock reads a moment before it (Stripe's clock ahead)", async () => {
    const sub = await teamAccount();
    // Stripe began the period 5 s after what our clock reads: "now" is before it, and Stripe refuses such a date.
    setClocks(sub.start * 1000 - 5_000);
    fake.setQuantity(fake.seatItem(sub.subscriptionId, SEAT_PRICE).id, 3);
    const run = await h.request('POST', '/v1/admin/jobs/seat-reconciliation/run', { key: admin });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(fake.seatItem(sub.subscriptionId, SEAT_PRICE).quantity, JSON.stringify(run.body)).toBe(0);
    expect(run.body.result.corrected.filter((c: { accountId: string }) => c.accountId === sub.accountId)).toEqual([
      { accountId: sub.accountId, subscriptionId: sub.subscriptionId, stripeQuantity: 3, activeSeats: 0 },
    ]);
    // The correction is prorated from the period's start, the earliest date Stripe takes.
    const lines = prorations(sub.subscriptionId);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.map(([, , from]) => from)).toEqual(lines.map(() => iso(sub.start)));
  });

  it('sets Stripe to the members dated now when a change reached them without its dated steps (received before they were kept)', async () => {
    const sub = await teamAccount();
    expect((await h.request('PUT', `/v1/accounts/${sub.accountId}/members/gu`, { key: admin })).status).toBe(200);
    await h.app.get(SeatsService).idle();
    expect(fake.seatItem(sub.subscriptionId, SEAT_PRICE).quantity).toBe(1);
    const members = h.app.get(MembersService);
    const change: MemberChange = { id: uid('mem'), type: 'member.added', occurredAt: clock.now(), accountId: sub.accountId, userId: 'ha' };
    await h.ds.transaction(async (em) => {
      await members.apply(em, [change], 'kafka', 'test');
      await em.query(`DELETE FROM stripe_seat_changes WHERE change_id = $1`, [change.id]);
    });
    const run = await h.request('POST', '/v1/admin/jobs/seat-reconciliation/run', { key: admin });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(fake.seatItem(sub.subscriptionId, SEAT_PRICE).quantity, JSON.stringify(run.body)).toBe(2);
    // That account only: the others' pushes, sent at their dates, left Stripe with their members.
    expect(run.body.result.corrected).toEqual([
      { accountId: sub.accountId, subscriptionId: sub.subscriptionId, stripeQuantity: 1, activeSeats: 2 },
    ]);
  });
});
