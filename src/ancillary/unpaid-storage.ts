import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { z } from 'zod';
import type { AppConfig } from 'src/common/config/config';
import { rows } from 'src/common/database/transaction';
import { instant } from 'src/common/http/api-schemas';
import { formatCredits } from 'src/common/money';
import { notifyOnce } from 'src/messaging/notifications';
import { enqueue } from 'src/messaging/outbox';
import { topicsOf } from 'src/messaging/topics';
import { accountsWithUnpaidStorage, liveSnapshots } from './ancillary.store';

/** A command on `billing.commands.v1` (keyed by accountId); the AsyncAPI document is made from this schema. */
export const snapshotFlagCommandSchema = z
  .strictObject({
    id: z
      .string()
      .meta({ description: '`cmd_<md5 of account, snapshot and unpaid-since>`: one command per snapshot and episode of unpaid storage' }),
    type: z.literal('snapshot.flag_for_deletion'),
    accountId: z.string(),
    snapshotId: z.string(),
    reason: z.literal('storage_unpaid'),
    unpaidSince: instant,
    issuedAt: instant,
  })
  .meta({
    id: 'SnapshotFlagCommand',
    description:
      "Tells the platform that a snapshot's storage has gone unpaid past the grace period, so it may delete it; the billing service never deletes anything itself.",
  });
export type SnapshotFlagCommand = z.input<typeof snapshotFlagCommandSchema>;

/**
 * Storage a wallet could not pay: the owner is told at once (`storage.unpaid`, once per episode:
 * the first unpaid hour), and once the grace period has passed with storage still unpaid, each of
 * its snapshots is flagged for deletion by the platform with a `snapshot.flag_for_deletion`
 * command on `billing.commands.v1` (once per snapshot and episode). Nothing is deleted here.
 */
export async function handleUnpaidStorage(em: EntityManager, config: AppConfig, now: Date): Promise<{ notified: number; flagged: number }> {
  const topics = topicsOf(config);
  let notified = 0;
  let flagged = 0;
  for (const unpaid of await accountsWithUnpaidStorage(em)) {
    const since = unpaid.since.toISOString();
    const sent = await notifyOnce(
      em,
      topics.notifications,
      [
        {
          type: 'storage.unpaid',
          accountId: unpaid.accountId,
          cause: `storage.unpaid:${unpaid.accountId}:${since}`,
          data: {
            unpaid: formatCredits(unpaid.unpaid),
            since,
            snapshotsFlaggedAfter: new Date(unpaid.since.getTime() + config.ancillary.unpaidGraceMs).toISOString(),
          },
        },
      ],
      now,
    );
    notified += sent.length;
    if (now.getTime() < unpaid.since.getTime() + config.ancillary.unpaidGraceMs) continue;
    const snapshots = await liveSnapshots(em, unpaid.accountId);
    if (snapshots.length === 0) continue;
    const ids = snapshots.map(
      (s) => `cmd_${createHash('md5').update(`snapshot.flag_for_deletion|${unpaid.accountId}|${s}|${since}`).digest('hex')}`,
    );
    const fresh = await rows<{ id: string; snapshot_id: string }>(
      em,
      `INSERT INTO ancillary_commands (id, account_id, snapshot_id, reason, unpaid_since, issued_at)
       SELECT id, $2, snapshot_id, 'storage_unpaid', $3, $4 FROM unnest($1::text[], $5::text[]) AS c(id, snapshot_id)
       ON CONFLICT (id) DO NOTHING RETURNING id, snapshot_id`,
      [ids, unpaid.accountId, unpaid.since, now, snapshots],
    );
    await enqueue(
      em,
      fresh.map((c) => ({
        topic: topics.commands,
        key: unpaid.accountId,
        payload: {
          id: c.id,
          type: 'snapshot.flag_for_deletion',
          accountId: unpaid.accountId,
          snapshotId: c.snapshot_id,
          reason: 'storage_unpaid',
          unpaidSince: since,
          issuedAt: now.toISOString(),
        } satisfies SnapshotFlagCommand,
      })),
    );
    flagged += fresh.length;
  }
  return { notified, flagged };
}
