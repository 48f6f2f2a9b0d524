import type { EntityManager, QueryRunner } from 'typeorm';
import { ANY_PLANS, GENERIC_PLANS, INDEX_PLANS } from './pipelined-transaction';
import { rows } from './transaction';

const configured = new WeakSet<object>();
const planned = new WeakMap<object, Set<string>>();

interface PgClient {
  query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/**
 * Runs a hot statement as a named prepared statement on the transaction's connection, so
 * PostgreSQL parses it once per connection and can reuse its plan (planning the ledger's
 * multi-CTE statements costs more than running them). Outside a transaction it is a plain query.
 * `name` must be unique per SQL text.
 */
export async function preparedRows<T>(em: EntityManager, name: string, text: string, values: unknown[]): Promise<T[]> {
  const runner = em.queryRunner as (QueryRunner & { databaseConnection?: PgClient }) | undefined;
  const client = runner && !runner.isReleased && runner.isTransactionActive ? runner.databaseConnection : undefined;
  if (!client) return rows<T>(em, text, values);
  if (!configured.has(client)) {
    // Session-level (it stays after this transaction commits; were it rolled back, the only cost is
    // re-planning): see GENERIC_PLANS.
    await client.query({ text: GENERIC_PLANS, values: [] });
    configured.add(client);
  }
  const known = planned.get(client) ?? new Set<string>();
  if (known.has(name)) return (await client.query({ name, text, values })).rows as T[];
  // The first execution on this connection makes the plan it keeps: see INDEX_PLANS.
  await client.query({ text: INDEX_PLANS, values: [] });
  const result = await client.query({ name, text, values });
  await client.query({ text: ANY_PLANS, values: [] });
  known.add(name);
  planned.set(client, known);
  return result.rows as T[];
}
