import { z } from 'zod';
import { credits, instant } from 'src/common/http/api-schemas';
import { GRANT_SOURCES } from 'src/ledger/core/types';

/**
 * The messages of `billing.notifications.v1`, one schema per type: what a consumer of the topic can
 * rely on (the AsyncAPI document is made from it; every notification the tests make is held to it).
 * The types, their causes and data are described in docs/contract-changes.md.
 */

const period = z.strictObject({ from: instant, to: instant }).meta({ description: 'The period the notice is about: [from, to)' });
const grantId = z.string().meta({ description: 'The grant (credit bucket), as GET /v1/accounts/{id}/wallet lists it' });
const source = z.enum(GRANT_SOURCES);
const limitScope = z
  .strictObject({ userId: z.string() })
  .nullable()
  .meta({ description: 'The member the limit applies to; null: the whole account' });
const suspension = z.strictObject({
  reason: z.string().nullable().meta({ description: 'The reason given for the change; null when none was' }),
  terminated: z.number().int().nonnegative().meta({ description: 'How many runtimes were told to terminate' }),
});

/** Each type's `data`. */
const DATA = {
  'credits.granted': z.strictObject({
    grantId,
    source,
    credits,
    expiresAt: instant.nullable().meta({ description: 'null: never expires' }),
    reason: z.string().optional().meta({ description: "An admin grant's reason" }),
    sessionId: z.string().optional().meta({ description: "A top-up's Stripe Checkout Session" }),
    period: period.optional().meta({ description: "A plan allowance's period" }),
    invoiceId: z.string().optional().meta({ description: "The Stripe invoice that paid a billing cycle's allowance" }),
  }),
  'credits.expired': z.strictObject({
    grantId,
    source,
    credits: credits.meta({ description: 'What expired by this cause' }),
    expiredAt: instant.meta({ description: "The grant's expiry" }),
  }),
  'quota.exhausted': z.strictObject({
    quota: z.enum(['runs', 'agents']),
    limit: z.number().int().nonnegative(),
    resetsAt: instant,
    period,
  }),
  'wallet.low_balance': z.strictObject({
    available: credits.meta({ description: 'The available balance the reservation left' }),
    threshold: credits.meta({
      description:
        'The line it fell below. Sent once per crossing: again only after the available balance has been back at or above the line (a top-up, a grant, a hold released, the next allowance); the cause is `wallet.low_balance:<accountId>:<period start>:<n>`, n the times it was',
    }),
    period,
  }),
  'spend_limit.threshold_crossed': z.strictObject({
    limitId: z.string(),
    scope: limitScope,
    threshold: z.number().int().min(1).max(100).meta({ description: 'Percent of the limit' }),
    limit: credits,
    spent: credits,
    period,
  }),
  'spend_limit.reached': z.strictObject({ limitId: z.string(), scope: limitScope, limit: credits, spent: credits, period }),
  'subscription.past_due': z.strictObject({ invoiceId: z.string(), pastDueSince: instant, suspendsAt: instant }),
  'storage.unpaid': z.strictObject({
    unpaid: credits,
    since: instant,
    snapshotsFlaggedAfter: instant.meta({ description: 'When the unpaid snapshots are flagged for deletion, if still unpaid' }),
  }),
  'credits.clawed_back': z.discriminatedUnion('reason', [
    z
      .strictObject({
        grantId,
        credits: credits.meta({ description: 'Taken back' }),
        reason: z.enum(['refund', 'dispute']),
        chargeId: z.string(),
        topUpSession: z.string(),
      })
      .meta({ description: "A top-up's charge refunded or disputed" }),
    z
      .strictObject({
        grantId,
        credits: credits.meta({ description: 'Taken back' }),
        reason: z.literal('paid_after_end'),
        invoiceId: z.string(),
        subscriptionId: z.string(),
      })
      .meta({ description: "A cycle's allowance whose invoice was paid after its subscription ended (since 2026-12-06)" }),
  ]),
  'account.suspended': suspension,
  'account.reactivated': suspension,
} as const;

export type NotificationType = keyof typeof DATA;

/** An example of each type, as the AsyncAPI document shows them (held to the schema by its spec). */
const PERIOD = { from: '2026-12-01T00:00:00.000Z', to: '2027-01-01T00:00:00.000Z' };
export const NOTIFICATION_EXAMPLES: { [T in NotificationType]: z.input<(typeof DATA)[T]> } = {
  'credits.granted': {
    grantId: 'grt_6f1c2a',
    source: 'plan_allowance',
    credits: '50.000000',
    expiresAt: PERIOD.to,
    period: PERIOD,
  },
  'credits.expired': { grantId: 'grt_6f1c2a', source: 'plan_allowance', credits: '12.250000', expiredAt: PERIOD.to },
  'quota.exhausted': { quota: 'runs', limit: 100, resetsAt: PERIOD.to, period: PERIOD },
  'wallet.low_balance': { available: '3.500000', threshold: '5.000000', period: PERIOD },
  'spend_limit.threshold_crossed': {
    limitId: 'lim_1a2b',
    scope: { userId: 'ada' },
    threshold: 80,
    limit: '100.000000',
    spent: '80.250000',
    period: PERIOD,
  },
  'spend_limit.reached': { limitId: 'lim_1a2b', scope: null, limit: '100.000000', spent: '100.000000', period: PERIOD },
  'subscription.past_due': { invoiceId: 'in_1Q2w3E', pastDueSince: '2026-12-03T10:00:00.000Z', suspendsAt: '2026-12-10T10:00:00.000Z' },
  'storage.unpaid': { unpaid: '0.420000', since: '2026-12-03T10:00:00.000Z', snapshotsFlaggedAfter: '2026-12-06T10:00:00.000Z' },
  'credits.clawed_back': { grantId: 'grt_top_9d', credits: '30.000000', reason: 'refund', chargeId: 'ch_3Q9z', topUpSession: 'cs_test_a1' },
  'account.suspended': { reason: 'chargeback under review', terminated: 2 },
  'account.reactivated': { reason: null, terminated: 0 },
};

function message<T extends NotificationType>(type: T) {
  return z
    .strictObject({
      id: z
        .string()
        .regex(/^ntf_[0-9a-f]{32}$/)
        .meta({ description: '`ntf_<md5 of the cause>`: the same cause always has the same id, so a re-sent copy can be dropped' }),
      type: z.literal(type),
      accountId: z.string(),
      occurredAt: instant,
      data: DATA[type],
    })
    .meta({ title: type });
}

/** A message on `billing.notifications.v1` (keyed by accountId), by its `type`. */
export const notificationMessageSchema = z
  .discriminatedUnion(
    'type',
    (Object.keys(DATA) as NotificationType[]).map((type) => message(type)) as unknown as [
      ReturnType<typeof message>,
      ...ReturnType<typeof message>[],
    ],
  )
  .meta({ id: 'Notification', description: 'Something an account holder or operator should hear about, sent once per cause' });
