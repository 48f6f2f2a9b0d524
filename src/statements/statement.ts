import { formatCredits } from 'src/common/money';
import { PRICE_KEY_OF, quantityMicros, UNIT_OF, ANCILLARY_KINDS, type AncillaryKind } from 'src/pricing/ancillary-prices';
import type { Plan } from 'src/plan-catalog/plan-catalog';
import type { MeteredAncillary } from 'src/ancillary/usage-view';
import type { InvoiceLineSnapshot } from 'src/stripe/stripe-objects';
import type { InvoiceRow, Movement } from './statement.store';

const CLAWED_BACK = 'Credits clawed back (a top-up refunded or disputed, or a cycle paid after its subscription ended)';

export const SECTIONS = [
  'included_credits',
  'grants',
  'top_ups',
  'runtime_charges',
  'ancillary_charges',
  'other_charges',
  'expiries',
  'claw_backs',
  'unpriced',
] as const;
export type Section = (typeof SECTIONS)[number];

/** One line of a statement; `credits` is its signed effect on the balance (0 for an unpriced line). */
export interface StatementLine {
  section: Section;
  description: string;
  credits: bigint;
  /** How many ledger transactions (or, for runtimes, runtimes) the line sums. */
  count: number;
  quantity?: bigint;
  unit?: string;
  included?: bigint;
  beyondIncluded?: bigint;
  rateCardVersions?: string[];
}

export interface Fee {
  invoiceId: string;
  status: string;
  periodStart: Date;
  periodEnd: Date;
  description: string;
  amountCents: number;
}

/**
 * The lines of a statement from the period's ledger movements: each transaction's effect on the
 * balance, −(issued + consumption + expired), split by what it was for, so that the lines sum to
 * closing − opening exactly.
 */
export function movementLines(list: readonly Movement[]): StatementLine[] {
  const lines = new Map<string, StatementLine>();
  const runtimes = new Map<string, Set<string>>();
  const add = (key: string, section: Section, description: string, credits: bigint, runtimeId?: string): void => {
    if (credits === 0n) return;
    const line = lines.get(key) ?? { section, description, credits: 0n, count: 0 };
    line.credits += credits;
    if (runtimeId === undefined) line.count++;
    else {
      const seen = runtimes.get(key) ?? new Set();
      seen.add(runtimeId);
      runtimes.set(key, seen);
      line.count = seen.size;
    }
    lines.set(key, line);
  };
  for (const m of list) {
    const granted = -m.issued;
    if (m.clawback) add('claw_backs', 'claw_backs', CLAWED_BACK, granted);
    else if (m.kind === 'top-up' || m.grantSource === 'top_up') add('top_ups', 'top_ups', 'Top-ups', granted);
    else if (m.grantSource === 'plan_allowance') add('included_credits', 'included_credits', 'Included credits of the plan', granted);
    else add(`grants:${m.grantSource ?? 'other'}`, 'grants', `Grants (${m.grantSource ?? 'other'})`, granted);

    const charged = -m.consumption;
    if (m.runtime) {
      const r = m.runtime;
      const what = [r.environment || 'unnamed environment', r.sizeClass, r.accelerator].filter(Boolean).join(', ');
      add(`runtime:${r.environment}|${r.sizeClass}|${r.accelerator ?? ''}`, 'runtime_charges', `Runtimes: ${what}`, charged, r.runtimeId);
    } else if (m.ancillaryKind) add(`ancillary:${m.ancillaryKind}`, 'ancillary_charges', `${capital(m.ancillaryKind)} charges`, charged);
    else add('other', 'other_charges', 'Other charges and corrections', charged);

    add('expiries', 'expiries', 'Credits expired', -m.expired);
  }
  return [...lines.values()].sort(
    (a, b) => SECTIONS.indexOf(a.section) - SECTIONS.indexOf(b.section) || (a.description < b.description ? -1 : 1),
  );
}

/**
 * Unpriced ancillary usage: metered, never charged, shown with its quantity and what the plan
 * includes (and what is beyond it), so finance sees what is not yet billed.
 */
export function unpricedLines(metered: readonly MeteredAncillary[], plan: Plan): StatementLine[] {
  return metered
    .filter((m) => !m.priced && (ANCILLARY_KINDS as readonly string[]).includes(m.kind))
    .map((m) => {
      const kind = m.kind as AncillaryKind;
      const quantity = quantityMicros(kind, m.quantity);
      const included = plan.ancillaryIncluded[PRICE_KEY_OF[kind]] ?? 0n;
      return {
        section: 'unpriced' as const,
        description: `${capital(kind)}: unpriced (${PRICE_KEY_OF[kind]})`,
        credits: 0n,
        count: 0,
        quantity,
        unit: UNIT_OF[kind],
        included,
        beyondIncluded: quantity > included ? quantity - included : 0n,
        rateCardVersions: m.versions,
      };
    });
}

export interface TeamPrices {
  base: { priceId: string; unitAmountCents: number };
  seat: { priceId: string; unitAmountCents: number };
}

/**
 * Team: each invoice of the period in dollars (cents) as Stripe invoiced it: the base fee and the
 * seat fee are the sums of the invoice's lines of each price, prorations included; what the total
 * has beyond them (discounts, tax, other lines) is a line of its own, so the fees sum to the total.
 * An invoice recorded before its amounts were kept shows the plan's prices × its seat quantity, and
 * says so.
 */
export function teamFees(rows: readonly InvoiceRow[], prices: TeamPrices): Fee[] {
  return rows.flatMap((i) => {
    const fee = (description: string, amountCents: number): Fee => ({
      invoiceId: i.invoiceId,
      status: i.status,
      periodStart: i.periodStart,
      periodEnd: i.periodEnd,
      description,
      amountCents,
    });
    if (i.lines === null) {
      const seats = i.seatQuantity ?? 0;
      const note = " (the plan's prices: the invoice's amounts were not recorded)";
      return [
        fee(`Team base fee${note}`, prices.base.unitAmountCents),
        fee(`Team seats: ${seats} × ${dollars(prices.seat.unitAmountCents)}${note}`, seats * prices.seat.unitAmountCents),
      ];
    }
    const of = (priceId: string) => i.lines!.filter((l) => l.priceId === priceId);
    const base = invoicedFee('Team base fee', of(prices.base.priceId), false);
    const seats = invoicedFee('Team seats', of(prices.seat.priceId), true);
    const fees = [fee(base.description, base.cents), fee(seats.description, seats.cents)];
    const other = i.totalCents === null ? 0 : i.totalCents - base.cents - seats.cents;
    if (other !== 0) fees.push(fee('Other invoice items (discounts, tax, other lines)', other));
    return fees;
  });
}

/** The sum of one price's lines, described by its regular line (quantity × unit amount) and its prorations. */
function invoicedFee(name: string, lines: readonly InvoiceLineSnapshot[], perUnit: boolean): { description: string; cents: number } {
  const cents = (list: readonly InvoiceLineSnapshot[]) => list.reduce((sum, l) => sum + (l.amountCents ?? 0), 0);
  const regular = lines.filter((l) => !l.proration);
  const prorations = lines.filter((l) => l.proration);
  const quantity = regular.reduce((q, l) => q + (l.quantity ?? 0), 0);
  let description = name;
  if (perUnit) description += quantity > 0 ? `: ${quantity} × ${dollars(cents(regular) / quantity)}` : `: ${quantity}`;
  if (prorations.length > 0) description += `, prorations ${cents(prorations) < 0 ? '−' : '+'}${dollars(Math.abs(cents(prorations)))}`;
  return { description, cents: cents(lines) };
}

function dollars(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

/** 6-decimal quantity text for micro-units. */
export function formatQuantity(micros: bigint): string {
  return formatCredits(micros);
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1).replace('_', ' ');
}
