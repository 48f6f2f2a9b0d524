import { z } from 'zod';
import { parseCredits } from 'src/common/money';
import { credits, cursorParam, instant, page, inputInstant } from 'src/common/http/api-schemas';
import { GRANT_SOURCES } from '../core/types';

export const creditsSchema = z
  .string()
  .regex(/^\d{1,12}(\.\d{1,6})?$/, 'must be an amount of credits with up to 6 decimals, e.g. "10.000000"');

export const createGrantSchema = z.strictObject({
  // (A malformed amount is reported once, by the pattern.)
  credits: creditsSchema.refine((v) => (parseCredits(v) ?? 1n) > 0n, 'must be more than 0'),
  expiresAt: inputInstant.nullable().optional(),
  reason: z.string().trim().min(1, 'is required').max(500),
  source: z.enum(GRANT_SOURCES).default('admin'),
  priority: z.number().int('must be an integer').min(-1_000_000).max(1_000_000).optional(),
});
export type CreateGrantDto = z.output<typeof createGrantSchema>;

export const idempotencyKeySchema = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, 'must be 1-255 visible ASCII characters')
  .optional();

export const statementQuerySchema = z.strictObject({
  cursor: cursorParam,
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export const idempotencyHeadersSchema = z.object({
  'idempotency-key': idempotencyKeySchema.meta({
    description: 'The same request again under this key returns the same result (200); a different one is a 409',
  }),
});

export const balanceSchema = z
  .strictObject({ total: credits, held: credits, available: credits, debt: credits.meta({ description: 'Charges no grant could cover' }) })
  .meta({ id: 'Balance' });

export const grantSchema = z
  .strictObject({
    id: z.string(),
    source: z.enum(GRANT_SOURCES),
    amount: credits,
    remaining: credits,
    priority: z.number().int(),
    expiresAt: instant.nullable(),
    createdAt: instant,
  })
  .meta({ id: 'Grant' });

export const grantResultSchema = z
  .strictObject({ grant: grantSchema, balance: balanceSchema, transactionId: z.string() })
  .meta({ id: 'GrantResult' });

export const walletSchema = z
  .strictObject({
    accountId: z.string(),
    ...balanceSchema.shape,
    grants: z
      .array(
        z.strictObject({
          id: z.string(),
          source: z.enum(GRANT_SOURCES),
          remaining: credits,
          expiresAt: instant.nullable(),
          amount: credits,
          priority: z.number().int(),
        }),
      )
      .meta({ description: 'Grants with credits left, in burn order' }),
    spend: z
      .strictObject({ period: z.string(), from: instant, to: instant, spent: credits, held: credits, limit: credits.nullable() })
      .meta({ description: "This period's spend as the spend limit counts it (settled charges and open holds)" }),
    runs: z
      .strictObject({
        used: z.number().int(),
        included: z.number().int().nullable(),
        resetsAt: instant.nullable(),
        period: z.strictObject({ from: instant, to: instant }),
        plan: z.string(),
        allowance: z
          .strictObject({
            included: credits,
            granted: z.boolean(),
            grantId: z.string().nullable(),
            remaining: credits.nullable(),
            expiresAt: instant.nullable(),
          })
          .meta({ description: "The period's included credits and the grant that holds them" }),
      })
      .nullable()
      .meta({ description: "Runtime launches in the plan's period (included null: unlimited)" }),
  })
  .meta({ id: 'Wallet' });

export const ledgerEntrySchema = z
  .strictObject({
    id: z.string(),
    at: instant,
    kind: z.string().meta({ description: 'reservation, settlement, grant, expiry, top-up, adjustment, …' }),
    amount: credits,
    balanceAfter: credits,
    heldAfter: credits,
    availableAfter: credits,
    explanation: z.string(),
    reference: z.string().nullable(),
    holdId: z.string().nullable(),
    grantId: z.string().nullable(),
  })
  .meta({ id: 'LedgerEntry' });

export const ledgerPageSchema = page(ledgerEntrySchema).meta({ id: 'LedgerPage' });
