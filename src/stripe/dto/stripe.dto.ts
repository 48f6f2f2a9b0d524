import { z } from 'zod';
import { ACCOUNT_ID_PATTERN } from 'src/common/auth/scopes';
import { instant } from 'src/common/http/api-schemas';
import { idempotencyKeySchema } from 'src/ledger/dto/grant.dto';
import { planIdField } from 'src/plan-catalog/plan-catalog';

export const topUpSchema = z.strictObject({ pack: z.string().min(1).max(64).meta({ description: 'A top-up pack id of the plans file' }) });
export type TopUpDto = z.infer<typeof topUpSchema>;

export const topUpHeadersSchema = z.object({
  'idempotency-key': idempotencyKeySchema.meta({
    description: 'The same key again returns the same Checkout Session; another pack under it is a 409',
  }),
});

export const checkoutSchema = z
  .strictObject({
    checkoutUrl: z.string().meta({ description: 'Stripe Checkout: the credits come with its completion' }),
    sessionId: z.string(),
  })
  .meta({ id: 'TopUpCheckout' });

export const subscriptionViewSchema = z
  .strictObject({
    accountId: z.string(),
    plan: planIdField,
    accountStatus: z.enum(['active', 'suspended']),
    billingCycleAnchor: instant.nullable(),
    seats: z.number().int().meta({ description: 'Active members' }),
    subscription: z
      .strictObject({
        id: z.string(),
        customerId: z.string(),
        status: z.string().meta({ description: "Stripe's subscription status" }),
        seatQuantity: z.number().int().nullable(),
        currentPeriod: z.strictObject({ start: instant, end: instant.nullable() }).nullable(),
        pastDueSince: instant.nullable(),
      })
      .nullable(),
  })
  .meta({ id: 'Subscription' });

/**
 * What the webhook reads of a Stripe event, checked once its signature verifies: a correctly signed
 * body that is not an event (no id, no `data.object`) is a 400, never handled.
 */
export const stripeEventSchema = z
  .looseObject({
    id: z.string().min(1).max(255),
    type: z.string().min(1).max(255),
    created: z.number().int().nonnegative(),
    data: z.looseObject({ object: z.record(z.string(), z.unknown()) }),
  })
  .meta({ id: 'StripeEvent', description: 'A Stripe event, as Stripe signs it' });

export const webhookResultSchema = z
  .strictObject({
    received: z.literal(true),
    eventId: z.string(),
    type: z.string(),
    duplicate: z.boolean().meta({ description: 'Already applied before (same event id): nothing done' }),
    ignored: z.boolean().meta({ description: 'A type this service does not handle, or an object it cannot tie to an account' }),
    waiting: z.string().optional().meta({
      description:
        'Present when the event is acknowledged but waits for another (a refund or dispute of a top-up whose checkout has not come): why. It applies when that one comes.',
    }),
  })
  .meta({ id: 'WebhookResult' });

export const discrepanciesSchema = z
  .strictObject({
    items: z.array(
      z.strictObject({
        id: z.string(),
        kind: z.string(),
        accountId: z.string(),
        subscriptionId: z.string(),
        invoiceId: z.string().nullable(),
        stripeQuantity: z.number().int(),
        activeSeats: z.number().int(),
        detectedAt: instant,
        correctedAt: instant.nullable(),
        resolvedAt: instant.nullable().meta({
          description:
            'An invoice flag a membership change received later showed wrong (the invoice billed the seats active when it was created): when. Null while the flag holds',
        }),
        resolvedBy: z.string().nullable().meta({ description: 'The membership change (event id) that resolved the flag' }),
      }),
    ),
  })
  .meta({ id: 'SeatDiscrepancies' });

export const discrepanciesQuerySchema = z.strictObject({
  accountId: z.string().regex(ACCOUNT_ID_PATTERN, 'must be 1-128 characters of letters, digits and _.:-').optional(),
});
