import { resolve } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDataSource } from '../../src/common/database/database.module';
import { dataSourceOptions } from '../../src/common/database/data-source';
import { EmbeddedPostgres } from '../../src/common/database/embedded-postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    /** A migrated database nobody connects to: `freshDatabase()` copies it (CREATE DATABASE … TEMPLATE). */
    databaseTemplate: string;
    kafkaBrokers: string;
  }
}

/**
 * A fresh database per project and run, migrated once, and a copy of it made before anything connects
 * to it: the template that `freshDatabase()` copies instead of migrating a database of its own. Both
 * on DATABASE_URL's server when it is set (CI uses the machine's PostgreSQL), otherwise on one
 * embedded PostgreSQL that every project of the run shares, so `npm test` works on a fresh machine.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = process.env.DATABASE_URL ? undefined : sharedTestServer();
  const serverUrl = process.env.DATABASE_URL ?? (await server!.acquire());
  const name = `billing_test_${Date.now()}_${process.pid}_${project.name}`;
  const template = `${name}_tpl`;
  const admin = new pg.Client({ connectionString: serverUrl });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    const ds = await openDataSource(dataSourceOptions(url.toString(), 4));
    await ds.destroy();
    await admin.query(`CREATE DATABASE ${template} TEMPLATE ${name}`);
    project.provide('databaseUrl', url.toString());
    project.provide('databaseTemplate', template);
  } catch (error) {
    await admin.end().catch(() => undefined);
    await server?.release();
    throw new Error(`test database ${name} on ${redacted(serverUrl)} could not be prepared: ${describe(error)}`, {
      cause: error,
    });
  }
  return async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    await admin.end();
    await server?.release();
  };
}

interface SharedServer {
  acquire(): Promise<string>;
  release(): Promise<void>;
}

/**
 * Vitest loads this file once per project, in one process: the server and its count of users live
 * on `globalThis` so that the http and integration projects use one server, started by the first
 * and stopped by the last. Its folder is the tests' own, so a server an interrupted run left on it
 * is stopped, and a port taken by anything else means another free port.
 */
function sharedTestServer(): SharedServer {
  const key = Symbol.for('dl-billing.test-postgres');
  const global = globalThis as unknown as Record<symbol, SharedServer | undefined>;
  if (global[key]) return global[key];
  const server = new EmbeddedPostgres(resolve('.data/test-postgres'), 54330, { leftover: 'stop', portInUse: 'any' });
  let users = 0;
  const shared: SharedServer = {
    async acquire() {
      users += 1;
      try {
        return await server.start();
      } catch (error) {
        users -= 1;
        throw error;
      }
    },
    async release() {
      users -= 1;
      if (users === 0) await server.stop();
    },
  };
  global[key] = shared;
  return shared;
}

function redacted(url: string): string {
  const u = new URL(url);
  u.password = u.password ? '***' : '';
  return u.toString();
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : `a non-Error was thrown: ${String(error)}`;
}
