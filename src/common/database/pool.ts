import pg from 'pg';
import { Socket } from 'node:net';
import type { DataSource } from 'typeorm';

/**
 * pg as TypeORM's `driver` option (documented: "the driver object, defaults to require('pg')"),
 * keeping the pool TypeORM makes with it, so that the pipelined transactions and the pool metrics
 * use TypeORM's own connections without reaching into TypeORM's driver.
 */
export class PgDriver {
  pool: pg.Pool | undefined;
  readonly defaults = pg.defaults;
  readonly Pool: typeof pg.Pool;

  constructor() {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the pool class reports to the driver that made it
    const driver = this;
    this.Pool = class extends pg.Pool {
      constructor(config?: pg.PoolConfig) {
        super(config);
        driver.pool = this;
      }
    };
  }
}

/** The pg pool behind a data source opened with dataSourceOptions (same connections, same limits). */
export function poolOf(ds: DataSource): pg.Pool {
  const driver = (ds.options as { driver?: unknown }).driver;
  if (!(driver instanceof PgDriver) || !driver.pool) throw new Error('the data source was not opened with dataSourceOptions');
  return driver.pool;
}

/**
 * A connection's socket (pg's documented `stream` option) that sends everything written to it in
 * one turn of the event loop in one write: in pipeline mode pg writes each query on its own
 * (Parse/Bind/Describe/Execute/Sync, corked per query), so a pipelined round trip of ten statements
 * cost ten `writev` calls — the largest share of the service's CPU on the reservation path. Held
 * back until the turn ends (process.nextTick), they leave as one.
 */
export function coalescingSocket(): Socket {
  const socket = new Socket();
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  let held = false;
  socket.write = ((...args: unknown[]): boolean => {
    if (!held) {
      held = true;
      socket.cork();
      process.nextTick(() => {
        held = false;
        socket.uncork();
      });
    }
    return write(...args);
  }) as Socket['write'];
  return socket;
}
