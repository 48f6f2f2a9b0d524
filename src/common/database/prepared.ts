import type { EntityManager } from 'typeorm';
import { preparedIn, transactionClient } from './pipelined-transaction';
import { rows } from './transaction';

/**
 * Runs a hot statement as a named prepared statement on the transaction's connection, so
 * PostgreSQL parses it once per connection and can reuse its plan (planning the ledger's
 * multi-CTE statements costs more than running them). Every execution runs with INDEX_PLANS, undone
 * right after it (same round trip): its generic plan — made at the first execution, and again
 * whenever PostgreSQL invalidates it — is an index lookup, and the rest of the transaction is planned
 * as usual. Outside a transaction it is a plain query. `name` must be unique per SQL text.
 */
export async function preparedRows<T>(em: EntityManager, name: string, text: string, values: unknown[]): Promise<T[]> {
  const client = await transactionClient(em);
  if (!client) return rows<T>(em, text, values);
  return preparedIn<T>(client, { statement: { name, text }, values });
}
