import type { EntityManager } from 'typeorm';
import type { Call, PreparedStatement } from 'src/common/database/pipelined-transaction';

export interface OutboxEntry {
  topic: string;
  key: string;
  payload: Record<string, unknown>;
}

/** One JSON document for all of them: parsed once, whatever their number (a function scan keeps their order). */
const ENQUEUE: PreparedStatement = {
  name: 'outbox_enqueue_v1',
  text: `INSERT INTO outbox (topic, key, payload) SELECT topic, key, payload FROM jsonb_to_recordset($1::jsonb) AS m(topic text, key text, payload jsonb)`,
};

/** Writes messages to the outbox inside the caller's transaction, in their order (one statement, whatever their number). */
export async function enqueue(em: Pick<EntityManager, 'query'>, entries: readonly OutboxEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await em.query(ENQUEUE.text, [JSON.stringify(entries)]);
}

/** The same as a call, for a transaction that sends its statements together (pipelined-transaction.ts). */
export function enqueueCall(entries: readonly OutboxEntry[]): Call {
  return { statement: ENQUEUE, values: [JSON.stringify(entries)] };
}
