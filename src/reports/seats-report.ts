import type { DataSource } from 'typeorm';
import { rows } from 'src/common/database/transaction';
import type { PlanCatalog } from 'src/plan-catalog/plan-catalog';
import type { Period, Report } from './reports.service';

/**
 * Accounts on a plan Stripe bills (Team as shipped): active seats, the Stripe seat quantity, the
 * recurring revenue they imply, and what the subscription's invoices of the period billed: their
 * totals as Stripe invoiced them (an invoice recorded before totals were kept: the plan's prices).
 */
export async function seatsReport(db: Pick<DataSource, 'query'>, plans: PlanCatalog, period: Period, now: Date): Promise<Report> {
  // A period that is over counts the seats active at its end, from the members' change history.
  const asOf = period.to <= now ? period.to : null;
  const stripeBilled = plans.stripeBilledPlans().map((p) => p.id);
  const found = await rows<{
    account: string;
    plan: string;
    name: string | null;
    status: string;
    seats: number;
    subscription_id: string | null;
    subscription_status: string | null;
    stripe_quantity: number | null;
    invoices_paid: number;
    invoices_failed: number;
    invoiced_cents: string;
    legacy_paid: number;
    legacy_seats: number;
  }>(
    db,
    `SELECT a.id AS account, a.plan, a.name, a.status, coalesce(m.seats, 0)::int AS seats,
            s.subscription_id, s.status AS subscription_status, s.seat_quantity AS stripe_quantity,
            coalesce(i.paid, 0)::int AS invoices_paid, coalesce(i.failed, 0)::int AS invoices_failed, coalesce(i.cents, 0)::text AS invoiced_cents,
            coalesce(i.legacy_paid, 0)::int AS legacy_paid, coalesce(i.legacy_seats, 0)::int AS legacy_seats
     FROM accounts a
     LEFT JOIN (SELECT account_id, count(*) AS seats FROM account_members WHERE $3::timestamptz IS NULL AND active GROUP BY account_id
                UNION ALL
                SELECT account_id, count(*) FILTER (WHERE type = 'member.added') FROM (
                  SELECT DISTINCT ON (account_id, user_id) account_id, type FROM account_member_events
                  WHERE $3::timestamptz IS NOT NULL AND occurred_at < $3 ORDER BY account_id, user_id, occurred_at DESC, id DESC) e
                GROUP BY account_id) m ON m.account_id = a.id
     LEFT JOIN stripe_subscriptions s ON s.account_id = a.id
     LEFT JOIN (SELECT account_id, count(*) FILTER (WHERE status = 'paid') AS paid, count(*) FILTER (WHERE status = 'payment_failed') AS failed,
                       sum(total_cents) FILTER (WHERE status = 'paid') AS cents,
                       count(*) FILTER (WHERE status = 'paid' AND total_cents IS NULL) AS legacy_paid,
                       sum(coalesce(seat_quantity, 0)) FILTER (WHERE status = 'paid' AND total_cents IS NULL) AS legacy_seats
                FROM stripe_invoices WHERE period_start >= $1 AND period_start < $2 GROUP BY account_id) i ON i.account_id = a.id
     WHERE a.plan = ANY($4::text[])
     ORDER BY a.id`,
    [period.from.toISOString(), period.to.toISOString(), asOf?.toISOString() ?? null, stripeBilled],
  );
  const billing = (status: string | null) => status !== null && ['active', 'trialing', 'past_due'].includes(status);
  const items = found.map((r) => {
    const { basePrice, seatPrice } = plans.invoicePrices(r.plan);
    return {
      account: r.account,
      plan: r.plan,
      name: r.name,
      status: r.status,
      seats: r.seats,
      subscription: r.subscription_id,
      subscriptionStatus: r.subscription_status,
      stripeQuantity: r.stripe_quantity,
      drift: r.stripe_quantity === null ? null : r.stripe_quantity - r.seats,
      expectedMrrCents: basePrice.unitAmountCents + seatPrice.unitAmountCents * r.seats,
      stripeMrrCents: billing(r.subscription_status) ? basePrice.unitAmountCents + seatPrice.unitAmountCents * (r.stripe_quantity ?? 0) : 0,
      invoicesPaid: r.invoices_paid,
      invoicesFailed: r.invoices_failed,
      // What Stripe invoiced; an invoice recorded before totals were kept counts the plan's prices.
      invoicedCents: Number(r.invoiced_cents) + basePrice.unitAmountCents * r.legacy_paid + seatPrice.unitAmountCents * r.legacy_seats,
    };
  });
  const total = (k: 'seats' | 'expectedMrrCents' | 'stripeMrrCents' | 'invoicedCents') => items.reduce((s, i) => s + i[k], 0);
  return {
    report: 'seats',
    from: period.from.toISOString(),
    to: period.to.toISOString(),
    columns: [
      'account',
      'plan',
      'name',
      'status',
      'seats',
      'subscription',
      'subscriptionStatus',
      'stripeQuantity',
      'drift',
      'expectedMrrCents',
      'stripeMrrCents',
      'invoicesPaid',
      'invoicesFailed',
      'invoicedCents',
    ],
    items,
    totals: {
      teams: items.length,
      seats: total('seats'),
      stripeQuantity: items.reduce((s, i) => s + (i.stripeQuantity ?? 0), 0),
      expectedMrrCents: total('expectedMrrCents'),
      stripeMrrCents: total('stripeMrrCents'),
      invoicedCents: total('invoicedCents'),
    },
    notes: [
      asOf
        ? `seats are the members active at the end of the period (${asOf.toISOString()}), from their change history; the Stripe quantity and status are today's.`
        : 'seats are the members active now (the period is not over).',
      'expectedMrrCents = base + seat price × those seats; stripeMrrCents = the same at the Stripe quantity (0 unless the subscription bills).',
      "invoicedCents is the total Stripe invoiced on the paid invoices whose period starts in [from, to) (prorations, discounts and tax included; the plan's prices × seat quantity for an invoice recorded before totals were kept).",
    ],
  };
}
