import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { lifecycle, SMALL } from '../support/accounts';
import { uid } from '../support/app';
import { runCli } from '../support/cli';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';
import { startService, type ServiceProcess } from '../support/service-process';
import { serviceFetch } from '../support/openapi-check';

const ADMIN_KEY = 'backup-restore-admin-key-0123456789';

/** docs/operations.md, "Back up and restore", as an operator follows it. */
describe('back up with pg_dump, restore into a new database, and check it', () => {
  let db: FreshDatabase;
  let service: ServiceProcess;
  const restoredName = `billing_restored_${process.pid}_${Date.now()}`;
  let restoredUrl = '';
  const dir = mkdtempSync(join(tmpdir(), 'billing-backup-'));

  beforeAll(async () => {
    db = await freshDatabase('backup', 2, await dumpableServer());
    service = await startService({ DATABASE_URL: db.url, KAFKA_BROKERS: '', BILLING_ADMIN_API_KEY: ADMIN_KEY, LOG_LEVEL: 'warn' });
    const url = new URL(db.url);
    url.pathname = `/${restoredName}`;
    restoredUrl = url.toString();
  });

  afterAll(async () => {
    await service?.stop();
    await db?.admin.query(`DROP DATABASE IF EXISTS ${restoredName} WITH (FORCE)`);
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('restores the ledger and its audit chain: audit verify and ledger reconcile pass, balances are the same', async () => {
    const base = `http://127.0.0.1:${service.port}`;
    const headers = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown, extra: Record<string, string> = {}): Promise<number> =>
      (await serviceFetch(`${base}${path}`, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body) })).status;
    const accounts = [uid('acc'), uid('acc')];
    for (const id of accounts) {
      expect(await post('/v1/accounts', { id, kind: 'user', plan: 'enterprise', name: id })).toBe(201);
      expect(
        await post(`/v1/admin/accounts/${id}/grants`, { credits: '5', reason: 'backup test' }, { 'idempotency-key': uid('grant') }),
      ).toBe(201);
      // A reservation settled by its lifecycle (hold, charge, release), and one left open.
      const settled = uid('rt');
      expect(await post('/v1/reservations', { accountId: id, runtimeId: settled, ...SMALL })).toBe(201);
      const t0 = new Date(Date.now() - 120_000);
      const events = [
        lifecycle(id, settled, 'runtime.started', t0, 1),
        lifecycle(id, settled, 'runtime.terminated', new Date(t0.getTime() + 90_000), 2, { reason: 'expired' }),
      ];
      expect(await post('/v1/events', { events })).toBeLessThan(300);
      expect(await post('/v1/reservations', { accountId: id, runtimeId: uid('rt'), ...SMALL })).toBe(201);
    }
    const wallets = async (url: string): Promise<unknown[]> => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query('SELECT account_id, grants_balance, holds_balance, consumed FROM wallets ORDER BY account_id')).rows;
      } finally {
        await client.end();
      }
    };
    const before = await wallets(db.url);
    expect(before).toHaveLength(2);
    expect(before.some((w) => (w as { consumed: string }).consumed !== '0')).toBe(true);

    const dump = join(dir, 'billing.dump');
    execFileSync('pg_dump', ['--format=custom', `--file=${dump}`, db.url]);
    await db.admin.query(`CREATE DATABASE ${restoredName}`);
    execFileSync('pg_restore', ['--no-owner', `--dbname=${restoredUrl}`, dump]);

    const build = resolve('dist');
    const verify = await runCli(build, ['audit', 'verify'], { DATABASE_URL: restoredUrl });
    expect(verify.code, verify.stderr).toBe(0);
    const reconcile = await runCli(build, ['ledger', 'reconcile'], { DATABASE_URL: restoredUrl });
    expect(reconcile.code, reconcile.stderr).toBe(0);
    expect(await wallets(restoredUrl)).toEqual(before);

    // The check can fail: a ledger balance changed behind the ledger's back is found.
    const client = new pg.Client({ connectionString: restoredUrl });
    await client.connect();
    await client.query('ALTER TABLE wallets DISABLE TRIGGER USER');
    await client.query(`UPDATE wallets SET grants_balance = grants_balance + 1, issued = issued - 1 WHERE account_id = $1`, [accounts[0]]);
    await client.end();
    const broken = await runCli(build, ['ledger', 'reconcile'], { DATABASE_URL: restoredUrl });
    expect(broken.code).toBe(1);
    expect(broken.stdout + broken.stderr).toContain(accounts[0]);
    expect(broken.stderr).toMatch(/ledger reconcile found \d+ discrepancies/);
  });
});

/**
 * pg_dump refuses a server newer than itself (the embedded PostgreSQL 18 of a run without
 * DATABASE_URL, against this machine's pg_dump 15): then the backup is taken on the machine's own
 * PostgreSQL, as an operator's pg_dump would be of a server of its version.
 */
async function dumpableServer(): Promise<string> {
  const dumpMajor = Number(/(\d+)\.\d+/.exec(execFileSync('pg_dump', ['--version'], { encoding: 'utf8' }))?.[1]);
  const testServer = inject('databaseUrl');
  const testMajor = await serverMajor(testServer);
  if (testMajor <= dumpMajor) return testServer;
  const machine = process.env.BACKUP_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const machineMajor = await serverMajor(machine).catch(() => Number.POSITIVE_INFINITY);
  if (machineMajor <= dumpMajor) return machine;
  throw new Error(
    `pg_dump ${dumpMajor} cannot dump the test server (PostgreSQL ${testMajor}), and no PostgreSQL ${dumpMajor} or older answers at ${machine}: set BACKUP_TEST_DATABASE_URL`,
  );
}

async function serverMajor(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ v: string }>("SELECT current_setting('server_version_num') AS v");
    return Math.floor(Number(rows[0]?.v) / 10_000);
  } finally {
    await client.end();
  }
}
