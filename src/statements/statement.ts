import { formatCredits } from '../common/money';
import { PRICE_KEY_OF, quantityMicros, UNIT_OF, ANCILLARY_KINDS, type AncillaryKind } from '../pricing/ancillary-prices';
import type { Plan } from '../plans/plan-catalog';
import type { MeteredAncillary } from '../ancillary/usage-view';
import type { InvoiceRow, Movement } from './statement.store';

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
    if (m.clawback) add('claw_backs', 'claw_backs', 'Top-up credits clawed back (refund or dispute)', granted);
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
  return [...lines.values()].sort((a, b) => SECTIONS.indexOf(a.section) - SECTIONS.indexOf(b.section) || (a.description < b.description ? -1 : 1));
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

/** Team: each invoice of the period, its base fee and its seats, in dollars (cents) as Stripe invoiced them. */
export function teamFees(rows: readonly InvoiceRow[], prices: { baseCents: number; seatCents: number }): Fee[] {
  return rows.flatMap((i) => {
    const seats = i.seatQuantity ?? 0;
    const common = { invoiceId: i.invoiceId, status: i.status, periodStart: i.periodStart, periodEnd: i.periodEnd };
    return [
      { ...common, description: 'Team base fee', amountCents: prices.baseCents },
      { ...common, description: `Team seats: ${seats} × $${(prices.seatCents / 100).toFixed(2)}`, amountCents: seats * prices.seatCents },
    ];
  });
}

/** 6-decimal quantity text for micro-units. */
export function formatQuantity(micros: bigint): string {
  return formatCredits(micros);
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1).replace('_', ' ');
}
