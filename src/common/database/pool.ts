import pg from 'pg';
import { Socket } from 'node:net';
import type { DataSource } from 'typeorm';
import { Logger } from '@nestjs/common';

const lostConnections = new Logger('Database');

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
