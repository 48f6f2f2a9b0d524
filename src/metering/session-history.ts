import type { EntityManager } from 'typeorm';
import type { Call, PreparedStatement } from 'src/common/database/pipelined-transaction';
import { rows } from 'src/common/database/transaction';
import type { MeteredEvent } from './core/sessions';
import type { LifecycleType } from './lifecycle-event';

export type HistoryEvent = MeteredEvent & { data: Record<string, unknown> };

/**
 * The events a session is built from, per runtime (heartbeats left out: they only prove life), in
 * the partition of the runtime's month only.
 * Read for every rebuilt runtime of every chunk: the instant as epoch milliseconds (events carry
 * millisecond precision) and the data only where a session reads it (the reason of a termination
 * or a launch failure), as parsing timestamps and JSON of every row was most of this read's cost.
 */
export async function sessionHistory(em: EntityManager, ids: string[]): Promise<Map<string, HistoryEvent[]>> {
  const call = sessionHistoryCall(ids);
  return parseSessionHistory(await rows<HistoryRow>(em, call.statement.text, call.values));
}

interface HistoryRow {
  id: string;
  runtime_id: string;
  type: LifecycleType;
  at_ms: number;
  seq: string;
  data: Record<string, unknown> | null;
}

const HISTORY_STATEMENT: PreparedStatement = {
  name: 'metering_session_history_v2',
  text: `SELECT e.id, e.runtime_id, e.type, (extract(epoch FROM e.occurred_at) * 1000)::float8 AS at_ms, e.seq,
       CASE WHEN e.type IN ('runtime.terminated', 'runtime.launch_failed') THEN e.data END AS data
     FROM unnest($1::text[]) AS q(id) JOIN runtimes r ON r.runtime_id = q.id
       JOIN runtime_events e ON e.runtime_month = runtime_month(r.created_at) AND e.runtime_id = r.runtime_id
     WHERE e.type <> 'runtime.heartbeat'`,
};

/** The read of sessionHistory as a prepared statement, for a caller that sends it with others (parseSessionHistory reads its rows). */
export function sessionHistoryCall(ids: string[]): Call {
  return { statement: HISTORY_STATEMENT, values: [ids] };
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
