import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { advisoryKey } from '../../src/common/database/advisory-lock';
import { MIGRATIONS } from '../../migrations';

const ROOT = resolve(__dirname, '../..');

/** `node scripts/migration.mjs run` on `url` (the build of the run: build-setup.ts); resolves with its exit code and output. */
function migrationRun(url: string): { done: Promise<{ code: number | null; output: string }>; running: () => boolean } {
  const child = spawn(process.execPath, ['scripts/migration.mjs', 'run'], { cwd: ROOT, env: { ...process.env, DATABASE_URL: url } });
  let output = '';
  let exited = false;
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const done = new Promise<{ code: number | null; output: string }>((resolvePromise) =>
    child.on('exit', (code) => {
      exited = true;
      resolvePromise({ code, output });
    }),
  );
  return { done, running: () => !exited };
}

/**
 * `npm run migration:run` (scripts/migration.mjs run) migrates as an instance does at start: under the
 * migrations' advisory lock. An operator running it while an instance migrates would otherwise build
 * the same index beside it, or drop the instance's concurrent build in progress as an invalid leftover.
 */
describe('migration:run', () => {
  const clients: pg.Client[] = [];
  const databases: string[] = [];

  afterEach(async () => {
    for (const c of clients.splice(0)) await c.end();
    const admin = new pg.Client({ connectionString: inject('databaseUrl') });
    await admin.connect();
    for (const name of databases.splice(0)) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });

  async function connect(url: string): Promise<pg.Client> {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    clients.push(c);
    return c;
  }

  it('waits for the migrations lock an instance holds, then applies every migration', async () => {
    const admin = await connect(inject('databaseUrl'));
    const name = `billing_migrun_${process.pid}_${Date.now()}`;
    await admin.query(`CREATE DATABASE ${name}`);
    databases.push(name);
    const url = new URL(inject('databaseUrl'));
    url.pathname = `/${name}`;
    // An instance migrating: it holds the migrations' advisory lock (a session lock, in this database).
    const instance = await connect(url.toString());
    await instance.query('SELECT pg_advisory_lock($1)', [advisoryKey('migrations')]);

    const run = migrationRun(url.toString());
    // Long enough for a run that ignores the lock to have created its migrations table.
    await new Promise((r) => setTimeout(r, 4_000));
    const [before] = (await instance.query(`SELECT to_regclass('public.schema_migrations') IS NOT NULL AS present`)).rows as {
      present: boolean;
    }[];
    expect(before?.present).toBe(false);
    expect(run.running()).toBe(true);

    await instance.query('SELECT pg_advisory_unlock($1)', [advisoryKey('migrations')]);
    const { code, output } = await run.done;
    expect({ code, output }).toMatchObject({ code: 0 });
    const applied = (await instance.query('SELECT name FROM schema_migrations')).rows as { name: string }[];
    const build = MIGRATIONS.map((m) => (new m() as { name: string }).name);
    expect(applied.map((r) => r.name).sort()).toEqual(build.sort());
  });
});
