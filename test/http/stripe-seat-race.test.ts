import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/common/database/transaction';
import { MembersService, type MemberChange } from '../../src/members/members.service';
import { SeatsService } from '../../src/stripe/seats.service';
import { fundedAccount } from '../support/accounts';
import { uid, type Harness } from '../support/app';
import { startStripeApp, type StripeApp } from '../support/stripe-app';
import { StripeFake } from '../support/stripe-fake';

const SECRET = 'whsec_test_seat_race';
const SEAT_PRICE = 'price_team_seat_placeholder';
const minute = 60_000;

/**
 * An invoice's `invoice.paid` and a membership change dated before the invoice, received late, at the
 * same time: each reads what the other writes (the seats active when the invoice was created; the
 * invoices recorded since the change), so the account's invoice-seats lock makes the second wait for
 * the first to commit. Both are held at their last write (the account's audit chain) until both have
 * started, in either order.
 */
describe('Stripe: invoice.paid racing a late membership change', () => {
  let h: Harness;
  let fake: StripeFake;
  let admin: string;
  let deliver: StripeApp['deliver'];

  beforeAll(async () => {
    ({ h, fake, admin, deliver } = await startStripeApp('stripe_seat_race', SECRET));
  });
  afterAll(() => h.close().then(() => fake.stop()));

  const change = (accountId: string, userId: string, type: MemberChange['type'], at: number): MemberChange => ({
    id: uid('mem'),
    type,
    occurredAt: new Date(at),
    accountId,
    userId,
  });
  /** A membership change as the consumer of `accounts.membership.v1` applies it, then the seat push it asks for. */
  const consume = async (...changes: MemberChange[]) => {
    const members = h.app.get(MembersService);
    const changed = await inTransaction(h.ds, (em) => members.apply(em, changes, 'kafka', 'kafka:accounts.membership.v1'));
    members.seatsChanged(changed);
  };
  /** Backends of this database waiting for a lock. */
  const waiting = async (): Promise<number> =>
    (
      await h.ds.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
      )
    )[0].n;
  const until = async (n: number) => {
    for (let i = 0; i < 500 && (await waiting()) < n; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await waiting()).toBeGreaterThanOrEqual(n);
  };

  it('flags the invoice billed for a member removed before it, whichever starts first: seats and flags as in order', async () => {
    for (const order of ['invoice first', 'membership change first'] as const) {
      const t0 = Date.now();
      const accountId = await fundedAccount(h, admin, { plan: 'free', kind: 'organization' });
      const created = await h.request('POST', `/v1/admin/accounts/${accountId}/subscription`, { key: admin });
      expect(created.status, order).toBe(201);
      const subscriptionId = created.body.subscription.id as string;
      await consume(
        change(accountId, 'alice', 'member.added', t0 - 60 * minute),
        change(accountId, 'bob', 'member.added', t0 - 60 * minute),
      );
      await h.app.get(SeatsService).idle();
      // Billed for alice and bob; bob had left 15 minutes before it was created, which is received now.
      const invoice = fake.invoice(subscriptionId, { seatQuantity: 2, created: Math.floor((t0 - 30 * minute) / 1000) });
      const paid = () => deliver(fake.emit('invoice.paid', invoice));
      const removal = () => consume(change(accountId, 'bob', 'member.removed', t0 - 45 * minute));

      // Both stop at their last write, the account's audit chain, held here until both have started.
      const holder = h.ds.createQueryRunner();
      await holder.connect();
      await holder.startTransaction();
      await holder.query(`SELECT 1 FROM audit_chains WHERE chain = $1 FOR UPDATE`, [accountId]);
      const [first, second] = order === 'invoice first' ? [paid, removal] : [removal, paid];
      const running: Promise<unknown>[] = [first()];
      await until(1);
      running.push(second());
      await until(2);
      await holder.commitTransaction();
      await holder.release();
      await Promise.all(running);
      await h.app.get(SeatsService).idle();

      const members = (await h.request('GET', `/v1/accounts/${accountId}/members`, { key: admin })).body;
      expect(members.seats, order).toBe(1);
      const flags = (await h.request('GET', `/v1/admin/reconciliation/discrepancies?accountId=${accountId}`, { key: admin })).body.items;
      expect(flags, order).toEqual([
        expect.objectContaining({ kind: 'invoice_seats', invoiceId: invoice.id, stripeQuantity: 2, activeSeats: 1, resolvedAt: null }),
      ]);
      expect(await h.ds.query(`SELECT active_seats FROM stripe_invoices WHERE invoice_id = $1`, [invoice.id]), order).toEqual([
        { active_seats: 1 },
      ]);
      // Stripe is told the seats now: one.
      expect(fake.seatItem(subscriptionId, SEAT_PRICE).quantity, order).toBe(1);
    }
  });
});
