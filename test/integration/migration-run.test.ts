import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { advisoryKey } from '../../src/common/database/advisory-lock';
import { MIGRATIONS } from '../../migrations';

const ROOT = resolve(__dirname, '../..');

/** `node scripts/migration.mjs <command>` on `url` (the build of the run: build-setup.ts); resolves with its exit code and output. */
function migrationScript(
  command: 'run' | 'revert',
  url: string,
): { done: Promise<{ code: number | null; output: string }>; running: () => boolean } {
  const child = spawn(process.execPath, ['scripts/migration.mjs', command], { cwd: ROOT, env: { ...process.env, DATABASE_URL: url } });
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
 * Waits until a connection to `database` other than `holder`'s has asked for the migrations' lock and
 * been refused: the script's connection, idle between two tries, shows its last statement. A script
 * that ignored the lock would never ask, and this would time out.
 */
async function refusedTheLock(observer: pg.Client, database: string, holder: pg.Client): Promise<void> {
  const pid = ((await holder.query('SELECT pg_backend_pid() AS pid')).rows as { pid: number }[])[0]?.pid;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { rows } = await observer.query(
      `SELECT count(*)::int AS asking FROM pg_stat_activity WHERE datname = $1 AND pid <> $2 AND query LIKE '%pg_try_advisory_lock%'`,
      [database, pid],
    );
    if ((rows[0] as { asking: number }).asking > 0) return;
    if (Date.now() > deadline) throw new Error(`no connection to ${database} asked for the migrations' lock within 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * `npm run migration:run` and `migration:revert` (scripts/migration.mjs) migrate as an instance does at
 * start: under the migrations' advisory lock. An operator running them while an instance migrates
 * would otherwise build the same index beside it, drop the instance's concurrent build in progress as
 * an invalid leftover, or revert a migration while the instance applies the next.
 */
describe('migration:run and migration:revert', () => {
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

    const run = migrationScript('run', url.toString());
    await refusedTheLock(admin, name, instance);
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

  it('revert waits for the migrations lock an instance holds, then reverts the last migration only', async () => {
    const admin = await connect(inject('databaseUrl'));
    const name = `billing_migrev_${process.pid}_${Date.now()}`;
    // A copy of the run's migrated database (global-setup.ts).
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('databaseTemplate')}`);
    databases.push(name);
    const url = new URL(inject('databaseUrl'));
    url.pathname = `/${name}`;
    const instance = await connect(url.toString());
    const applied = async () =>
      ((await instance.query('SELECT name FROM schema_migrations')).rows as { name: string }[]).map((r) => r.name).sort();
    const build = MIGRATIONS.map((m) => (new m() as { name: string }).name);
    expect(await applied()).toEqual([...build].sort());
    await instance.query('SELECT pg_advisory_lock($1)', [advisoryKey('migrations')]);

    const revert = migrationScript('revert', url.toString());
    await refusedTheLock(admin, name, instance);
    expect(await applied()).toEqual([...build].sort());
    expect(revert.running()).toBe(true);

    await instance.query('SELECT pg_advisory_unlock($1)', [advisoryKey('migrations')]);
    const { code, output } = await revert.done;
    const last = build[build.length - 1];
    expect({ code, output }).toMatchObject({ code: 0, output: expect.stringContaining(`reverted ${last}`) });
    expect(await applied()).toEqual(build.slice(0, -1).sort());
  });
});
