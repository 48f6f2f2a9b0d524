import 'reflect-metadata';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../../migrations';
import { ENTITIES } from './entities';
import { coalescingSocket, PgDriver } from './pool';
import { QUERY_LOG } from './query-log';
import { UNBOUNDED, type QueryBounds } from './query-bounds';

/** How long the service waits for the database (docs/operations.md, "Waiting for the database"). */
export interface DatabaseTimeouts extends QueryBounds {
  /** How long a query waits for a connection of the pool, or for a new one to open (DATABASE_ACQUIRE_TIMEOUT_MS); 0: for ever. */
  acquireTimeoutMs: number;
  /** How long the server lets a connection sit idle in a transaction before ending it (DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS). */
  idleInTransactionTimeoutMs: number;
}

/** No bound on anything: the TypeORM CLI's data source (migrations) and the tests' own. */
export const NO_TIMEOUTS: DatabaseTimeouts = { ...UNBOUNDED, acquireTimeoutMs: 0, idleInTransactionTimeoutMs: 0 };

export function dataSourceOptions(url: string, poolSize = 20, timeouts: DatabaseTimeouts = NO_TIMEOUTS): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    // Each migration in a transaction of its own, and one that builds an index CONCURRENTLY
    // (`transaction = false`) outside any: also the TypeORM CLI's mode (`migration:run`, whose
    // default, one transaction for all, refuses such a migration).
    migrationsTransactionMode: 'each',
    synchronize: false,
    migrationsRun: false,
    logging: ['error'],
    logger: QUERY_LOG,
    // temp_buffers: the monthly reset's temporary tables stay in memory. jit off: the service's
    // statements are short, and a plan costed above jit_above_cost (a generic plan remade after an
    // ANALYZE, a scan costed by enable_seqscan = off) was compiled by LLVM at every execution: a
    // quarter of PostgreSQL's CPU in the ledger benchmark when it happened.
    // pipeline: pg sends a transaction's statements without waiting for each answer
    // (pipelined-transaction.ts); a query on its own runs as it does without it. stream: what one
    // turn writes leaves in one write (pool.ts). connectionTimeoutMillis: pg-pool's bound on the wait
    // for a connection (a free one, or a new one to open); the driver bounds each query (pool.ts).
    // idle_in_transaction_session_timeout: the server's bound on a transaction left open with nothing
    // sent (its client partitioned away or stuck): the server ends the session and its locks go
    // (docs/operations.md, "Waiting for the database"); pg sends it at connection start, 0 not at all.
    extra: {
      max: poolSize,
      connectionTimeoutMillis: timeouts.acquireTimeoutMs,
      idle_in_transaction_session_timeout: timeouts.idleInTransactionTimeoutMs,
      application_name: 'dl-billing',
      options: '-c temp_buffers=64MB -c jit=off',
      pipeline: true,
      stream: coalescingSocket,
    },
    driver: new PgDriver(timeouts),
  };
}

/** The TypeORM CLI's data source (migration:generate/run/revert/check); reads DATABASE_URL. */
export default new DataSource(dataSourceOptions(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/billing_dev'));
