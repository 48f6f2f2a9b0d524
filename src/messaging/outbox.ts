import type { EntityManager } from 'typeorm';

export interface OutboxEntry {
  topic: string;
  key: string;
  payload: Record<string, unknown>;
}

/** Writes messages to the outbox inside the caller's transaction, in their order (one statement, whatever their number). */
export async function enqueue(em: Pick<EntityManager, 'query'>, entries: readonly OutboxEntry[]): Promise<void> {
  if (entries.length === 0) return;
  // One JSON document for all of them: parsed once, whatever their number (a function scan keeps their order).
  await em.query(
    `INSERT INTO outbox (topic, key, payload) SELECT topic, key, payload FROM jsonb_to_recordset($1::jsonb) AS m(topic text, key text, payload jsonb)`,
    [JSON.stringify(entries)],
  );
}
