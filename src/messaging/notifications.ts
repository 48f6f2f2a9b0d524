import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { PreparedStatement } from 'src/common/database/pipelined-transaction';
import { withRelation, type SqlRelation } from 'src/common/database/sql-relation';
import { rows } from 'src/common/database/transaction';
import type { TypedRead } from 'src/common/database/typed-read';
import { enqueue, type OutboxEntry } from './outbox';

/**
 * Every notification on `billing.notifications.v1` has one shape, `{id, type, accountId, occurredAt,
 * data}`, and one cause: the id is `ntf_<md5(cause)>`, so the same cause always has the same id and a
 * consumer can drop a re-sent copy. The types, their causes and data are in docs/contract-changes.md.
 */
export const NOTIFICATION_TYPES = [
  'credits.granted',
  'credits.expired',
  'quota.exhausted',
  'wallet.low_balance',
  'spend_limit.threshold_crossed',
  'spend_limit.reached',
  'subscription.past_due',
  'storage.unpaid',
  'credits.clawed_back',
  'account.suspended',
  'account.reactivated',
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** A message on `billing.notifications.v1` (keyed by accountId); its schema, by type, is api-docs/notification-schema.ts. */
export type NotificationMessage = {
  id: string;
  type: NotificationType;
  accountId: string;
  occurredAt: string;
  data: Record<string, unknown>;
};

export interface Notification<T extends NotificationType = NotificationType> {
  type: T;
  accountId: string;
  /** What makes this notification distinct: the same cause never notifies twice. */
  cause: string;
  data: Record<string, unknown>;
}

/** The message id of a cause (stable, so a consumer can dedupe a re-sent message too). */
export function notificationId(cause: string): string {
  return `ntf_${createHash('md5').update(cause).digest('hex')}`;
}

/** The outbox message of a notification. */
export function notificationMessage(topic: string, n: Notification, at: Date): OutboxEntry {
  const payload: NotificationMessage = {
    id: notificationId(n.cause),
    type: n.type,
    accountId: n.accountId,
    occurredAt: at.toISOString(),
    data: n.data,
  };
  return { topic, key: n.accountId, payload };
}

/** A Notification as a row of a writer's relation (enqueueNotificationsFrom): `data` is its JSON. */
export interface NotificationRow {
  type: string;
  account_id: string;
  cause: string;
  data: unknown;
}

/**
 * Enqueues notifications as notificationMessage writes them, in one statement whatever their number,
 * their ids computed by PostgreSQL (`md5`, as notificationId), in the order the relation yields them:
 * a writer that builds them in its own tables (the ledger's bulk grant) hands them over without
 * making JSON or an object of each.
 */
export async function enqueueNotificationsFrom(
  em: Pick<EntityManager, 'query'>,
  topic: string,
  at: Date,
  notifications: SqlRelation<NotificationRow>,
): Promise<void> {
  const statement = withRelation(
    [topic, at.toISOString()],
    notifications,
    (select) => `INSERT INTO outbox (topic, key, payload)
     SELECT $1::text, n.account_id,
       jsonb_build_object('id', 'ntf_' || md5(n.cause), 'type', n.type, 'accountId', n.account_id, 'occurredAt', $2::text, 'data', n.data)
     FROM (${select}) AS n`,
  );
  await em.query(statement.text, statement.values);
}

/** Enqueues notifications (thousands at a time) as notificationMessage writes them, without a check of their causes (see notifyOnce). */
export async function enqueueNotifications(
  em: Pick<EntityManager, 'query'>,
  topic: string,
  at: Date,
  items: readonly Notification[],
): Promise<void> {
  if (items.length === 0) return;
  await enqueueNotificationsFrom(em, topic, at, {
    select: (bind) =>
      `SELECT n.type, n."accountId" AS account_id, n.cause, n.data
       FROM json_to_recordset(${bind(JSON.stringify(items))}::json) AS n(type text, "accountId" text, cause text, data jsonb)`,
  });
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
    items.filter((i) => isNew.has(i.cause)).map((i) => notificationMessage(topic, i, at)),
  );
  return [...isNew];
}

const SENT_READ: PreparedStatement = {
  name: 'notifications_sent_read_v1',
  text: `SELECT c.cause FROM notifications_sent c WHERE c.cause = ANY($1::text[])`,
};

/** Which of these causes were notified already (notifyOnce sends each once). */
export function sentCausesRead(causes: readonly string[]): TypedRead<Set<string>> {
  return {
    call: { statement: SENT_READ, values: [[...causes]] },
    parse: (found) => new Set((found as { cause: string }[]).map((r) => r.cause)),
  };
}
