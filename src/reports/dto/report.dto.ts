import { z } from 'zod';
import { credits, instant } from 'src/common/http/api-schemas';
import { ancillaryUsageSchema } from 'src/ancillary/dto/ancillary-usage.dto';
import { CREDIT_GROUPS, USAGE_GROUPS, type ReportName } from '../report-names';

/**
 * The JSON form of each report: the same envelope (`columns` in order, also the CSV header; one item
 * per row; totals where they mean something) with the row and the totals of that report, so a
 * client knows each column's type and a column the document lacks fails the tests' response checks.
 */
function reportSchema<N extends ReportName, R extends z.ZodType, T extends z.ZodType, G extends z.ZodType | undefined = undefined>(
  name: N,
  id: string,
  shape: { row: R; totals?: T; groupBy?: G; notes?: boolean },
) {
  return z
    .strictObject({
      report: z.literal(name),
      from: instant,
      to: instant,
      ...(shape.groupBy ? { groupBy: shape.groupBy } : {}),
      columns: z.array(z.string()).meta({ description: 'The keys of each item, in order (also the CSV header)' }),
      items: z.array(shape.row),
      ...(shape.totals ? { totals: shape.totals } : {}),
      ...(shape.notes ? { notes: z.array(z.string()).meta({ description: 'How to read the figures' }) } : {}),
    })
    .meta({ id });
}

const count = z.number().int().nonnegative();
const cents = z.number().int().meta({ description: 'USD cents' });
const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .meta({ description: 'A UTC day, YYYY-MM-DD' });
const usageFigures = { runtimes: count, seconds: count.meta({ description: 'Running time, whole seconds' }), credits };

export const usageReportSchema = reportSchema('usage', 'UsageReport', {
  groupBy: z.enum(USAGE_GROUPS),
  row: z
    .strictObject({
      account: z.string().optional(),
      environment: z.string().optional(),
      day: day.optional(),
      user: z.string().optional(),
      ...usageFigures,
    })
    .meta({ description: 'The key columns of `groupBy` (user: account and user), then the figures' }),
  totals: z.strictObject(usageFigures),
  notes: true,
});

const creditFigures = {
  granted: credits,
  topUps: credits,
  clawedBack: credits,
  consumed: credits,
  refunded: credits,
  expired: credits,
  net: credits.meta({ description: 'granted + topUps − clawedBack − consumed + refunded − expired' }),
};

export const creditsReportSchema = reportSchema('credits', 'CreditsReport', {
  groupBy: z.enum(CREDIT_GROUPS),
  row: z
    .strictObject({ day: day.optional(), account: z.string().optional(), ...creditFigures })
    .meta({ description: 'The key column of `groupBy` (none for total), then the figures' }),
  totals: z.strictObject(creditFigures),
  notes: true,
});

export const seatsReportSchema = reportSchema('seats', 'SeatsReport', {
  row: z.strictObject({
    account: z.string(),
    plan: z.string(),
    name: z.string().nullable(),
    status: z.string(),
    seats: count,
    subscription: z.string().nullable(),
    subscriptionStatus: z.string().nullable(),
    stripeQuantity: count.nullable(),
    drift: z.number().int().nullable().meta({ description: 'stripeQuantity − seats' }),
    expectedMrrCents: cents,
    stripeMrrCents: cents,
    invoicesPaid: count,
    invoicesFailed: count,
    invoicedCents: cents,
  }),
  totals: z.strictObject({
    teams: count,
    seats: count,
    stripeQuantity: count,
    expectedMrrCents: cents,
    stripeMrrCents: cents,
    invoicedCents: cents,
  }),
  notes: true,
});

export const spendLimitsReportSchema = reportSchema('spend-limits', 'SpendLimitsReport', {
  row: z.strictObject({
    at: instant,
    type: z.enum(['alert', 'termination']),
    account: z.string(),
    user: z.string().nullable(),
    event: z.string().meta({ description: 'An alert: threshold or reached; a termination: its reason' }),
    threshold: z.number().nullable(),
    spent: credits.nullable(),
    limit: credits.nullable(),
    runtime: z.string().nullable(),
  }),
  totals: z.record(z.string(), count).meta({ description: 'Rows by `<type>:<event>`' }),
  notes: true,
});

export const reconciliationReportSchema = reportSchema('reconciliation', 'ReconciliationReport', {
  row: z.strictObject({
    detectedAt: instant,
    kind: z.string(),
    account: z.string(),
    subscription: z.string(),
    invoice: z.string().nullable(),
    stripeQuantity: count,
    activeSeats: count,
    difference: z.number().int().meta({ description: 'stripeQuantity − activeSeats' }),
    correctedAt: instant.nullable(),
    resolvedAt: instant.nullable().meta({ description: 'An invoice flag a membership change received later showed wrong: when' }),
  }),
  totals: z.strictObject({
    discrepancies: count.meta({ description: 'Rows found in the period that still hold (resolved invoice flags not counted)' }),
    resolved: count.meta({ description: 'Invoice flags found in the period and resolved since' }),
    openDrift: count,
  }),
  notes: true,
});

export const topConsumersReportSchema = reportSchema('top-consumers', 'TopConsumersReport', {
  row: z.strictObject({
    rank: z.number().int().positive(),
    account: z.string(),
    name: z.string().nullable(),
    plan: z.string().nullable(),
    ...usageFigures,
  }),
});

export const ancillaryReportSchema = reportSchema('ancillary', 'AncillaryReport', {
  row: ancillaryUsageSchema
    .omit({ rateCardVersions: true })
    .extend({ account: z.string() })
    .meta({ id: 'AncillaryReportRow', description: 'Ancillary usage of one account and kind metered in the period' }),
  totals: z.strictObject({ amount: credits, charged: credits, unpaid: credits }),
  notes: true,
});
