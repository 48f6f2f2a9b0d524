import type { EntityManager } from 'typeorm';

export interface OutboxEntry {
  topic: string;
  key: string;
  payload: Record<string, unknown>;
}

/** Writes messages to the outbox inside the caller's transaction (one multi-row insert). */
export async function enqueue(em: EntityManager, entries: OutboxEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const values: unknown[] = [];
  const rows = entries.map((e, i) => {
    values.push(e.topic, e.key, JSON.stringify(e.payload));
    return `($${i * 3 + 1}, $${i * 3 + 2}, $${i * 3 + 3}::jsonb)`;
  });
  await em.query(`INSERT INTO outbox (topic, key, payload) VALUES ${rows.join(', ')}`, values);
}
