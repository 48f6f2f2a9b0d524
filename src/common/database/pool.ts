import pg from 'pg';
import { Socket } from 'node:net';
import type { DataSource } from 'typeorm';
import { Logger } from '@nestjs/common';
import { queryTimeoutNow, UNBOUNDED, type QueryBounds } from './query-bounds';

const lostConnections = new Logger('Database');

/**
 * pg as TypeORM's `driver` option (documented: "the driver object, defaults to require('pg')"),
 * keeping the pool TypeORM makes with it, so that the pipelined transactions and the pool metrics
 * use TypeORM's own connections without reaching into TypeORM's driver. Its connections bound every
 * query by `bounds` (query-bounds.ts).
 */
export class PgDriver {
  pool: pg.Pool | undefined;
  readonly defaults = pg.defaults;
  readonly Pool: typeof pg.Pool;

  constructor(bounds: QueryBounds = UNBOUNDED) {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the pool class reports to the driver that made it
    const driver = this;
    const Client = boundedClient(bounds);
    this.Pool = class extends pg.Pool {
      constructor(config?: pg.PoolConfig) {
        // pg-pool's documented `Client` option: the class of the pool's connections.
        super({ ...config, Client: Client as unknown as pg.PoolConfig['Client'] });
        driver.pool = this;
        // A connection lost while checked out (the server restarted, the backend terminated) emits
        // 'error' on its client, which the pool listens to only while the client is idle: unheard, it
        // ends the process. Heard, the client's next query fails (answered 503) and the pool drops it.
        this.on('connect', (client) => {
          client.on('error', (error) => lostConnections.warn(`a database connection in use was lost: ${String(error)}`));
        });
      }
    };
  }
}

/** What pg's query_timeout fails a query with. */
const READ_TIMEOUT = 'Query read timeout';

/**
 * A pg Client whose every query carries pg's own `query_timeout` (the per-query option), read when
 * the query is made (queryTimeoutNow): a query unanswered that long fails with `Query read timeout`,
 * and, the pool's connections being in pipeline mode, pg destroys the connection under it (the
 * answers of the queries behind it could no longer be told apart), which fails the queries queued
 * behind it; the server rolls back the connection's open transaction when it sees it closed. The
 * client is ended at once, before the caller sees the error: pg notices the destroyed connection only
 * a turn later, and a connection released meanwhile went back to the pool, where the next request
 * took it and failed. A query object of its own (`submit`) is left as it is.
 */
function boundedClient(bounds: QueryBounds): typeof pg.Client {
  return class BoundedClient extends pg.Client {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's query has a dozen overloads; this adds one field to its first argument and passes the rest on
    override query(config: any, values?: any, callback?: any): any {
      const query = (...args: unknown[]): unknown => (super.query as (...a: unknown[]) => unknown).apply(this, args);
      const timeoutMs = queryTimeoutNow(bounds);
      const own = config !== null && typeof config === 'object' && typeof (config as { submit?: unknown }).submit === 'function';
      if (timeoutMs <= 0 || own) return query(config, values, callback);
      const bounded =
        typeof config === 'string' ? { text: config, query_timeout: timeoutMs } : { ...(config as object), query_timeout: timeoutMs };
      const heard =
        (given: (error: unknown, result: unknown) => void) =>
        (error: unknown, result: unknown): void => {
          this.endIfTimedOut(error);
          given(error, result);
        };
      if (typeof values === 'function') return query(bounded, heard(values as (error: unknown, result: unknown) => void));
      if (typeof callback === 'function') return query(bounded, values, heard(callback as (error: unknown, result: unknown) => void));
      const result = query(bounded, values) as Promise<unknown>;
      // Registered before the caller's own handlers, so it runs first.
      result.catch((error: unknown) => this.endIfTimedOut(error));
      return result;
    }

    private endIfTimedOut(error: unknown): void {
      if (error instanceof Error && error.message === READ_TIMEOUT) this.end().catch(() => undefined);
    }
  };
}

/** The pg pool behind a data source opened with dataSourceOptions (same connections, same limits). */
export function poolOf(ds: DataSource): pg.Pool {
  const driver = (ds.options as { driver?: unknown }).driver;
  if (!(driver instanceof PgDriver) || !driver.pool) throw new Error('the data source was not opened with dataSourceOptions');
  return driver.pool;
}

/**
 * A connection's socket (pg's documented `stream` option) that sends the statements written to it
 * in one turn of the event loop in one write. In pipeline mode pg corks the socket around each
 * query it writes (Parse/Bind/Describe/Execute/Sync), so a pipelined round trip of ten statements
 * cost ten `writev` calls: the largest share of the service's CPU on the reservation path. Here the
 * uncork that would send them is held until the turn ends (process.nextTick), and the queries
 * written meanwhile leave with it. Writes made uncorked (a simple-protocol query) go at once.
 */
export class CoalescingSocket extends Socket {
  private held = false;

  override uncork(): void {
    if (this.writableCorked !== 1) return super.uncork();
    if (this.held) return;
    this.held = true;
    process.nextTick(() => {
      this.held = false;
      super.uncork();
    });
  }
}

/** The pool's connections' sockets (the `stream` option). */
export function coalescingSocket(): Socket {
  return new CoalescingSocket();
}
