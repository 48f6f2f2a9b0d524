import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { rows } from '../common/database/transaction';
import { enqueue } from '../messaging/outbox';

/** What the plans module tells users about on `billing.notifications.v1`. */
export type PlanNotificationType = 'credits.granted' | 'credits.expired' | 'quota.exhausted' | 'wallet.low_balance';

export interface Notification {
  type: PlanNotificationType;
  accountId: string;
  /** What makes this notification distinct: the same cause never notifies twice. */
  cause: string;
  data: Record<string, unknown>;
}

/** The message id of a cause (stable, so a consumer can dedupe a re-sent message too). */
export function notificationId(cause: string): string {
  return `ntf_${createHash('md5').update(cause).digest('hex')}`;
}

/**
 * Enqueues each notification once per cause, in the caller's transaction: the cause is inserted into
 * `notifications_sent` (primary key) and only a newly inserted cause goes to the outbox. Returns the
 * causes that were new.
 */
export async function notifyOnce(em: EntityManager, topic: string, items: Notification[], at: Date): Promise<string[]> {
  if (items.length === 0) return [];
  const fresh = await rows<{ cause: string }>(
    em,
    `INSERT INTO notifications_sent (cause, account_id, type, created_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[])
     ON CONFLICT (cause) DO NOTHING RETURNING cause`,
    [items.map((i) => i.cause), items.map((i) => i.accountId), items.map((i) => i.type), items.map(() => at)],
  );
  const isNew = new Set(fresh.map((f) => f.cause));
  await enqueue(
    em,
    items
      .filter((i) => isNew.has(i.cause))
      .map((i) => ({
        topic,
        key: i.accountId,
        payload: { id: notificationId(i.cause), type: i.type, accountId: i.accountId, occurredAt: at.toISOString(), data: i.data },
      })),
  );
  return [...isNew];
}
