import pg from 'pg';
import type { EntityManager, QueryRunner } from 'typeorm';
import { ANY_PLANS, GENERIC_PLANS, INDEX_PLANS } from './pipelined-transaction';
import { rows } from './transaction';

const configured = new WeakSet<object>();

/** INDEX_PLANS and ANY_PLANS as protocol-level named statements, parsed once per connection. */
const INDEX_PLANS_STATEMENT = 'index_plans_v1';
const ANY_PLANS_STATEMENT = 'any_plans_v1';

/** The part of pg's connection (pg/lib/connection.js) that writes extended-protocol messages. */
interface Wire {
  bind(config: { statement: string; values: unknown[] }): void;
  execute(config: { portal?: string; rows?: number }): void;
  sync(): void;
}

/**
 * A named prepared statement run between INDEX_PLANS and ANY_PLANS in one round trip: pg's own
 * Parse (first time) / Bind / Describe / Execute of the statement, preceded by a Bind/Execute of
 * INDEX_PLANS and followed, before the Sync, by a Bind/Execute of ANY_PLANS (pg corks the stream
 * while it writes them: one packet, one ReadyForQuery). If the statement fails, PostgreSQL skips
 * ANY_PLANS, but the error aborts the transaction (or the savepoint) and with it the SET LOCAL.
 * Its result is one Result per command: [SET, the statement, SET].
 */
class IndexPlannedQuery extends pg.Query {
  prepare(connection: Wire): void {
    connection.bind({ statement: INDEX_PLANS_STATEMENT, values: [] });
    connection.execute({});
    // pg ends its messages with a Sync (also on its error path, after a failed Bind): ANY_PLANS goes first.
    const wire = Object.create(connection, {
      sync: {
        value: (): void => {
          connection.bind({ statement: ANY_PLANS_STATEMENT, values: [] });
          connection.execute({});
          connection.sync();
        },
      },
    }) as Wire;
    (pg.Query.prototype as unknown as { prepare(this: pg.Query, c: Wire): void }).prepare.call(this, wire);
  }
}

function indexPlanned(client: pg.ClientBase, name: string, text: string, values: unknown[]): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    client.query(
      new IndexPlannedQuery({ name, text, values }, (error, result) => {
        if (error) return reject(error);
        const results = result as unknown as pg.QueryResult[];
        if (!Array.isArray(results) || results.length !== 3) return reject(new Error(`${name}: expected 3 results, got ${Array.isArray(results) ? results.length : 1}`));
        resolve(results[1]!.rows);
      }),
    );
  });
}

/**
 * Runs a hot statement as a named prepared statement on the transaction's connection, so
 * PostgreSQL parses it once per connection and can reuse its plan (planning the ledger's
 * multi-CTE statements costs more than running them). Every execution runs with INDEX_PLANS, undone
 * right after it (same round trip): its generic plan — made at the first execution, and again
 * whenever PostgreSQL invalidates it — is an index lookup, and the rest of the transaction is planned
 * as usual. Outside a transaction it is a plain query. `name` must be unique per SQL text.
 */
export async function preparedRows<T>(em: EntityManager, name: string, text: string, values: unknown[]): Promise<T[]> {
  const runner = em.queryRunner as (QueryRunner & { databaseConnection?: pg.ClientBase }) | undefined;
  const client = runner && !runner.isReleased && runner.isTransactionActive ? runner.databaseConnection : undefined;
  if (!client) return rows<T>(em, text, values);
  if (!configured.has(client)) {
    // Session-level (it stays after this transaction commits; were it rolled back, the only cost is
    // re-planning): see GENERIC_PLANS. Prepared statements outlive a rollback too; executing both
    // SETs here leaves the setting as it was.
    await client.query({ text: GENERIC_PLANS, values: [] });
    await client.query({ name: INDEX_PLANS_STATEMENT, text: INDEX_PLANS, values: [] });
    await client.query({ name: ANY_PLANS_STATEMENT, text: ANY_PLANS, values: [] });
    configured.add(client);
  }
  return (await indexPlanned(client, name, text, values)) as T[];
}
