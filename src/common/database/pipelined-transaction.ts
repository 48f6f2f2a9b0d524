import type pg from 'pg';
import type { DataSource, EntityManager } from 'typeorm';
import { inTransaction } from './transaction';

export { poolOf } from './pool';

/** A statement kept prepared on every connection that ran it. */
export interface PreparedStatement {
  /** Unique per SQL text. */
  name: string;
  text: string;
}

export interface Call {
  statement: PreparedStatement;
  values: unknown[];
}

type Row = Record<string, unknown>;

const configured = new WeakSet<pg.ClientBase>();

/**
 * Prepared statements run with their generic plan: the hot statements are written so that it is
 * an index lookup per row, and re-planning them for every call (what `auto` chooses when the actual
 * parameters make a custom plan look cheaper) costs more than running them. Only named prepared
 * statements are affected; set once per connection, outside any transaction.
 */
export const GENERIC_PLANS = 'SET plan_cache_mode = force_generic_plan';

/**
 * Sent (in a transaction) before every execution of the hot prepared statements, and undone by
 * ANY_PLANS right after them (in the same message or round trip), so that their generic plan —
 * made at the first execution on a connection, and made again whenever PostgreSQL invalidates it
 * (an ANALYZE, say) — is never a sequential scan chosen while the tables were small (a fresh
 * database, the first minutes of a service): kept for the connection's life, such a plan read every
 * grant on every ledger write once the tables had grown. The hot statements find their rows by key,
 * so index lookups are right whatever the statistics say. It must not stay on for the rest of the
 * transaction: a set-based statement there (the allowance grant's over temporary tables) whose
 * sequential scans cannot be avoided gets an estimate above jit_above_cost and spends seconds in JIT.
 */
export const INDEX_PLANS = 'SET LOCAL enable_seqscan = off';
/** Undoes INDEX_PLANS for the rest of the transaction. */
export const ANY_PLANS = 'SET LOCAL enable_seqscan = on';

/**
 * A transaction in two round trips: `BEGIN` travels with the first statements and `COMMIT` with
 * the last ones (pg's pipeline mode sends them without waiting for each answer; the statements are
 * named, so each connection parses them once and reuses their plans). For hot paths whose
 * transaction is "lock and read, decide in code, write": it halves the round trips of an
 * interactive transaction. Any database error discards the connection.
 */
export class PipelinedSession {
  private done = false;

  private constructor(
    private readonly client: pg.PoolClient,
    /** The rows of each of the first statements. */
    readonly results: Row[][],
  ) {}

  /** The rows of the last of the first statements. */
  get rows(): Row[] {
    return this.results[this.results.length - 1] ?? [];
  }

  /** BEGIN and the first statements, in one round trip (each statement sees what the ones before it did). */
  static async begin(pool: pg.Pool, first: Call[]): Promise<PipelinedSession> {
    const client = await pool.connect();
    try {
      // INDEX_PLANS once for the whole session: it runs only the hot statements (no set-based one).
      return new PipelinedSession(client, await send(client, ['BEGIN', INDEX_PLANS], first, [], false));
    } catch (error) {
      client.release(true);
      throw error;
    }
  }

  /** More statements inside the transaction, in one round trip; returns each statement's rows. */
  async query(calls: Call[]): Promise<Row[][]> {
    return this.guard(() => send(this.client, [], calls, [], false));
  }

  /** The last statements and COMMIT, in one round trip; returns each statement's rows. */
  async commit(calls: Call[]): Promise<Row[][]> {
    const results = await this.guard(() => send(this.client, [], calls, ['COMMIT'], false));
    this.finish(false);
    return results;
  }

  async rollback(): Promise<void> {
    if (this.done) return;
    await this.guard(() => send(this.client, [], [], ['ROLLBACK'], false));
    this.finish(false);
  }

  /** Releases the connection; a session ended by an error discards it (its state is unknown). */
  abandon(): void {
    this.finish(true);
  }

  private async guard<T>(work: () => Promise<T>): Promise<T> {
    if (this.done) throw new Error('the transaction is over');
    try {
      return await work();
    } catch (error) {
      this.finish(true);
      throw error;
    }
  }

  private finish(discard: boolean): void {
    if (this.done) return;
    this.done = true;
    this.client.release(discard ? true : undefined);
  }
}

/**
 * Sends `before` (one message), INDEX_PLANS, the calls, ANY_PLANS and `after` (one message) without
 * waiting for any answer (pg's pipeline mode: every query its own Parse/Bind/Execute/Sync,
 * parameters bound by the driver; a named statement is parsed once per connection, so its plan is
 * reused), then waits for all of them and returns the calls' rows. `wrap` false: no INDEX_PLANS and
 * ANY_PLANS around the calls (a PipelinedSession sets INDEX_PLANS once with its BEGIN). Every query
 * costs a Sync and a ReadyForQuery, so the statements without parameters (BEGIN, the settings,
 * COMMIT) travel as one simple-protocol message each side. A failed statement aborts the
 * transaction, so the ones behind it fail too (and a COMMIT behind it rolls back): the first error
 * in order is the one thrown.
 */
async function send(client: pg.ClientBase, before: string[], calls: Call[], after: string[], wrap = true): Promise<Row[][]> {
  const queries: Promise<pg.QueryResult<Row>>[] = [];
  const run = (query: pg.QueryConfig): number => queries.push(client.query<Row>(query)) - 1;
  if (!configured.has(client)) {
    // Session-level, once per connection (see GENERIC_PLANS): sent before its first statements, on
    // its own (a transaction rolled back would undo it).
    run({ text: GENERIC_PLANS });
    configured.add(client);
  }
  if (before.length > 0) run({ text: before.join('; ') });
  // Every send with statements is inside a transaction (BEGIN goes with the first): SET LOCAL holds.
  const wrapped = wrap && calls.length > 0;
  if (wrapped) run(INDEX_PLANS_QUERY);
  const positions = calls.map((call) => run({ name: call.statement.name, text: call.statement.text, values: call.values }));
  if (wrapped) run(ANY_PLANS_QUERY);
  if (after.length > 0) run({ text: after.join('; ') });
  const settled = await Promise.allSettled(queries);
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  return positions.map((i) => (settled[i] as PromiseFulfilledResult<pg.QueryResult<Row>>).value.rows);
}

/** INDEX_PLANS and ANY_PLANS as named statements, parsed once per connection. */
const INDEX_PLANS_QUERY: pg.QueryConfig = { name: 'index_plans_v1', text: INDEX_PLANS };
const ANY_PLANS_QUERY: pg.QueryConfig = { name: 'any_plans_v1', text: ANY_PLANS };

/** The connection of a TypeORM transaction (TypeORM's QueryRunner.connect returns the connection it holds). */
export async function transactionClient(em: EntityManager): Promise<pg.ClientBase | undefined> {
  const runner = em.queryRunner;
  if (!runner || runner.isReleased || !runner.isTransactionActive) return undefined;
  return (await runner.connect()) as pg.ClientBase;
}

/**
 * Several prepared statements in the caller's TypeORM transaction, in one round trip (each sees what
 * the ones before it did); returns each statement's rows. An error in one aborts the transaction
 * (rolled back by its owner as usual).
 */
export async function inOneRoundTrip(em: EntityManager, calls: Call[]): Promise<Row[][]> {
  const client = await transactionClient(em);
  if (!client) throw new Error('inOneRoundTrip runs in a transaction');
  return send(client, [], calls, []);
}

/**
 * inTransaction (common/database/transaction.ts) whose first statements go in one round trip, their
 * rows handed to `work` with the transaction's manager; a deadlock or serialization failure runs it
 * all again.
 */
export function inTransactionFrom<T>(ds: DataSource, first: Call[], work: (em: EntityManager, rows: Row[][]) => Promise<T>): Promise<T> {
  return inTransaction(ds, async (em) => work(em, await inOneRoundTrip(em, first)));
}

/** A prepared statement in the caller's transaction between INDEX_PLANS and ANY_PLANS (prepared.ts). */
export async function preparedIn<T>(client: pg.ClientBase, call: Call): Promise<T[]> {
  const [found] = await send(client, [], [call], []);
  return (found ?? []) as T[];
}
