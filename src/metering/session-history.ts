import type { EntityManager } from 'typeorm';
import { inOneRoundTrip, type Call, type PreparedStatement } from 'src/common/database/pipelined-transaction';
import { rows } from 'src/common/database/transaction';
import type { MeteredEvent } from './core/sessions';
import type { LifecycleType } from './lifecycle-event';

export type HistoryEvent = MeteredEvent & { data: Record<string, unknown> };

/** A runtime whose session is read, with its month (`runtime_month` of its row) when the caller knows it. */
export interface HistoryOf {
  id: string;
  month?: string;
}

/**
 * The events a session is built from, per runtime (heartbeats left out: they only prove life), each
 * runtime's read in the partition of its month only. Read for every rebuilt runtime of every chunk:
 * the instant as epoch milliseconds (events carry millisecond precision) and the data only where a
 * session reads it (the reason of a termination or a launch failure), as parsing timestamps and JSON
 * of every row was most of this read's cost.
 */
export async function sessionHistory(em: EntityManager, runtimes: HistoryOf[]): Promise<Map<string, HistoryEvent[]>> {
  return parseSessionHistory((await inOneRoundTrip(em, sessionHistoryCalls(runtimes))).flat());
}

interface HistoryRow {
  id: string;
  runtime_id: string;
  type: LifecycleType;
  at_ms: number;
  seq: string;
  data: Record<string, unknown> | null;
}

/** One month's runtimes: one partition, its session index probed as the table's was before partitioning. */
const HISTORY_OF_MONTH: PreparedStatement = {
  name: 'metering_session_history_v3',
  text: `SELECT id, runtime_id, type, (extract(epoch FROM occurred_at) * 1000)::float8 AS at_ms, seq,
       CASE WHEN type IN ('runtime.terminated', 'runtime.launch_failed') THEN data END AS data
     FROM runtime_events WHERE runtime_month = $2::date AND runtime_id = ANY($1::text[]) AND type <> 'runtime.heartbeat'`,
};

/** Runtimes whose month the caller does not know: read through their rows (each in its own partition). */
const HISTORY_BY_ROW: PreparedStatement = {
  name: 'metering_session_history_by_row_v1',
  text: `SELECT e.id, e.runtime_id, e.type, (extract(epoch FROM e.occurred_at) * 1000)::float8 AS at_ms, e.seq,
       CASE WHEN e.type IN ('runtime.terminated', 'runtime.launch_failed') THEN e.data END AS data
     FROM unnest($1::text[]) AS q(id) JOIN runtimes r ON r.runtime_id = q.id
       JOIN runtime_events e ON e.runtime_month = runtime_month(r.created_at) AND e.runtime_id = r.runtime_id
     WHERE e.type <> 'runtime.heartbeat'`,
};

/**
 * The read of sessionHistory as prepared statements, one per month (a chunk's runtimes are nearly
 * always of one or two), for a caller that sends them with others; parseSessionHistory reads their
 * rows, concatenated.
 */
export function sessionHistoryCalls(runtimes: HistoryOf[]): Call[] {
  const byMonth = new Map<string | undefined, string[]>();
  for (const r of runtimes) {
    const ids = byMonth.get(r.month);
    if (ids) ids.push(r.id);
    else byMonth.set(r.month, [r.id]);
  }
  return [...byMonth].map(([month, ids]) =>
    month === undefined ? { statement: HISTORY_BY_ROW, values: [ids] } : { statement: HISTORY_OF_MONTH, values: [ids, month] },
  );
}

export function parseSessionHistory(found: unknown[]): Map<string, HistoryEvent[]> {
  const out = new Map<string, HistoryEvent[]>();
  for (const e of found as HistoryRow[]) {
    const list = out.get(e.runtime_id) ?? [];
    list.push({ id: e.id, type: e.type, occurredAt: new Date(Math.round(e.at_ms)), seq: Number(e.seq), data: e.data ?? {} });
    out.set(e.runtime_id, list);
  }
  return out;
}

/** The month of a runtime's row, as `runtime_month(created_at)` gives it: the first day of its UTC month. */
export function runtimeMonthOf(createdAt: Date): string {
  return `${createdAt.toISOString().slice(0, 7)}-01`;
}

/**
 * The data of a runtime's first stored `runtime.started` (what it runs: its variant and environment),
 * or null. The session history leaves a start's data out; a runtime reserved on the fly after its start
 * was applied (a launch failure had come first, say) reads it here.
 */
export async function storedStartData(em: EntityManager, runtimeId: string, createdAt: Date): Promise<Record<string, unknown> | null> {
  const [found] = await rows<{ data: Record<string, unknown> | null }>(
    em,
    `SELECT data FROM runtime_events WHERE runtime_month = $2::date AND runtime_id = $1 AND type = 'runtime.started'
     ORDER BY occurred_at, seq LIMIT 1`,
    [runtimeId, runtimeMonthOf(createdAt)],
  );
  return found?.data ?? null;
}
