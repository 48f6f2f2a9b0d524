import type { DataSource, EntityManager } from 'typeorm';
import { rows } from 'src/common/database/transaction';
import type { StripeEventLike } from './stripe-gateway';

/** What came of each Stripe event received (`stripe_webhook_events`, owned by this module). */

// A type, not an interface: the admin page renders it as a plain record.
export type WebhookSeen = {
  eventId: string;
  type: string;
  outcome: string;
  accountId: string | null;
  error: string | null;
  deliveries: number;
  receivedAt: string;
};

/** Keeps what came of an event: a later delivery that applies it replaces a failure. */
export async function recordOutcome(
  em: Pick<EntityManager, 'query'>,
  event: StripeEventLike,
  outcome: 'applied' | 'ignored' | 'failed',
  accountId: string | null,
  error: string | null,
  at: Date,
): Promise<void> {
  await em.query(
    `INSERT INTO stripe_webhook_events (event_id, type, outcome, account_id, error, received_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (event_id) DO UPDATE SET outcome = EXCLUDED.outcome, account_id = coalesce(EXCLUDED.account_id, stripe_webhook_events.account_id),
       error = EXCLUDED.error, deliveries = stripe_webhook_events.deliveries + 1`,
    [event.id, event.type, outcome, accountId, error?.slice(0, 500) ?? null, at],
  );
}

/** A delivery of an event already applied. */
export async function countRedelivery(em: Pick<EntityManager, 'query'>, eventId: string): Promise<void> {
  await em.query(`UPDATE stripe_webhook_events SET deliveries = deliveries + 1 WHERE event_id = $1`, [eventId]);
}

/** The most recent Stripe events received, newest first. */
export async function recentWebhooks(ds: DataSource, limit: number): Promise<WebhookSeen[]> {
  const found = await rows<{
    event_id: string;
    type: string;
    outcome: string;
    account_id: string | null;
    error: string | null;
    deliveries: number;
    received_at: Date;
  }>(
    ds,
    `SELECT event_id, type, outcome, account_id, error, deliveries, received_at FROM stripe_webhook_events ORDER BY received_at DESC, event_id DESC LIMIT $1`,
    [limit],
  );
  return found.map((r) => ({
    eventId: r.event_id,
    type: r.type,
    outcome: r.outcome,
    accountId: r.account_id,
    error: r.error,
    deliveries: r.deliveries,
    receivedAt: r.received_at.toISOString(),
  }));
}
