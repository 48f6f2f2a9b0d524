import { z } from 'zod';
import { BillingException } from 'src/common/errors/billing.exception';
import { ancillaryUsageSchema } from 'src/ancillary/dto/ancillary-usage.dto';
import { credits, instant } from 'src/common/http/api-schemas';
import { SECTIONS } from '../statement';

const quantity = z
  .string()
  .regex(/^\d+\.\d{6}$/)
  .meta({ description: 'A quantity in `unit`, with 6 decimals (rounded up)' });

export const statementLineSchema = z
  .strictObject({
    section: z.enum(SECTIONS),
    description: z.string(),
    credits: credits.meta({
      description: "The line's effect on the balance (negative for charges, expiries and claw-backs; 0 for unpriced usage)",
    }),
    count: z.number().int().meta({ description: 'Ledger transactions the line sums (runtimes, for runtime lines)' }),
    quantity: quantity.optional(),
    unit: z.string().optional(),
    included: quantity.optional().meta({ description: 'What the plan includes each month (unpriced usage)' }),
    beyondIncluded: quantity.optional(),
    rateCardVersions: z.array(z.string()).optional(),
  })
  .meta({ id: 'StatementLine' });

export const statementSchema = z
  .strictObject({
    accountId: z.string(),
    period: z.string().meta({ description: 'The calendar month, YYYY-MM (UTC)' }),
    from: instant,
    to: instant,
    plan: z.strictObject({ id: z.string(), name: z.string() }),
    creditValue: z
      .strictObject({ currency: z.literal('usd'), centsPerCredit: z.number().int() })
      .meta({ description: 'What one credit is worth (the plan catalog): fees are in dollars, everything else in credits' }),
    openingBalance: credits.meta({
      description: 'The balance (total: available + held − debt) at `from`, from the ledger entries before it',
    }),
    closingBalance: credits.meta({ description: 'openingBalance + the credits of every line' }),
    lines: z.array(statementLineSchema),
    ancillary: z.array(ancillaryUsageSchema).meta({
      description: 'Ancillary usage metered for hours and reports in the period, by kind (charges posted in the period are in `lines`)',
    }),
    fees: z
      .array(
        z.strictObject({
          invoiceId: z.string(),
          status: z.string(),
          periodStart: instant,
          periodEnd: instant,
          description: z.string(),
          amountCents: z.number().int(),
        }),
      )
      .meta({
        description:
          'Team: each invoice whose cycle starts in the period, in US cents as Stripe invoiced it: the base fee and the seat fee (the sums of its lines of each price, prorations included), and its other items (discounts, tax) when there are any, so that they sum to its total',
      }),
    topUps: z
      .array(
        z.strictObject({
          sessionId: z.string().meta({ description: 'The Stripe Checkout Session' }),
          pack: z.string(),
          credits: credits.meta({ description: 'Credits granted (in the `top_ups` line of the period)' }),
          amountCents: z
            .number()
            .int()
            .nullable()
            .meta({ description: 'What Stripe Checkout charged, in US cents (null when Stripe did not say)' }),
          at: instant,
        }),
      )
      .meta({ description: 'Top-ups bought through Stripe whose credits were granted in the period, with their price in dollars' }),
    reconciliation: z.strictObject({
      transactions: z.number().int().meta({ description: 'Ledger transactions posted in the period' }),
      movements: credits.meta({ description: 'Σ of the lines = closingBalance − openingBalance' }),
    }),
  })
  .meta({ id: 'Statement' });

export type StatementJson = z.infer<typeof statementSchema>;

export const statementQuery = z.strictObject({ format: z.enum(['json', 'csv']).optional() });

const PERIOD_MESSAGE = 'must be a calendar month, YYYY-MM, from 1970-01 through 9999-11';

/**
 * A statement's month: from 1970 (as every date the API takes), through 9999-11, whose end is the
 * last the API can write in four-digit years (9999-12 would end in year 10000).
 */
export const periodParam = z
  .string()
  .regex(/^((19[7-9]\d|[2-8]\d{3}|9[0-8]\d\d|99[0-8]\d|999[0-8])-(0[1-9]|1[0-2])|9999-(0[1-9]|1[01]))$/, PERIOD_MESSAGE)
  .meta({ description: 'A calendar month, YYYY-MM (UTC)', examples: ['2031-03'] });

/** A statement's period from a path, or 400 with a finding on `period` (the API and the console alike). */
export function checkPeriod(period: string): void {
  if (!periodParam.safeParse(period).success) throw BillingException.invalid([{ field: 'period', message: PERIOD_MESSAGE }]);
}
