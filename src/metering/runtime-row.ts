import type { EntityManager } from 'typeorm';
import type { RuntimeStatus } from './entities/runtime.entity';
import { chargeFor } from 'src/pricing/charges';

/** A `runtimes` row as raw SQL returns it (bigints as strings). */
export interface RuntimeRow {
  runtime_id: string;
  account_id: string;
  reservation_id: string | null;
  user_id: string | null;
  agent_id: string | null;
  variant: string | null;
  environment: Record<string, unknown> | null;
  size_class: string | null;
  spec_digest: string | null;
  rate_per_hour: string;
  rate_card_version: string | null;
  reserved_minutes: number;
  reserved_amount: string;
  hold_id: string | null;
  request_fingerprint: string | null;
  status: RuntimeStatus;
  start_deadline: Date | null;
  started_at: Date | null;
  closed_ms: string;
  open_since: Date | null;
  last_seen_at: Date | null;
  terminated_at: Date | null;
  termination_reason: string | null;
  charged: string;
  released: string;
  settlement: string | null;
  settled_at: Date | null;
  events_count: number;
  heartbeat_seq: string | null;
  heartbeats: number;
  created_at: Date;
  updated_at: Date;
}

/** Running milliseconds of a runtime up to `now`. */
export function runningMsOf(row: Pick<RuntimeRow, 'closed_ms' | 'open_since'>, now: Date): number {
  const open = row.open_since ? Math.max(0, now.getTime() - row.open_since.getTime()) : 0;
  return Number(row.closed_ms) + open;
}

/** Charge so far: the settled charge, or the running time up to now priced at the reservation's rate (capped at what it reserved). */
export function chargeSoFar(row: RuntimeRow, now: Date): bigint {
  if (row.status === 'settled' || row.status === 'voided') return BigInt(row.charged);
  const charge = chargeFor(BigInt(row.rate_per_hour), runningMsOf(row, now));
  const cap = BigInt(row.reserved_amount);
  return charge < cap ? charge : cap;
}

/**
 * Runtimes told to terminate (their commands are issued in the same transaction) are `terminating`
 * until they report it. One whose reservation was given back as never started (`voided`, its hold
 * settled at zero) stays `voided`: its run is charged by a correction of that settlement.
 */
export async function markTerminating(em: Pick<EntityManager, 'query'>, runtimeIds: readonly string[]): Promise<void> {
  if (runtimeIds.length === 0) return;
  await em.query(`UPDATE runtimes SET status = 'terminating', updated_at = now() WHERE runtime_id = ANY($1) AND status <> 'voided'`, [
    runtimeIds,
  ]);
}
