import { resolve } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDataSource } from '../../src/common/database/database.module';
import { dataSourceOptions } from '../../src/common/database/data-source';
import { EmbeddedPostgres } from '../../src/common/database/embedded-postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    kafkaBrokers: string;
  }
}

/**
 * A fresh database per run, migrated once: on DATABASE_URL's server when it is set (CI uses the
 * machine's PostgreSQL), otherwise on an embedded PostgreSQL, so `npm test` works on a fresh machine.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let serverUrl = process.env.DATABASE_URL;
  let embedded: EmbeddedPostgres | undefined;
  if (!serverUrl) {
    embedded = EmbeddedPostgres.shared(resolve('.data/test-postgres'), 54330);
    serverUrl = await embedded.start();
  }
  const name = `billing_test_${Date.now()}_${process.pid}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const ds = await openDataSource(dataSourceOptions(url.toString(), 4));
  await ds.destroy();
  project.provide('databaseUrl', url.toString());
  return async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    await embedded?.stop();
  };
}
