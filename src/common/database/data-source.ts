import 'reflect-metadata';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../../migrations';
import { ENTITIES } from './entities';
import { coalescingSocket, PgDriver } from './pool';

export function dataSourceOptions(url: string, poolSize = 20): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: ['error'],
    // temp_buffers: the monthly reset's temporary tables stay in memory. jit off: the service's
    // statements are short, and a plan costed above jit_above_cost (a generic plan remade after an
    // ANALYZE, a scan costed by enable_seqscan = off) was compiled by LLVM at every execution: a
    // quarter of PostgreSQL's CPU in the ledger benchmark when it happened.
    // pipeline: pg sends a transaction's statements without waiting for each answer
    // (pipelined-transaction.ts); a query on its own runs as it does without it. stream: what one
    // turn writes leaves in one write (pool.ts).
    extra: {
      max: poolSize,
      application_name: 'dl-billing',
      options: '-c temp_buffers=64MB -c jit=off',
      pipeline: true,
      stream: coalescingSocket,
    },
    driver: new PgDriver(),
  };
}

/** The TypeORM CLI's data source (migration:generate/run/revert/check); reads DATABASE_URL. */
export default new DataSource(dataSourceOptions(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/billing_dev'));
