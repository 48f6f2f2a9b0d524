import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { rows } from 'src/common/database/transaction';
import type { AncillaryEvent } from './ancillary-event';
import type { ChargeHold } from './ancillary-ledger';
import type { StorageEvent } from './core/storage';

/** Owns ancillary_events, ancillary_items and ancillary_charges: every statement on them is here. */

export interface ChargeRow {
  id: string;
  accountId: string;
  kind: string;
  itemKey: string;
  bucket: Date;
  runtimeId: string | null;
  rateCardVersion: string;
  unitPrice: bigint | null;
  quantity: bigint;
  amount: bigint;
  charged: bigint;
  holds: ChargeHold[];
}

export function chargeId(itemKey: string, bucket: Date): string {
  return `anch_${createHash('md5').update(`${itemKey}|${bucket.toISOString()}`).digest('hex')}`;
}

/** The owner account of each item already known (an item belongs to the account of its first event). */
export async function itemOwners(em: EntityManager, itemKeys: string[]): Promise<Map<string, string>> {
  const found = await rows<{ item_key: string; account_id: string }>(
    em,
    `SELECT item_key, account_id FROM ancillary_items WHERE item_key = ANY($1::text[])
     UNION ALL SELECT item_key, account_id FROM ancillary_charges WHERE kind = 'egress' AND item_key = ANY($1::text[])`,
    [itemKeys],
  );
  return new Map(found.map((r) => [r.item_key, r.account_id]));
}

/** The account of each of these runtimes that has a row (egress reports name their runtime). */
export async function runtimeOwners(em: EntityManager, runtimeIds: string[]): Promise<Map<string, string>> {
  if (runtimeIds.length === 0) return new Map();
  const found = await rows<{ runtime_id: string; account_id: string }>(
    em,
    `SELECT runtime_id, account_id FROM runtimes WHERE runtime_id = ANY($1::text[])`,
    [runtimeIds],
  );
  return new Map(found.map((r) => [r.runtime_id, r.account_id]));
}

/** Inserts events by id; returns those not seen before. */
export async function insertEvents(em: EntityManager, events: AncillaryEvent[]): Promise<AncillaryEvent[]> {
  if (events.length === 0) return [];
  const inserted = await rows<{ id: string }>(
    em,
    `INSERT INTO ancillary_events (id, type, account_id, item_key, runtime_id, occurred_at, seq, data)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::bigint[], $8::jsonb[])
     ON CONFLICT (id) DO NOTHING RETURNING id`,
    [
      events.map((e) => e.id),
      events.map((e) => e.type),
      events.map((e) => e.accountId),
      events.map((e) => e.itemKey),
      events.map((e) => e.runtimeId),
      events.map((e) => e.occurredAt.toISOString()),
      events.map((e) => e.seq),
      events.map((e) => JSON.stringify(e.data)),
    ],
  );
  const fresh = new Set(inserted.map((r) => r.id));
  return events.filter((e) => fresh.has(e.id));
}

/**
 * Records stored items (one entry per item, sorted, so concurrent writers lock them in one order)
 * and where the next accrual starts: the earliest hour of its new events when that hour is before
 * what is already charged (a late event: recomputed from there), or for an item never accrued.
 */
export async function touchItems(
  em: EntityManager,
  items: { itemKey: string; accountId: string; kind: string; earliestHour: Date }[],
): Promise<void> {
  if (items.length === 0) return;
  const sorted = [...items].sort((a, b) => (a.itemKey < b.itemKey ? -1 : a.itemKey > b.itemKey ? 1 : 0));
  await em.query(
    `INSERT INTO ancillary_items AS i (item_key, account_id, kind, changed_from)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[])
     ON CONFLICT (item_key) DO UPDATE SET done = false,
       changed_from = CASE WHEN i.accrued_until IS NULL OR EXCLUDED.changed_from < i.accrued_until
         THEN least(coalesce(i.changed_from, 'infinity'::timestamptz), EXCLUDED.changed_from) ELSE i.changed_from END`,
    [
      sorted.map((i) => i.itemKey),
      sorted.map((i) => i.accountId),
      sorted.map((i) => i.kind),
      sorted.map((i) => i.earliestHour.toISOString()),
    ],
  );
}

export interface ItemState {
  itemKey: string;
  accountId: string;
  kind: string;
  accruedUntil: Date | null;
  changedFrom: Date | null;
}

/** Items still to accrue (not deleted-and-done), in key order. */
export async function openItems(em: Pick<EntityManager, 'query'>, limit: number, after: string): Promise<string[]> {
  const found = await rows<{ item_key: string }>(
    em,
    `SELECT item_key FROM ancillary_items WHERE done = false AND item_key > $1 ORDER BY item_key LIMIT $2`,
    [after, limit],
  );
  return found.map((r) => r.item_key);
}

export async function lockItem(em: EntityManager, itemKey: string): Promise<ItemState | undefined> {
  const [r] = await rows<{ item_key: string; account_id: string; kind: string; accrued_until: Date | null; changed_from: Date | null }>(
    em,
    `SELECT item_key, account_id, kind, accrued_until, changed_from FROM ancillary_items WHERE item_key = $1 FOR UPDATE`,
    [itemKey],
  );
  return r && { itemKey: r.item_key, accountId: r.account_id, kind: r.kind, accruedUntil: r.accrued_until, changedFrom: r.changed_from };
}

export async function storageEvents(em: EntityManager, itemKey: string): Promise<StorageEvent[]> {
  const found = await rows<{ id: string; type: StorageEvent['type']; at: string; seq: string; bytes: string | null }>(
    em,
    `SELECT id, type, (extract(epoch FROM occurred_at) * 1000)::bigint::text AS at, seq::text AS seq,
       CASE WHEN type = 'snapshot.created' THEN (data->>'sizeBytes')
            WHEN type IN ('volume.created', 'volume.resized') THEN round((data->>'sizeGiB')::numeric * 1073741824)::text END AS bytes
     FROM ancillary_events WHERE item_key = $1`,
    [itemKey],
  );
  return found.map((r) => ({
    id: r.id,
    type: r.type,
    occurredAt: Number(r.at),
    seq: Number(r.seq),
    ...(r.bytes !== null ? { bytes: BigInt(r.bytes) } : {}),
  }));
}

export async function markAccrued(em: EntityManager, itemKey: string, until: Date, done: boolean): Promise<void> {
  await em.query(
    `UPDATE ancillary_items SET accrued_until = greatest(coalesce(accrued_until, $2), $2), changed_from = NULL, done = $3 WHERE item_key = $1`,
    [itemKey, until, done],
  );
}

interface RawCharge {
  id: string;
  account_id: string;
  kind: string;
  item_key: string;
  bucket: Date;
  runtime_id: string | null;
  rate_card_version: string;
  unit_price: string | null;
  quantity: string;
  amount: string;
  charged: string;
  holds: ChargeHold[];
}

function toCharge(r: RawCharge): ChargeRow {
  return {
    id: r.id,
    accountId: r.account_id,
    kind: r.kind,
    itemKey: r.item_key,
    bucket: r.bucket,
    runtimeId: r.runtime_id,
    rateCardVersion: r.rate_card_version,
    unitPrice: r.unit_price === null ? null : BigInt(r.unit_price),
    quantity: BigInt(r.quantity),
    amount: BigInt(r.amount),
    charged: BigInt(r.charged),
    holds: r.holds,
  };
}

const CHARGE_COLUMNS = `id, account_id, kind, item_key, bucket, runtime_id, rate_card_version, unit_price::text, quantity::text, amount::text, charged::text, holds`;

/** An item's charge rows from `from` on (all of them when null), locked. */
export async function chargesOf(em: EntityManager, itemKey: string, from: Date | null): Promise<ChargeRow[]> {
  const found = await rows<RawCharge>(
    em,
    `SELECT ${CHARGE_COLUMNS} FROM ancillary_charges WHERE item_key = $1 AND ($2::timestamptz IS NULL OR bucket >= $2) ORDER BY bucket FOR UPDATE`,
    [itemKey, from],
  );
  return found.map(toCharge);
}

/** Charge rows the wallet could not pay in full, oldest first, locked (skipping rows another run holds). */
export async function unpaidCharges(em: EntityManager, limit: number): Promise<ChargeRow[]> {
  const found = await rows<RawCharge>(
    em,
    `SELECT ${CHARGE_COLUMNS} FROM ancillary_charges WHERE amount > charged ORDER BY account_id, bucket LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [limit],
  );
  return found.map(toCharge);
}

export async function saveCharge(em: EntityManager, c: ChargeRow): Promise<void> {
  await em.query(
    `INSERT INTO ancillary_charges (id, account_id, kind, item_key, bucket, runtime_id, rate_card_version, unit_price, quantity, amount, charged, holds, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, now())
     ON CONFLICT (id) DO UPDATE SET quantity = EXCLUDED.quantity, amount = EXCLUDED.amount, charged = EXCLUDED.charged, holds = EXCLUDED.holds, updated_at = now()`,
    [
      c.id,
      c.accountId,
      c.kind,
      c.itemKey,
      c.bucket,
      c.runtimeId,
      c.rateCardVersion,
      c.unitPrice?.toString() ?? null,
      c.quantity.toString(),
      c.amount.toString(),
      c.charged.toString(),
      JSON.stringify(c.holds),
    ],
  );
}

/** Accounts with storage they could not pay, the oldest unpaid hour of each. */
export async function accountsWithUnpaidStorage(
  em: Pick<EntityManager, 'query'>,
): Promise<{ accountId: string; since: Date; unpaid: bigint }[]> {
  const found = await rows<{ account_id: string; since: Date; unpaid: string }>(
    em,
    `SELECT account_id, min(bucket) AS since, sum(amount - charged)::text AS unpaid FROM ancillary_charges
     WHERE amount > charged AND kind IN ('snapshot', 'volume') GROUP BY account_id ORDER BY account_id`,
  );
  return found.map((r) => ({ accountId: r.account_id, since: r.since, unpaid: BigInt(r.unpaid) }));
}

/** The account's snapshots that exist (created, not deleted). */
export async function liveSnapshots(em: Pick<EntityManager, 'query'>, accountId: string): Promise<string[]> {
  const found = await rows<{ snapshot_id: string }>(
    em,
    `SELECT substr(i.item_key, 10) AS snapshot_id FROM ancillary_items i
     WHERE i.account_id = $1 AND i.kind = 'snapshot'
       AND NOT EXISTS (SELECT 1 FROM ancillary_events e WHERE e.item_key = i.item_key AND e.type = 'snapshot.deleted')
     ORDER BY i.item_key`,
    [accountId],
  );
  return found.map((r) => r.snapshot_id);
}
