import 'reflect-metadata';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../../migrations';
import { ENTITIES } from './entities';

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
    extra: { max: poolSize, application_name: 'dl-billing', options: '-c temp_buffers=64MB' },
  };
}

/** The TypeORM CLI's data source (migration:generate/run/revert/check); reads DATABASE_URL. */
export default new DataSource(
  dataSourceOptions(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/billing_dev'),
);
