import pg from 'pg';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { retrying } from './transaction';

/** A statement kept prepared on every connection that ran it. */
export interface PreparedStatement {
  /** Unique per SQL text. */
  name: string;
  text: string;
}

/** SQL-level PREPAREs share their namespace with protocol-level named statements (preparedRows). */
const sqlName = (name: string): string => `sql_${name}`;

export interface Call {
  statement: PreparedStatement;
  values: unknown[];
}

type Row = Record<string, unknown>;

const prepared = new WeakMap<pg.PoolClient, Set<string>>();
const configured = new WeakSet<pg.PoolClient>();

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

/** A value as an SQL literal; EXECUTE coerces it to the prepared parameter's type. */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (value instanceof Date) return quoted(value.toISOString());
  if (typeof value === 'string') return quoted(value);
  if (typeof value === 'number' || typeof value === 'bigint') return quoted(String(value));
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (Array.isArray(value)) return value.length === 0 ? `'{}'` : `ARRAY[${value.map(literal).join(', ')}]`;
  throw new TypeError(`cannot pass a ${typeof value} as a literal`);
}

/**
 * A string as an SQL literal, exactly as pg.escapeLiteral writes it (quotes doubled; with a
 * backslash, backslashes doubled in an E'' literal), by two regular expressions instead of its loop
 * that appends one character at a time: a batch of ledger writes sends tens of kilobytes of JSON.
 */
export function quoted(text: string): string {
  const body = text.replace(/'/g, "''");
  return text.includes('\\') ? ` E'${body.replace(/\\/g, '\\\\')}'` : `'${body}'`;
}

/**
 * A transaction in two round trips: `BEGIN` travels with the first statement and `COMMIT` with
 * the last ones (the simple query protocol runs several statements per message; the statements
 * are SQL-level prepared once per connection and run with EXECUTE, so their plans are reused).
 * For hot paths whose transaction is "lock and read, decide in code, write": it halves the round
 * trips of an interactive transaction. Any database error discards the connection.
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
      const before = configured.has(client) ? ['BEGIN'] : [GENERIC_PLANS, 'BEGIN'];
      const session = new PipelinedSession(client, await send(client, before, first, []));
      configured.add(client);
      return session;
    } catch (error) {
      client.release(true);
      throw error;
    }
  }

  /** More statements inside the transaction, in one round trip; returns each statement's rows. */
  async query(calls: Call[]): Promise<Row[][]> {
    return this.guard(() => send(this.client, [], calls, []));
  }

  /** The last statements and COMMIT, in one round trip; returns each statement's rows. */
  async commit(calls: Call[]): Promise<Row[][]> {
    const results = await this.guard(() => send(this.client, [], calls, ['COMMIT']));
    this.finish(false);
    return results;
  }

  async rollback(): Promise<void> {
    if (this.done) return;
    await this.guard(() => send(this.client, [], [], ['ROLLBACK']));
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

/** Sends `before; [PREPARE …;] EXECUTE …; after` as one message and returns the EXECUTEs' rows. */
async function send(client: pg.PoolClient, before: string[], calls: Call[], after: string[]): Promise<Row[][]> {
  const known = prepared.get(client) ?? new Set<string>();
  const parts = [...before];
  const fresh: string[] = [];
  for (const call of calls) {
    const name = sqlName(call.statement.name);
    const text = call.statement.text;
    if (!known.has(name) && !fresh.includes(name)) {
      parts.push(`PREPARE ${name} AS ${text}`);
      fresh.push(name);
    }
  }
  // Every send with statements is inside a transaction (BEGIN goes with the first): SET LOCAL holds,
  // and both SETs travel in the same message as the EXECUTEs.
  const indexPlans = calls.length > 0;
  if (indexPlans) parts.push(INDEX_PLANS);
  const firstExecute = parts.length;
  for (const call of calls) {
    parts.push(`EXECUTE ${sqlName(call.statement.name)}${call.values.length ? `(${call.values.map(literal).join(', ')})` : ''}`);
  }
  if (indexPlans) parts.push(ANY_PLANS);
  parts.push(...after);
  const raw = (await client.query(parts.join(';\n'))) as unknown as pg.QueryResult<Row> | pg.QueryResult<Row>[];
  for (const name of fresh) known.add(name);
  prepared.set(client, known);
  const results = Array.isArray(raw) ? raw : [raw];
  return calls.map((_, i) => results[firstExecute + i]?.rows ?? []);
}

/**
 * Several prepared statements in the caller's TypeORM transaction, in one round trip (each sees what
 * the ones before it did); returns each statement's rows. A statement new to the connection is
 * PREPAREd first on its own (once per connection), so that the pipelined message never prepares:
 * an error in it then leaves the connection's prepared statements as they were (the transaction is
 * aborted and rolled back by its owner as usual).
 */
export async function inOneRoundTrip(em: EntityManager, calls: Call[]): Promise<Row[][]> {
  const runner = em.queryRunner as (QueryRunner & { databaseConnection?: pg.PoolClient }) | undefined;
  const client = runner && !runner.isReleased && runner.isTransactionActive ? runner.databaseConnection : undefined;
  if (!client) throw new Error('inOneRoundTrip runs in a transaction');
  await prepareOn(client, calls);
  return send(client, [], calls, []);
}

/**
 * inTransaction (common/database/transaction.ts) whose BEGIN travels with its first statements: one
 * round trip for both. `work` gets the transaction's manager and the rows of each first statement;
 * COMMIT follows it, ROLLBACK an error, and a deadlock or serialization failure runs it all again.
 */
export async function inTransactionFrom<T>(ds: DataSource, first: Call[], work: (em: EntityManager, rows: Row[][]) => Promise<T>): Promise<T> {
  return retrying(async () => {
    const runner = ds.createQueryRunner();
    try {
      const client = (await runner.connect()) as pg.PoolClient;
      await prepareOn(client, first);
      let rows: Row[][];
      try {
        rows = await send(client, ['BEGIN'], first, []);
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
      // The transaction TypeORM's startTransaction would have opened: its manager, commit and rollback work as usual.
      Object.assign(runner, { isTransactionActive: true, transactionDepth: 1 });
      try {
        const result = await work(runner.manager, rows);
        await runner.commitTransaction();
        return result;
      } catch (error) {
        if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
        throw error;
      }
    } finally {
      await runner.release();
    }
  });
}

/**
 * Gets a connection ready to EXECUTE `calls` pipelined: the session's plan setting, and a PREPARE on
 * its own for each statement new to it (once per connection), so that a pipelined message never
 * prepares and an error in it leaves the connection's prepared statements as they were.
 */
async function prepareOn(client: pg.PoolClient, calls: Call[]): Promise<void> {
  const known = prepared.get(client) ?? new Set<string>();
  prepared.set(client, known);
  if (!configured.has(client)) {
    // Session-level, as PipelinedSession.begin sets it (see GENERIC_PLANS).
    await client.query(GENERIC_PLANS);
    configured.add(client);
  }
  for (const call of calls) {
    const name = sqlName(call.statement.name);
    if (known.has(name)) continue;
    await client.query(`PREPARE ${name} AS ${call.statement.text}`);
    known.add(name);
  }
}

/** The pg pool behind a TypeORM data source (same connections, same limits). */
export function poolOf(ds: DataSource): pg.Pool {
  return (ds.driver as unknown as { master: pg.Pool }).master;
}
