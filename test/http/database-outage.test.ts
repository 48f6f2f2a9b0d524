import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, SMALL } from '../support/accounts';
import { startApp, startAppOnFreshDatabase, uid, type FreshHarness } from '../support/app';
import { poolOf } from '../../src/common/database/pool';
import type { FreshDatabase } from '../support/fresh-database';
import { sample } from '../support/prometheus-text';

/** The database refusing connections while the service runs: what clients are told, and the recovery. */
describe('a database outage', () => {
  let db: FreshDatabase;
  let h: FreshHarness;
  let admin: string;
  let cp: string;

  beforeAll(async () => {
    h = await startAppOnFreshDatabase('outage');
    db = h.db;
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(async () => {
    await db.admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`);
    await h.close();
  });

  const cut = async () => {
    await db.admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`);
    await db.admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [
      db.name,
    ]);
  };

  it('answers 503 DL_BILLING_UNAVAILABLE (retry after 1 s), not a 500, keeps the last figures in /metrics, and serves again once the database is back', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    expect((await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: uid('rt'), ...SMALL } })).status).toBe(
      201,
    );
    expect((await h.request('POST', '/v1/admin/jobs/ledger-reconcile/run', { key: admin })).body.ran).toBe(true);
    const session = await h.consoleSession(admin);
    const scrape = async () => String((await h.request('GET', '/metrics')).body);
    const before = await scrape();
    const succeeded = { job_name: 'ledger-reconcile' };
    expect(sample(before, 'dl_billing_database_up')).toBe(1);
    expect(sample(before, 'dl_billing_open_holds')).toBeGreaterThan(0);
    expect(sample(before, 'dl_billing_job_last_success_timestamp_seconds', succeeded)).toBeGreaterThan(0);
    await cut();
    // The database's gauges keep their last values (no false 0, no job series gone); up says 0.
    const during = await scrape();
    expect(sample(during, 'dl_billing_database_up')).toBe(0);
    expect(sample(during, 'dl_billing_open_holds')).toBe(sample(before, 'dl_billing_open_holds'));
    expect(sample(during, 'dl_billing_job_last_success_timestamp_seconds', succeeded)).toBe(
      sample(before, 'dl_billing_job_last_success_timestamp_seconds', succeeded),
    );
    const wallet = await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin });
    const launch = await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: uid('rt'), ...SMALL } });
    for (const answer of [wallet, launch]) {
      expect(answer.status).toBe(503);
      expect(answer.body.error).toMatchObject({ code: 'DL_BILLING_UNAVAILABLE', retryAfterSeconds: 1 });
      expect(answer.headers['retry-after']).toBe('1');
    }
    // The admin console answers a page with the same code and wait, not the API's JSON.
    const page = await h.app.inject({ method: 'GET', url: `/admin/accounts/${accountId}`, headers: { cookie: session } });
    expect(page.statusCode).toBe(503);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['retry-after']).toBe('1');
    expect(page.body).toMatch(/The database is unavailable.*DL_BILLING_UNAVAILABLE/s);
    const ready = await h.request('GET', '/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.checks.database.ok).toBe(false);

    await db.admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`);
    expect((await h.request('GET', '/health/ready')).status).toBe(200);
    const again = await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: uid('rt'), ...SMALL } });
    expect(again.status).toBe(201);
  });

  it('answers readiness 503 within about 2 s when the database stops answering (a frozen server or network), and 200 once it answers again', async () => {
    // A TCP proxy in front of the database that can stop passing bytes, as a frozen link does.
    const target = new URL(db.url);
    let frozen = false;
    const sockets = new Set<net.Socket>();
    const proxy = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
      if (frozen) [client, upstream].forEach((s) => s.pause());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const via = new URL(db.url);
    via.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
    const behind = await startApp({ env: { DATABASE_URL: via.toString() } });
    try {
      expect((await behind.request('GET', '/health/ready')).status).toBe(200);
      frozen = true;
      for (const s of sockets) s.pause();
      const started = Date.now();
      const ready = await behind.request('GET', '/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.checks.database).toEqual({ ok: false, detail: 'no answer within 2000 ms' });
      expect(Date.now() - started).toBeLessThan(4_000);
      frozen = false;
      for (const s of sockets) s.resume();
      expect((await behind.request('GET', '/health/ready')).status).toBe(200);
    } finally {
      frozen = false;
      for (const s of sockets) s.resume();
      await behind.close();
      await new Promise((resolve) => proxy.close(resolve));
      for (const s of sockets) s.destroy();
    }
  });

  it('lives through the loss of a connection it holds checked out (a terminated backend), and serves on', async () => {
    const pool = poolOf(h.ds);
    const held = await pool.connect();
    const { pid } = (await held.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!;
    await db.admin.query('SELECT pg_terminate_backend($1)', [pid]);
    // The termination reaches the held client as an 'error' event: the process must not end on it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await expect(held.query('SELECT 1')).rejects.toThrow();
    held.release(true);
    expect((await h.request('GET', '/health/ready')).status).toBe(200);
  });
});
