import pg from 'pg';
import type { DataSource } from 'typeorm';
import { inject } from 'vitest';
import { dataSourceOptions } from '../../src/common/database/data-source';
import { openDataSource } from '../../src/common/database/database.module';

export interface FreshDatabase {
  /** The service's data source on it (migrations applied). */
  ds: DataSource;
  /** Its name, for queries about it from outside (pg_stat_activity). */
  name: string;
  /** Its URL (DATABASE_URL for an app or a service process on it). */
  url: string;
  /** A connection to the test server, outside the database. */
  admin: pg.Client;
  /** Closes the data source and drops the database. */
  drop(): Promise<void>;
}

/**
 * A database of its own on the test server, for a file whose tests need one nobody else writes to. On
 * the run's server it is a copy of the run's migrated template (global-setup.ts); on another server
 * (`server`) it is created empty and migrated. Either way `ds` opens it as the service does, so a
 * schema that is not current fails here.
 */
export async function freshDatabase(prefix: string, poolSize = 2, server = inject('databaseUrl')): Promise<FreshDatabase> {
  const name = `billing_${prefix}_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  const template = server === inject('databaseUrl') ? ` TEMPLATE ${inject('databaseTemplate')}` : '';
  await admin.query(`CREATE DATABASE ${name}${template}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  const ds = await openDataSource(dataSourceOptions(url.toString(), poolSize));
  return {
    ds,
    name,
    url: url.toString(),
    admin,
    async drop() {
      await ds.destroy();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}
