import { z } from 'zod';
import { ACCOUNT_ID_PATTERN } from 'src/common/auth/scopes';
import { credits } from 'src/common/http/api-schemas';
import { parseCredits } from 'src/common/money';
import { SUSPENSION_CAUSES } from 'src/accounts/entities/account.entity';

export const spendLimitSchema = z.strictObject({
  credits: z
    .string()
    .refine((v) => {
      const micros = parseCredits(v);
      return micros !== undefined && micros >= 0n;
    }, 'must be a non-negative decimal string of credits with at most 6 decimals, e.g. "100.000000"')
    .nullable(),
  period: z.literal('month').default('month'),
  thresholds: z
    .array(z.number().int('must be an integer').min(1, 'must be at least 1').max(100, 'must be at most 100'))
    .max(10, 'at most 10 thresholds')
    .refine((t) => new Set(t).size === t.length, 'must not repeat')
    .default([50, 80, 100]),
  scope: z.strictObject({ userId: z.string().regex(ACCOUNT_ID_PATTERN, 'must be a user id') }).optional(),
});
export type SpendLimitRequest = z.output<typeof spendLimitSchema>;

export const suspensionSchema = z.strictObject({
  suspended: z.boolean(),
  reason: z.string().min(1).max(500).optional(),
  cause: z.enum(SUSPENSION_CAUSES).optional().meta({
    description:
      "Which suspension: `admin` (default), or `non_payment` to waive one for non-payment (`suspended: false` only; the subscription's current past-due spell does not suspend the account again, a later one does)",
  }),
});
export type SuspensionRequest = z.output<typeof suspensionSchema>;

export const spendLimitViewSchema = z
  .strictObject({
    accountId: z.string(),
    scope: z.strictObject({ userId: z.string() }).nullable().meta({ description: 'The member the limit is for; null: the whole account' }),
    period: z.string(),
    credits: credits.nullable().meta({ description: 'The limit; null: none' }),
    thresholds: z.array(z.number().int()),
    spent: credits,
    held: credits,
    remaining: credits.nullable(),
    terminated: z.array(z.string()).meta({ description: 'Runtimes told to terminate because the limit is now passed' }),
  })
  .meta({ id: 'SpendLimit' });

export const spendLimitQuerySchema = z.strictObject({ userId: z.string().regex(ACCOUNT_ID_PATTERN, 'must be a user id').optional() });

export const suspensionViewSchema = z
  .strictObject({
    accountId: z.string(),
    status: z.enum(['active', 'suspended']),
    suspendedFor: z.array(z.enum(SUSPENSION_CAUSES)).meta({
      description: 'What holds the account suspended: an admin, non-payment (lifted when the invoice is paid), or both; empty: active',
    }),
    terminated: z.array(z.string()),
  })
  .meta({ id: 'Suspension' });
