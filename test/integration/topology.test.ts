import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { SMALL } from '../support/accounts';
import { uid } from '../support/app';
import { freePort } from '../support/service-process';
import { serviceFetch } from '../support/openapi-check';

const ADMIN_KEY = 'topology-admin-key-0123456789abcdef';

/**
 * scripts/topology.sh, the compose topology without Docker, started as an operator would: its own
 * Kafka broker on a port of its own, the service on a fresh database; then SIGTERM, and the order
 * of the shutdown.
 */
describe('scripts/topology.sh', () => {
  const kafkaDir = mkdtempSync(join(tmpdir(), 'billing-topology-kafka-'));
  const database = `billing_topology_${process.pid}_${Date.now()}`;
  const server = new URL(inject('databaseUrl'));
  let script: ChildProcess | undefined;
  let env: Record<string, string> = {};

  afterAll(async () => {
    if (script && script.exitCode === null) {
      script.kill('SIGTERM');
      await new Promise((r) => script!.once('exit', r));
    }
    // Whatever happened above, no broker is left running on the test's data folder.
    await new Promise((r) => execFile('bash', ['scripts/kafka/kafka.sh', 'stop'], { env: { ...process.env, ...env } }, r));
    rmSync(kafkaDir, { recursive: true, force: true });
    const admin = new pg.Client({ connectionString: server.toString() });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  });

  it('starts the broker and the service, serves a reservation, and on SIGTERM drains the service, then stops the broker, exit 0', async () => {
    const admin = new pg.Client({ connectionString: server.toString() });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.end();
    const url = new URL(server);
    url.pathname = `/${database}`;

    const [kafkaPort, controllerPort, port] = [await freePort(), await freePort(), await freePort()];
    // Never the shared broker's ports (39192) nor the script's default (39092).
    expect([39192, 39092, 39093, 39193]).not.toContain(kafkaPort);
    env = { KAFKA_PORT: String(kafkaPort), KAFKA_CONTROLLER_PORT: String(controllerPort), KAFKA_DATA_DIR: kafkaDir };
    script = spawn('bash', ['scripts/topology.sh'], {
      env: {
        ...process.env,
        ...env,
        DATABASE_URL: url.toString(),
        KAFKA_BROKERS: '',
        PORT: String(port),
        BILLING_ADMIN_API_KEY: ADMIN_KEY,
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    script.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    script.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
      script!.once('exit', (code, signal) => r({ code, signal })),
    );

    const base = `http://127.0.0.1:${port}`;
    // Ready (200), or the script ended (-1): either way the poll stops, and a failure shows the log.
    const readiness = await expect
      .poll(
        () =>
          script!.exitCode !== null
            ? -1
            : fetch(`${base}/health/ready`)
                .then((r) => r.status)
                .catch(() => 0),
        { timeout: 150_000, interval: 500 },
      )
      .toSatisfy((status: number) => status === 200 || status === -1)
      .then(() => (script!.exitCode === null ? 'ready' : `exited ${script!.exitCode}`))
      .catch((error: Error) => error.message);
    expect(readiness, `scripts/topology.sh's output:\n${log.slice(-4000)}`).toBe('ready');
    const ready = (await (await serviceFetch(`${base}/health/ready`)).json()) as { checks: { kafka: { ok: boolean; detail: string } } };
    expect(ready.checks.kafka).toEqual({ ok: true, detail: `connected to 127.0.0.1:${kafkaPort}` });

    const headers = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
    const account = uid('acc');
    expect(
      (
        await serviceFetch(`${base}/v1/accounts`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ id: account, kind: 'user', plan: 'enterprise', name: account }),
        })
      ).status,
    ).toBe(201);
    const grant = await serviceFetch(`${base}/v1/admin/accounts/${account}/grants`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': uid('grant') },
      body: JSON.stringify({ credits: '10', reason: 'topology test' }),
    });
    expect(grant.status).toBe(201);
    const reservation = await serviceFetch(`${base}/v1/reservations`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ accountId: account, runtimeId: uid('rt'), ...SMALL }),
    });
    expect(reservation.status, await reservation.clone().text()).toBe(201);
    const wallet = (await (await serviceFetch(`${base}/v1/accounts/${account}/wallet`, { headers })).json()) as { held: string };
    expect(wallet.held).not.toBe('0.000000');

    script.kill('SIGTERM');
    expect(await exited, log.slice(-3000)).toEqual({ code: 0, signal: null });
    const lines = log.split('\n');
    const serviceStopped = lines.findIndex((l) => l.includes('"msg":"stopped"') && l.includes('"signal":"SIGTERM"'));
    const brokerStopped = lines.findIndex((l) => /^kafka\.sh: stopped \(pid \d+\)/.test(l));
    expect(serviceStopped, log.slice(-3000)).toBeGreaterThanOrEqual(0);
    expect(brokerStopped, log.slice(-3000)).toBeGreaterThan(serviceStopped);
    // Both are gone: the API and the broker's port refuse connections.
    await expect(fetch(`${base}/health/live`)).rejects.toThrow();
    const status = await new Promise<number>((r) =>
      execFile('bash', ['scripts/kafka/kafka.sh', 'status'], { env: { ...process.env, ...env } }, (error) =>
        r(error ? Number(error.code) : 0),
      ),
    );
    expect(status).toBe(1);
    // A broker's first start (storage format, a JVM warming up) on a loaded machine: more than the default.
  }, 240_000);
});
