import type { EntityManager } from 'typeorm';
import type { Call, PreparedStatement } from 'src/common/database/pipelined-transaction';
import { rows } from 'src/common/database/transaction';
import type { RuntimeRow } from './runtime-row';

/**
 * The writes of `runtimes` and `reservation_extensions` that admission asks for (metering owns both
 * tables): a batch's reserved runtime rows, and an extension's record with its runtime row grown;
 * and metering's own: the rows of runtimes first seen through their events, and the multi-row update
 * of the runtimes a chunk rebuilt.
 */

/** A runtime's row with the month its events are stored under (`runtime_month(created_at)`, as text). */
export type RuntimeWithMonth = RuntimeRow & { month: string };

/**
 * Rows for runtimes first seen through their events (no reservation yet: status `reserved`, nothing
 * held), inserted in id order (the lock order). Returns the rows inserted: one created meanwhile by a
 * reservation or another ingest is kept as it is (the insert waits for it, then skips it).
 */
export function insertUnreservedRuntimes(
  em: EntityManager,
  runtimes: readonly { id: string; account: string }[],
): Promise<RuntimeWithMonth[]> {
  return rows<RuntimeWithMonth>(
    em,
    `INSERT INTO runtimes (runtime_id, account_id, status)
     SELECT q.id, q.account, 'reserved' FROM json_to_recordset($1::json) AS q(id text, account text) ORDER BY q.id
     ON CONFLICT (runtime_id) DO NOTHING
     RETURNING *, runtime_month(created_at)::text AS month`,
    [JSON.stringify(runtimes)],
  );
}

const RESERVE_RUNTIMES: PreparedStatement = {
  name: 'reserve_runtimes_v3',
  text: `WITH reserved AS (INSERT INTO runtimes (runtime_id, account_id, reservation_id, user_id, agent_id, variant, environment, size_class,
      spec_digest, rate_per_hour, rate_card_version, reserved_minutes, reserved_amount, hold_id, request_fingerprint, status,
      start_deadline, created_at)
    SELECT q.runtime_id, q.account_id, q.reservation_id, q.user_id, q.agent_id, q.variant, q.environment, q.size_class,
      q.spec_digest, q.rate_per_hour, q.rate_card_version, q.reserved_minutes, q.reserved_amount, q.hold_id, q.request_fingerprint, 'reserved',
      q.start_deadline, q.created_at
    FROM jsonb_to_recordset($1::jsonb) AS q(runtime_id text, account_id text, reservation_id text, user_id text, agent_id text,
      variant text, environment jsonb, size_class text, spec_digest text, rate_per_hour bigint, rate_card_version text, reserved_minutes int,
      reserved_amount bigint, hold_id text, request_fingerprint text, start_deadline timestamptz, created_at timestamptz)
    ON CONFLICT (runtime_id) DO UPDATE SET
      reservation_id = EXCLUDED.reservation_id, user_id = EXCLUDED.user_id, agent_id = EXCLUDED.agent_id,
      variant = EXCLUDED.variant, environment = EXCLUDED.environment, size_class = EXCLUDED.size_class, spec_digest = EXCLUDED.spec_digest,
      rate_per_hour = EXCLUDED.rate_per_hour, rate_card_version = EXCLUDED.rate_card_version,
      reserved_minutes = EXCLUDED.reserved_minutes, reserved_amount = EXCLUDED.reserved_amount,
      hold_id = EXCLUDED.hold_id, request_fingerprint = EXCLUDED.request_fingerprint, start_deadline = EXCLUDED.start_deadline,
      status = CASE WHEN runtimes.status <> 'terminating' THEN runtimes.status WHEN runtimes.open_since IS NOT NULL THEN 'running'
                    WHEN runtimes.started_at IS NOT NULL THEN 'paused' ELSE 'reserved' END
    WHERE runtimes.reservation_id IS NULL AND runtimes.account_id = EXCLUDED.account_id
    RETURNING *)
    SELECT r.* FROM (SELECT ledger_assert((SELECT count(*) FROM reserved) = jsonb_array_length($1::jsonb),
        'reservations refused: a runtime of the batch was reserved meanwhile')) AS checked(ok)
      JOIN reserved r ON checked.ok`,
};

/**
 * A reservation's runtime row, as RESERVE_RUNTIMES inserts it (attached to the row of a runtime whose
 * events came first: one told to terminate for want of a reservation then follows its events again,
 * its `unreserved` command withdrawn by the caller).
 */
export type RuntimeInsert = Record<string, unknown> & { runtime_id: string };

/** Every runtime row of a batch in one statement; a runtime reserved meanwhile fails it (and so the batch). */
export function reserveRuntimesCall(inserts: readonly RuntimeInsert[]): Call {
  return { statement: RESERVE_RUNTIMES, values: [JSON.stringify(inserts)] };
}

const EXTEND_RUNTIME: PreparedStatement = {
  name: 'reservation_extend_v1',
  text: `WITH recorded AS (INSERT INTO reservation_extensions (idempotency_key, runtime_id, minutes, amount, fingerprint) VALUES ($1, $2, $3, $4, $5))
    UPDATE runtimes SET reserved_minutes = reserved_minutes + $3, reserved_amount = reserved_amount + $4::bigint, updated_at = now()
    WHERE runtime_id = $2 RETURNING *`,
};

/** An extension's record and its runtime row grown by its minutes and amount (returns the row). */
export function extendRuntimeCall(e: { key: string; runtimeId: string; minutes: number; amount: bigint; fingerprint: string }): Call {
  return { statement: EXTEND_RUNTIME, values: [e.key, e.runtimeId, e.minutes, e.amount.toString(), e.fingerprint] };
}

/** A runtime `terminating` with no command left open (withdrawn) goes back to the status its events give it. */
export async function resumeWithoutCommands(em: EntityManager, runtimeId: string): Promise<void> {
  await em.query(
    `UPDATE runtimes SET status = CASE WHEN open_since IS NOT NULL THEN 'running' WHEN started_at IS NOT NULL THEN 'paused' ELSE 'reserved' END,
       updated_at = now()
     WHERE runtime_id = $1 AND status = 'terminating'
       AND NOT EXISTS (SELECT 1 FROM runtime_commands c WHERE c.runtime_id = $1 AND c.acknowledged_at IS NULL)`,
    [runtimeId],
  );
}

/**
 * Writes a chunk's rebuilt runtime rows (flush), from one JSON array of rows (json_to_recordset),
 * instants as epoch milliseconds: fifteen array parameters, each quoted element by element by the
 * driver, and the instants written as ISO text cost about three times as much to build.
 */
const UPDATE_RUNTIMES_STATEMENT: PreparedStatement = {
  name: 'metering_update_runtimes_v2',
  text: `UPDATE runtimes r SET status = u.status, started_at = to_timestamp(u.started_ms / 1000), closed_ms = u.closed_ms,
         open_since = to_timestamp(u.open_since_ms / 1000), last_seen_at = GREATEST(r.last_seen_at, to_timestamp(u.last_seen_ms / 1000)),
         terminated_at = to_timestamp(u.terminated_ms / 1000), termination_reason = u.reason, charged = u.charged, released = u.released,
         settlement = u.settlement, settled_at = to_timestamp(u.settled_ms / 1000), events_count = r.events_count + u.n,
         heartbeats = r.heartbeats + u.hb, heartbeat_seq = GREATEST(r.heartbeat_seq, u.hb_seq), updated_at = now()
       FROM json_to_recordset($1::json) AS u(id text, status text, started_ms float8, closed_ms bigint, open_since_ms float8,
         last_seen_ms float8, terminated_ms float8, reason text, charged bigint, released bigint, settlement text, settled_ms float8,
         n int, hb int, hb_seq bigint)
       WHERE r.runtime_id = u.id`,
};

/** A rebuilt runtime's row as a chunk's flush writes it. */
export interface RebuiltRuntimeRow {
  runtimeId: string;
  status: string;
  startedAt: Date | null;
  closedMs: number;
  openSince: Date | null;
  lastSeen: Date;
  terminatedAt: Date | null;
  terminationReason: string | null;
  charged: bigint;
  released: bigint;
  settlement: string | null;
  settledAt: Date | string | null;
  count: number;
  heartbeats: number;
  heartbeatSeq: number | null;
}

/** The chunk's rebuilt runtime rows in one statement. */
export function updateRuntimesCall(list: readonly RebuiltRuntimeRow[]): Call {
  const rows = list.map((u) => ({
    id: u.runtimeId,
    status: u.status,
    started_ms: epochMs(u.startedAt),
    closed_ms: u.closedMs,
    open_since_ms: epochMs(u.openSince),
    last_seen_ms: epochMs(u.lastSeen),
    terminated_ms: epochMs(u.terminatedAt),
    reason: u.terminationReason,
    charged: u.charged.toString(),
    released: u.released.toString(),
    settlement: u.settlement,
    settled_ms: epochMs(u.settledAt),
    n: u.count,
    hb: u.heartbeats,
    hb_seq: u.heartbeatSeq,
  }));
  return { statement: UPDATE_RUNTIMES_STATEMENT, values: [JSON.stringify(rows)] };
}

/** An instant as epoch milliseconds for a statement's JSON rows (`to_timestamp(ms / 1000)` is exact to the millisecond). */
function epochMs(d: Date | string | null): number | null {
  if (d === null) return null;
  return typeof d === 'string' ? Date.parse(d) : d.getTime();
}
