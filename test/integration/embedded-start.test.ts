import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { SMALL } from '../support/accounts';
import { uid } from '../support/app';
import { runCli } from '../support/cli';
import { freePort, startService, type ServiceProcess } from '../support/service-process';
import { serviceFetch } from '../support/openapi-check';

const ADMIN_KEY = 'embedded-start-admin-key-0123456789';

describe('starting on embedded defaults', () => {
  const dir = mkdtempSync(join(tmpdir(), 'billing-embedded-'));
  // As root, PostgreSQL runs as a `postgres` user, which must be able to reach the data folder.
  chmodSync(dir, 0o755);
  let service: ServiceProcess | undefined;
  let pgPort = 0;

  afterAll(async () => {
    await service?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves /health/ready with an embedded PostgreSQL and no Kafka, and says so in its log', async () => {
    // Empty values count as unset: no DATABASE_URL (embedded PostgreSQL), no KAFKA_BROKERS (HTTP only).
    pgPort = await freePort();
    const env: Record<string, string> = {
      EMBEDDED_PG_DIR: join(dir, 'pg'),
      EMBEDDED_PG_PORT: String(pgPort),
      LOG_LEVEL: 'info',
      BILLING_ADMIN_API_KEY: ADMIN_KEY,
    };
    service = await startService({ ...env, DATABASE_URL: '', KAFKA_BROKERS: '' });
    const ready = await serviceFetch(`http://127.0.0.1:${service.port}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { database: { ok: true } } });
    expect(service.output()).toContain(`data in ${join(dir, 'pg')}`);
    expect(service.output()).toContain('lifecycle events are taken over HTTP only');
  });

  it("names the console session's key and the error page's code in the access log, as an API request's", async () => {
    if (!service) throw new Error('the first test did not start the service');
    const base = `http://127.0.0.1:${service.port}`;
    const login = await fetch(`${base}/admin/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `key=${encodeURIComponent(ADMIN_KEY)}`,
      redirect: 'manual',
    });
    expect(login.status).toBe(303);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    expect((await fetch(`${base}/admin/accounts/acc_nobody_here`, { headers: { cookie } })).status).toBe(404);
    const keyId = /bootstrap admin API key (key_bootstrap_[0-9a-f]+) registered/.exec(service.output())?.[1];
    expect(keyId).toBeDefined();
    let line: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && !line; i++) {
      line = service
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.msg === 'request' && l.route === '/admin/accounts/:id' && l.status === 404);
      if (!line) await new Promise((r) => setTimeout(r, 100));
    }
    expect(line).toMatchObject({ keyId, code: 'DL_BILLING_NOT_FOUND' });
  });

  it('refuses to start on a bad configuration value, naming it', async () => {
    await expect(startService({ PORT: '', DATABASE_URL: 'mysql://nope', KAFKA_BROKERS: '' }, 20_000)).rejects.toThrow(/DATABASE_URL/);
  });

  it('gives up on an unreachable database after DATABASE_START_ATTEMPTS attempts, 3 s apart, with one startup failed line', async () => {
    const env = { PORT: '', DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nothing', KAFKA_BROKERS: '', DATABASE_START_ATTEMPTS: '2' };
    const output = await startService(env, 40_000).then(
      () => 'the service started',
      (error: Error) => error.message,
    );
    expect(output).toMatch(/service exited before it was ready/);
    expect(output.match(/"level":"fatal".*"msg":"startup failed: .*ECONNREFUSED/g)).toHaveLength(1);
    // Two attempts, each failure logged by @nestjs/typeorm (10 by default: 27 s).
    expect(output.match(/Unable to connect to the database\. Retrying \(\d+\)/g)).toHaveLength(2);
  });

  it("the CLI: reaches the running service's embedded database, answers --help, and tells usage, check and could-not-run apart", async () => {
    const build = resolve('dist');
    const embedded = { DATABASE_URL: '', EMBEDDED_PG_DIR: join(dir, 'pg'), EMBEDDED_PG_PORT: String(await freePort()) };
    const reconcile = await runCli(build, ['ledger', 'reconcile'], embedded);
    expect(reconcile.code, reconcile.stderr).toBe(0);
    expect(JSON.parse(reconcile.stdout)).toEqual({ ok: true, discrepancies: [] });
    const help = await runCli(build, ['audit', 'verify', '--help'], embedded);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: cli audit verify/);
    expect(help.stdout).toContain('3 could not run');
    expect((await runCli(build, ['ledger', 'reconcile', '--acount', 'x'], embedded)).code).toBe(2);
    const unreachable = await runCli(build, ['audit', 'verify'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nothing' });
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toMatch(/could not run audit verify: .*ECONNREFUSED/);
  });

  it('on SIGTERM answers every reservation in flight (201) before it stops its embedded PostgreSQL, then exits 0', async () => {
    if (!service) throw new Error('the first test did not start the service');
    const base = `http://127.0.0.1:${service.port}`;
    const headers = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
    const accounts = [uid('acc'), uid('acc'), uid('acc')];
    for (const id of accounts) {
      const created = await serviceFetch(`${base}/v1/accounts`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ id, kind: 'user', plan: 'enterprise', name: id }),
      });
      expect(created.status).toBe(201);
      const granted = await serviceFetch(`${base}/v1/admin/accounts/${id}/grants`, {
        method: 'POST',
        headers: { ...headers, 'idempotency-key': uid('grant') },
        body: JSON.stringify({ credits: '100', reason: 'shutdown test' }),
      });
      expect(granted.status).toBe(201);
    }
    // The wallets are locked from outside, so the 30 reservations are surely in flight (waiting on
    // the database) when SIGTERM arrives; the lock is released once the shutdown has begun.
    const blocker = new pg.Client({ connectionString: `postgres://postgres:postgres@127.0.0.1:${pgPort}/billing` });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE wallets IN EXCLUSIVE MODE');
    let answered = 0;
    const reservations = Array.from({ length: 30 }, (_, i) =>
      serviceFetch(`${base}/v1/reservations`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ accountId: accounts[i % 3], runtimeId: uid('rt'), ...SMALL }),
      }).then(async (r) => {
        answered += 1;
        return { status: r.status, body: await r.text() };
      }),
    );
    await new Promise((r) => setTimeout(r, 1_500));
    expect(answered).toBe(0);
    service.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1_000));
    // Shutting down: no new connection is accepted, and the database is still there for those in flight.
    await expect(fetch(`${base}/health/live`)).rejects.toThrow();
    expect(answered).toBe(0);
    await blocker.query('COMMIT');
    await blocker.end().catch(() => undefined);

    const answers = await Promise.all(reservations);
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 30 }, () => 201));
    expect(await service.exited, service.output().slice(-3000)).toEqual({ code: 0, signal: null });
    const lines = service
      .output()
      .split('\n')
      .filter((l) => l.includes('"msg":"stopped"'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ signal: 'SIGTERM', embeddedDatabase: true });
    // One access line per request (route template, status, ms, key id, request id), never the key,
    // and no line per mapped route at start.
    const access = service
      .output()
      .split('\n')
      .filter((l) => l.includes('"msg":"request"') && l.includes('"route":"/v1/reservations"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(access).toHaveLength(30);
    expect(access[0]).toMatchObject({
      level: 'info',
      method: 'POST',
      status: 201,
      ms: expect.any(Number),
      keyId: expect.any(String),
      reqId: expect.any(String),
      pid: service.child.pid,
    });
    expect(service.output()).not.toContain(ADMIN_KEY);
    expect(service.output()).not.toContain('Mapped {');
    // PostgreSQL was stopped by the service, not left running on the folder.
    expect(existsSync(join(dir, 'pg', 'postmaster.pid'))).toBe(false);
  });
});
