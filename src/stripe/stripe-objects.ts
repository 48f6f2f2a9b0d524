import type { SubscriptionStatus } from './entities/stripe-subscription.entity';
import { SUBSCRIPTION_STATUSES } from './entities/stripe-subscription.entity';

/**
 * Narrow, tolerant readers of the Stripe objects this service uses (from API answers and event
 * payloads). They accept both the current API shape (periods on subscription items, the invoice's
 * subscription under `parent.subscription_details`) and the older one (periods and `subscription`
 * on the top-level object), so a change of API version touches this file only.
 */
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const idOf = (v: unknown): string | null => str(v) ?? (isObj(v) ? str(v.id) : null);
const time = (v: unknown): Date | null => {
  const n = num(v);
  return n === null ? null : new Date(n * 1000);
};
const list = (v: unknown): Obj[] => (isObj(v) && Array.isArray(v.data) ? v.data.filter(isObj) : []);
export const metadataOf = (o: Obj): Record<string, string> =>
  isObj(o.metadata) ? Object.fromEntries(Object.entries(o.metadata).filter((e): e is [string, string] => typeof e[1] === 'string')) : {};

export interface SubscriptionItemSnapshot {
  id: string;
  priceId: string | null;
  quantity: number;
}

export interface SubscriptionSnapshot {
  id: string;
  customerId: string | null;
  status: SubscriptionStatus;
  billingCycleAnchor: Date | null;
  currentPeriodStart: Date | null;
  currentPeriodEnd: Date | null;
  items: SubscriptionItemSnapshot[];
  metadata: Record<string, string>;
  /** When it ended (`ended_at`; `canceled_at` for a cancelled one without it); null while it runs. */
  endedAt: Date | null;
}

export function readSubscription(o: unknown): SubscriptionSnapshot | null {
  if (!isObj(o) || !str(o.id)) return null;
  const items = list(o.items).map((i) => ({
    id: str(i.id) ?? '',
    priceId: idOf(i.price) ?? idOf(i.plan),
    quantity: num(i.quantity) ?? 0,
    start: time(i.current_period_start),
    end: time(i.current_period_end),
  }));
  const status = SUBSCRIPTION_STATUSES.find((s) => s === o.status) ?? 'incomplete';
  // Items of one subscription share a cycle here (same interval); take the first item that has one.
  const withPeriod = items.find((i) => i.start && i.end);
  return {
    id: str(o.id)!,
    customerId: idOf(o.customer),
    status,
    billingCycleAnchor: time(o.billing_cycle_anchor),
    currentPeriodStart: time(o.current_period_start) ?? withPeriod?.start ?? null,
    currentPeriodEnd: time(o.current_period_end) ?? withPeriod?.end ?? null,
    items: items.map(({ id, priceId, quantity }) => ({ id, priceId, quantity })),
    metadata: metadataOf(o),
    endedAt: time(o.ended_at) ?? (status === 'canceled' ? time(o.canceled_at) : null),
  };
}

/** One line of an invoice as Stripe invoiced it: its amount in cents (before discounts and tax), a proration or not. */
export interface InvoiceLineSnapshot {
  priceId: string | null;
  quantity: number | null;
  amountCents: number | null;
  proration: boolean;
  description: string | null;
}

export interface InvoiceSnapshot {
  id: string;
  customerId: string | null;
  subscriptionId: string | null;
  /**
   * Whether the invoice bills a subscription cycle: a regular line (not a proration) with a period,
   * or no line with a period at all (the invoice's own period then). An invoice of prorations only
   * (a seat change invoiced at once, `always_invoice`) bills none: no cycle begins with it.
   */
  billsCycle: boolean;
  /** The subscription cycle the invoice bills (its subscription lines' period, prorations aside). */
  periodStart: Date | null;
  periodEnd: Date | null;
  created: Date | null;
  /** Whether it is its subscription's first invoice (`billing_reason: subscription_create`): the first payment. */
  firstOfSubscription: boolean;
  /** When it was paid (`status_transitions.paid_at`); null when the object does not say. */
  paidAt: Date | null;
  lines: InvoiceLineSnapshot[];
  /** What the invoice bills in cents, discounts and tax included (`total`), and its currency. */
  totalCents: number | null;
  currency: string | null;
  metadata: Record<string, string>;
}

/** A line is a proration in the older shape (`proration`) and in the current one (under `parent`). */
function isProration(line: Obj): boolean {
  const parent = isObj(line.parent) ? line.parent : {};
  const details = [parent.subscription_item_details, parent.invoice_item_details].filter(isObj);
  return line.proration === true || details.some((d) => d.proration === true);
}

export function readInvoice(o: unknown): InvoiceSnapshot | null {
  if (!isObj(o) || !str(o.id)) return null;
  const parent = isObj(o.parent) ? o.parent : {};
  const details = isObj(parent.subscription_details) ? parent.subscription_details : {};
  const lines = list(o.lines).map((l) => {
    const pricing = isObj(l.pricing) && isObj(l.pricing.price_details) ? l.pricing.price_details : {};
    const period = isObj(l.period) ? l.period : {};
    return {
      priceId: idOf(l.price) ?? idOf(pricing.price),
      quantity: num(l.quantity),
      amountCents: num(l.amount),
      proration: isProration(l),
      description: str(l.description),
      start: time(period.start),
      end: time(period.end),
    };
  });
  // A proration's period is the rest of an earlier cycle: the cycle billed is a regular line's.
  const cycle = lines.find((l) => !l.proration && l.start && l.end && l.end > l.start);
  const withPeriod = cycle ?? lines.find((l) => l.start && l.end && l.end > l.start);
  return {
    id: str(o.id)!,
    billsCycle: cycle !== undefined || withPeriod === undefined,
    customerId: idOf(o.customer),
    subscriptionId: idOf(details.subscription) ?? idOf(o.subscription),
    periodStart: withPeriod?.start ?? time(o.period_start),
    periodEnd: withPeriod?.end ?? time(o.period_end),
    created: time(o.created),
    firstOfSubscription: o.billing_reason === 'subscription_create',
    paidAt: isObj(o.status_transitions) ? time(o.status_transitions.paid_at) : null,
    lines: lines.map(({ priceId, quantity, amountCents, proration, description }) => ({
      priceId,
      quantity,
      amountCents,
      proration,
      description,
    })),
    totalCents: num(o.total),
    currency: str(o.currency),
    metadata: { ...(isObj(details.metadata) ? metadataOf(details) : {}), ...metadataOf(o) },
  };
}

export interface CheckoutSessionSnapshot {
  id: string;
  mode: string | null;
  paymentStatus: string | null;
  clientReferenceId: string | null;
  customerId: string | null;
  subscriptionId: string | null;
  paymentIntentId: string | null;
  amountTotal: number | null;
  metadata: Record<string, string>;
}

export function readCheckoutSession(o: unknown): CheckoutSessionSnapshot | null {
  if (!isObj(o) || !str(o.id)) return null;
  return {
    id: str(o.id)!,
    mode: str(o.mode),
    paymentStatus: str(o.payment_status),
    clientReferenceId: str(o.client_reference_id),
    customerId: idOf(o.customer),
    subscriptionId: idOf(o.subscription),
    paymentIntentId: idOf(o.payment_intent),
    amountTotal: num(o.amount_total),
    metadata: metadataOf(o),
  };
}

/** A charge (charge.refunded) or a dispute (charge.dispute.created): what was paid and what is taken back, in cents. */
export interface ChargeSnapshot {
  /** The object's id: the charge's, or the dispute's. */
  id: string;
  /** The charge reversed (a dispute names it in `charge`). */
  chargeId: string;
  paymentIntentId: string | null;
  amount: number;
  /** Refunded (charge) or disputed (dispute) cents. */
  reversed: number;
}

export function readCharge(o: unknown, kind: 'refund' | 'dispute'): ChargeSnapshot | null {
  if (!isObj(o) || !str(o.id)) return null;
  const amount = num(o.amount) ?? 0;
  return {
    id: str(o.id)!,
    chargeId: (kind === 'dispute' ? idOf(o.charge) : null) ?? str(o.id)!,
    paymentIntentId: idOf(o.payment_intent),
    amount,
    reversed: kind === 'refund' ? (num(o.amount_refunded) ?? amount) : amount,
  };
}
