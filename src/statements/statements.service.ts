import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BillingException } from 'src/common/errors/billing.exception';
import { formatCredits } from 'src/common/money';
import { PlanCatalog, type PlanOverrides } from 'src/plan-catalog/plan-catalog';
import type { StatementJson } from './dto/statement.dto';
import { movementLines, teamFees, unpricedLines, type StatementLine } from './statement';
import { ancillaryUsageJson, meteredAncillary } from 'src/ancillary/usage-view';
import { accountTerms, balanceBefore, invoices, movements, topUps } from './statement.store';

/**
 * A statement per account and calendar month: the opening balance from the ledger entries before
 * the month, every ledger movement of the month in lines (grants, top-ups, runtime charges by
 * environment and size, ancillary charges by kind, expiries, claw-backs), the closing balance, the
 * unpriced ancillary usage, for Team the fees Stripe invoiced, and the top-ups bought with their
 * price in dollars. Read only.
 */
@Injectable()
export class StatementsService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly catalog: PlanCatalog,
  ) {}

  async statement(accountId: string, period: string): Promise<StatementJson> {
    const from = new Date(`${period}-01T00:00:00.000Z`);
    const to = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1));
    const terms = await accountTerms(this.ds, accountId);
    if (!terms) throw BillingException.notFound(`Account ${accountId}`);
    if (!this.catalog.has(terms.plan)) throw new Error(`account ${accountId} has an unknown plan ${terms.plan}`);
    const plan = this.catalog.effective(terms.plan, terms.overrides as PlanOverrides | null);
    const [opening, moved, metered, invoiced, bought] = await Promise.all([
      balanceBefore(this.ds, accountId, from),
      movements(this.ds, accountId, from, to),
      meteredAncillary(this.ds, { accountId, from, to }),
      invoices(this.ds, accountId, from, to),
      topUps(this.ds, accountId, from, to),
    ]);
    const lines: StatementLine[] = [...movementLines(moved), ...unpricedLines(metered, plan)];
    const movementsSum = lines.reduce((sum, l) => sum + l.credits, 0n);
    const { basePrice, seatPrice } = this.catalog.invoicePrices(plan.id);
    return {
      accountId,
      period,
      from: from.toISOString(),
      to: to.toISOString(),
      plan: { id: plan.id, name: plan.name },
      creditValue: { currency: 'usd', centsPerCredit: this.catalog.centsPerCredit },
      openingBalance: formatCredits(opening),
      closingBalance: formatCredits(opening + movementsSum),
      lines: lines.map((l) => ({
        section: l.section,
        description: l.description,
        credits: formatCredits(l.credits),
        count: l.count,
        ...(l.quantity !== undefined ? { quantity: formatCredits(l.quantity) } : {}),
        ...(l.unit !== undefined ? { unit: l.unit } : {}),
        ...(l.included !== undefined ? { included: formatCredits(l.included) } : {}),
        ...(l.beyondIncluded !== undefined ? { beyondIncluded: formatCredits(l.beyondIncluded) } : {}),
        ...(l.rateCardVersions !== undefined ? { rateCardVersions: l.rateCardVersions } : {}),
      })),
      ancillary: metered.map(ancillaryUsageJson),
      fees: teamFees(invoiced, { base: basePrice, seat: seatPrice }).map((f) => ({
        ...f,
        periodStart: f.periodStart.toISOString(),
        periodEnd: f.periodEnd.toISOString(),
      })),
      topUps: bought.map((t) => ({
        sessionId: t.sessionId,
        pack: t.pack,
        credits: formatCredits(t.credits),
        amountCents: t.amountCents,
        at: t.at.toISOString(),
      })),
      reconciliation: { transactions: moved.length, movements: formatCredits(movementsSum) },
    };
  }
}

/** The statement as CSV rows (the reports' CSV writer turns them into text): balances, lines, fees, top-ups, ancillary usage. */
export function statementCsvRows(s: StatementJson): Record<string, string | number | null>[] {
  const row = (section: string, description: string, credits: string | null, extra: Record<string, string | number | null> = {}) => ({
    section,
    description,
    count: null,
    quantity: null,
    unit: null,
    included: null,
    beyond_included: null,
    credits,
    usd_cents: null,
    due: null,
    charged: null,
    unpaid: null,
    ...extra,
  });
  return [
    row('opening_balance', `Opening balance ${s.from}`, s.openingBalance),
    ...s.lines.map((l) =>
      row(l.section, l.description, l.credits, {
        count: l.count,
        quantity: l.quantity ?? null,
        unit: l.unit ?? null,
        included: l.included ?? null,
        beyond_included: l.beyondIncluded ?? null,
      }),
    ),
    row('closing_balance', `Closing balance ${s.to}`, s.closingBalance),
    ...s.fees.map((f) => row('fees', `${f.description} (${f.invoiceId}, ${f.status})`, null, { usd_cents: f.amountCents })),
    ...s.topUps.map((t) => row('top_up_purchases', `Top-up ${t.pack} (${t.sessionId})`, t.credits, { usd_cents: t.amountCents })),
    // The ancillary usage metered in the month, as in the JSON: what is due, charged and still unpaid.
    ...s.ancillary.map((a) =>
      row('ancillary_usage', `${a.kind}${a.priced ? '' : ' (unpriced)'}`, null, {
        quantity: a.quantity,
        unit: a.unit,
        due: a.amount,
        charged: a.charged,
        unpaid: a.unpaid,
      }),
    ),
  ];
}

export const STATEMENT_CSV_COLUMNS = [
  'section',
  'description',
  'count',
  'quantity',
  'unit',
  'included',
  'beyond_included',
  'credits',
  'usd_cents',
  'due',
  'charged',
  'unpaid',
];
