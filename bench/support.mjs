// What every benchmark script shares: the scratch database on DATABASE_URL's server, a free port,
// the machine line, PostgreSQL's own ceiling measured with pgbench, and the figures handed to
// bench/run.mjs (which prints them as one table at the end).
import { execFile, execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** CPU milliseconds each local process has used so far (/proc), by pid; pids not found are left out. */
export function cpuMsByPid(pids) {
  const cpu = new Map();
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      cpu.set(pid, (Number(fields[11]) + Number(fields[12])) * 10); // USER_HZ = 100
    } catch {
      // gone, or not on this machine
    }
  }
  return cpu;
}

/**
 * CPU so far of the PostgreSQL backends serving the database `client` (a pg client or a TypeORM
 * data source) is connected to (null when the server is not local): sample before and after, and subtract with cpuBetween.
 */
export async function backendCpuMs(client) {
  const result = await client.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`);
  const rows = Array.isArray(result) ? result : result.rows; // a TypeORM DataSource, or a pg client
  const cpu = cpuMsByPid(rows.map((r) => r.pid));
  return cpu.size > 0 ? cpu : null;
}

/** CPU used between two samples (a process gone meanwhile was idle; a new one counts whole). */
export function cpuBetween(before, after) {
  if (!before || !after) return null;
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/**
 * A database created on DATABASE_URL's server for this run: `{name, url, drop}`. `drop()` removes it
 * unless BENCH_KEEP is set; `reuse` names an existing database that is neither created nor dropped.
 */
export async function scratchDatabase(prefix, { reuse } = {}) {
  const name = reuse ?? `billing_bench_${prefix}_${process.pid}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  if (!reuse) await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      try {
        if (process.env.BENCH_KEEP || reuse) console.error(`kept database ${name}`);
        else await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** One line about the machine; the load average says how much of it other work was using. */
export function machineLine() {
  const load = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  return `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Node ${process.version}, load average ${load}, ${cpuReference()}`;
}

/**
 * One core's speed now, as a fixed piece of work (JSON round trips and SHA-256 of 1 KiB, 300 ms):
 * the same model of virtual machine can be twice as fast one day as another, so figures taken on
 * different days compare through this, not through the model name.
 */
export function cpuReference() {
  const block = JSON.stringify({
    id: 'ev_0123456789',
    type: 'runtime.heartbeat',
    accountId: 'acc_0123',
    seq: 1,
    data: { text: 'x'.repeat(900) },
  });
  let rounds = 0;
  const deadline = performance.now() + 300;
  while (performance.now() < deadline) {
    for (let i = 0; i < 100; i++)
      createHash('sha256')
        .update(JSON.stringify(JSON.parse(block)))
        .digest('hex');
    rounds += 100;
  }
  return `cpu reference ${Math.round(rounds / 0.3 / 1000)}k JSON+SHA-256 rounds/s on one core`;
}

// pgbench scripts mirroring the ledger's transactions on plain tables of the same shape (no triggers,
// no audit chain, no service code): what PostgreSQL itself commits of that work on this machine.
const SETUP = `
  DROP SCHEMA IF EXISTS pgb CASCADE;
  CREATE SCHEMA pgb;
  CREATE TABLE pgb.wallets (id int PRIMARY KEY, balance bigint NOT NULL, held bigint NOT NULL DEFAULT 0, version bigint NOT NULL DEFAULT 0);
  CREATE TABLE pgb.holds (id bigserial PRIMARY KEY, wallet_id int NOT NULL, amount bigint NOT NULL, charged bigint, status text NOT NULL DEFAULT 'reserved');
  CREATE TABLE pgb.transactions (id bigserial PRIMARY KEY, wallet_id int NOT NULL, kind text NOT NULL, idempotency_key text NOT NULL UNIQUE, created_at timestamptz NOT NULL DEFAULT now());
  CREATE TABLE pgb.entries (transaction_id bigint NOT NULL, line smallint NOT NULL, ledger_account text NOT NULL, amount bigint NOT NULL, PRIMARY KEY (transaction_id, line));
  CREATE TABLE pgb.runtimes (runtime_id text PRIMARY KEY, wallet_id int NOT NULL, hold_id bigint NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
`;
const HOLD = `
BEGIN;
SELECT balance, held FROM pgb.wallets WHERE id = :w FOR UPDATE;
INSERT INTO pgb.holds (wallet_id, amount) VALUES (:w, 1000000) RETURNING id AS hold_id \\gset
INSERT INTO pgb.transactions (wallet_id, kind, idempotency_key) VALUES (:w, 'hold', 'hold:' || :hold_id) RETURNING id AS tx \\gset
INSERT INTO pgb.entries VALUES (:tx, 1, 'available', -1000000), (:tx, 2, 'held', 1000000);
UPDATE pgb.wallets SET held = held + 1000000, version = version + 1 WHERE id = :w;
`;
export const PGBENCH_SCRIPTS = {
  /** A ledger hold then its settlement: two transactions, like one hold+settle pair. */
  pair: `\\set w random(1, :wallets)
${HOLD}COMMIT;
BEGIN;
SELECT balance, held FROM pgb.wallets WHERE id = :w FOR UPDATE;
UPDATE pgb.holds SET status = 'settled', charged = 400000 WHERE id = :hold_id;
INSERT INTO pgb.transactions (wallet_id, kind, idempotency_key) VALUES (:w, 'settle', 'settle:' || :hold_id) RETURNING id AS tx \\gset
INSERT INTO pgb.entries VALUES (:tx, 1, 'held', -1000000), (:tx, 2, 'revenue', 400000), (:tx, 3, 'available', 600000);
UPDATE pgb.wallets SET balance = balance - 400000, held = held - 1000000, version = version + 1 WHERE id = :w;
COMMIT;
`,
  /** A reservation: the hold and the runtime row in one transaction. */
  reservation: `\\set w random(1, :wallets)
${HOLD}INSERT INTO pgb.runtimes (runtime_id, wallet_id, hold_id, status) VALUES ('rt_' || :hold_id, :w, :hold_id, 'reserved');
COMMIT;
`,
};

/**
 * PostgreSQL's own rate for `script` (a key of PGBENCH_SCRIPTS) with `clients` connections on
 * `wallets` wallets for `seconds`, measured with pgbench in the database at `url` (tables in schema
 * pgb). Returns `{perSecond, latencyMs, failed, clients, wallets, seconds}`, or `{error}` when
 * pgbench is missing or fails (the figure is then printed without its ceiling).
 */
export async function pgbenchCeiling({ url, script, clients, wallets, seconds }) {
  const u = new URL(url);
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    await db.query(SETUP);
    await db.query(`INSERT INTO pgb.wallets (id, balance) SELECT i, 1000000000000000 FROM generate_series(1, $1) i`, [wallets]);
    await db.query('ANALYZE');
  } finally {
    await db.end();
  }
  const dir = mkdtempSync(join(os.tmpdir(), 'bench-pgbench-'));
  const file = join(dir, `${script}.sql`);
  writeFileSync(file, PGBENCH_SCRIPTS[script]);
  const args = [
    '-h',
    u.hostname,
    '-p',
    u.port || '5432',
    '-U',
    decodeURIComponent(u.username || 'postgres'),
    '-n',
    '-M',
    'prepared',
    '-f',
    file,
    '-D',
    `wallets=${wallets}`,
    '-c',
    String(clients),
    '-j',
    String(Math.min(clients, os.cpus().length)),
    '-T',
    String(Math.max(1, Math.round(seconds))),
    decodeURIComponent(u.pathname.slice(1)),
  ];
  try {
    const out = await new Promise((resolve, reject) => {
      execFile(
        'pgbench',
        args,
        { env: { ...process.env, ...(u.password ? { PGPASSWORD: decodeURIComponent(u.password) } : {}) }, maxBuffer: 16 * 2 ** 20 },
        (error, stdout, stderr) =>
          error ? reject(new Error(`pgbench: ${(stderr || error.message).trim().split('\n').slice(-3).join(' | ')}`)) : resolve(stdout),
      );
    });
    const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(out) ?? /tps = ([\d.]+)/.exec(out);
    if (!tps) throw new Error(`pgbench printed no tps: ${out.slice(-300)}`);
    const latency = /latency average = ([\d.]+) ms/.exec(out);
    const failed = /number of failed transactions: (\d+)/.exec(out);
    return {
      perSecond: Math.round(Number(tps[1])),
      latencyMs: latency ? Number(latency[1]) : null,
      failed: failed ? Number(failed[1]) : 0,
      clients,
      wallets,
      seconds,
    };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const fmt = (n) => (n === null || n === undefined || Number.isNaN(n) ? '—' : Math.round(n).toLocaleString('en-US'));
export const ratioOf = (value, ceiling) =>
  typeof value === 'number' && typeof ceiling === 'number' && ceiling > 0 ? Math.round((value / ceiling) * 1000) / 1000 : null;

/**
 * A headline figure: printed at once with its ceiling and their ratio, and handed to bench/run.mjs
 * (appended as a JSON line to BENCH_FIGURES_FILE) for the final table.
 * `value`/`ceiling` are numbers in `unit`; `valueText`/`ceilingText` override how they are shown.
 */
export function figure({ name, value, unit, valueText, ceiling = null, ceilingText, target, note }) {
  const ratio = ratioOf(value, ceiling);
  const row = {
    figure: name,
    value,
    unit,
    valueText: valueText ?? `${fmt(value)} ${unit}`,
    ceiling,
    ceilingText: ceilingText ?? (ceiling === null ? '—' : `${fmt(ceiling)} ${unit}`),
    ratio,
    target: target ?? '—',
    ...(note ? { note } : {}),
  };
  console.log(
    `${name}: ${row.valueText}; ceiling ${row.ceilingText}; ratio ${ratio ?? '—'}; target ${row.target}${note ? ` (${note})` : ''}`,
  );
  if (process.env.BENCH_FIGURES_FILE) appendFileSync(process.env.BENCH_FIGURES_FILE, `${JSON.stringify(row)}\n`);
  return row;
}

/** How a pgbench ceiling reads in a table cell. */
export function pgbenchText(c, unit) {
  if (!c || 'error' in c) return `— (pgbench: ${c?.error ?? 'not run'})`;
  return `${fmt(c.perSecond)} ${unit} (pgbench, ${c.clients} clients, ${fmt(c.wallets)} wallet${c.wallets === 1 ? '' : 's'})`;
}

/** The V8 flags the service is started with in production (package.json's start:prod, the Dockerfile). */
export const SERVICE_FLAGS = ['--max-semi-space-size=16', '--heap-growing-percent=50'];

/**
 * A child process that ends when the benchmark does, however it ends: a thrown error, Ctrl-C or a
 * SIGTERM (Node runs `exit` listeners for the first once the signals are turned into an exit).
 */
function endsWithThisProcess(child) {
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  child.once('exit', () => process.off('exit', kill));
  if (process.listenerCount('SIGINT') === 0) process.once('SIGINT', () => process.exit(130));
  if (process.listenerCount('SIGTERM') === 0) process.once('SIGTERM', () => process.exit(143));
}

/**
 * The service as a real process on `databaseUrl` (as `npm run start:prod` starts it), its topics
 * named after `tag`; resolves once it is ready. Returns `{service, port, base, adminKey}`.
 * BENCH_SERVICE_PROF=<dir> writes its V8 CPU profile there when it exits; BENCH_SERVICE_FLAGS
 * replaces its V8 flags.
 */
export async function startService({ databaseUrl, brokers, tag, pool, topic, env = {} }) {
  const port = await freePort();
  const adminKey = `bench-admin-${tag}-key-0000`;
  // The service's V8 flags as production starts it (package.json's start:prod, the Dockerfile);
  // BENCH_SERVICE_FLAGS (space-separated) replaces them, to compare others.
  const flags = [
    ...(process.env.BENCH_SERVICE_FLAGS?.split(' ').filter(Boolean) ?? SERVICE_FLAGS),
    ...(process.env.BENCH_SERVICE_PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_SERVICE_PROF] : []),
  ];
  const service = spawn(process.execPath, [...flags, 'dist/src/main.js'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      DATABASE_POOL_SIZE: String(pool),
      KAFKA_BROKERS: brokers,
      KAFKA_GROUP_ID: `bench-${tag}`,
      KAFKA_TOPIC_LIFECYCLE: topic,
      KAFKA_TOPIC_LIFECYCLE_DLQ: `${topic}.dlq`,
      KAFKA_TOPIC_COMMANDS: `bench.commands.${tag}`,
      KAFKA_TOPIC_NOTIFICATIONS: `bench.notifications.${tag}`,
      KAFKA_TOPIC_MEMBERSHIP: `bench.membership.${tag}`,
      BILLING_ADMIN_API_KEY: adminKey,
      CRON_ENABLED: 'false',
      LOG_LEVEL: 'error',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  endsWithThisProcess(service);
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const ok = await fetch(`${base}/health/ready`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    if (i > 300) throw new Error('service did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  return { service, port, base, adminKey };
}

/**
 * What a benchmark of the running service starts with: the Kafka brokers (KAFKA_BROKERS, or the
 * project's broker, started and left running), a scratch database `prefix`, the service on it with its
 * lifecycle topic `<topicPrefix>.<tag>`, and its HTTP caller. Returns
 * `{brokers, tag, topic, scratch, service, port, base, adminKey, call, stop}`; `stop()` ends the
 * service and drops the database.
 */
export async function benchService({ prefix, topicPrefix, pool }) {
  const brokers =
    process.env.KAFKA_BROKERS ??
    execFileSync('bash', ['scripts/kafka/kafka.sh', 'start'], { encoding: 'utf8' }).trim().split('\n').pop().split('=')[1];
  const tag = randomBytes(3).toString('hex');
  const topic = `${topicPrefix}.${tag}`;
  const scratch = await scratchDatabase(prefix);
  const started = await startService({ databaseUrl: scratch.url, brokers, tag, pool, topic });
  const stop = async () => {
    started.service.kill('SIGTERM');
    await new Promise((r) => started.service.once('exit', r));
    await scratch.drop();
  };
  return { brokers, tag, topic, scratch, ...started, call: httpCaller(started.port, started.adminKey), stop };
}

/** Accounts `ids` created on the Enterprise plan (no quotas), each granted `credits`; 16 at a time. */
export async function fundedAccounts(call, ids, credits, reason) {
  for (let i = 0; i < ids.length; i += 16) {
    await Promise.all(
      ids.slice(i, i + 16).map(async (id) => {
        await call('POST', '/v1/accounts', { id, kind: 'user', plan: 'enterprise' });
        const g = await call('POST', `/v1/admin/accounts/${id}/grants`, { credits, reason }, { 'idempotency-key': `${id}-funds` });
        if (g.status !== 201) throw new Error(`grant for ${id}: HTTP ${g.status} ${JSON.stringify(g.body)}`);
      }),
    );
  }
}

/**
 * `call(method, path, body, headers, timeoutMs)` → `{status, body}` on the service with the admin
 * key. The load generator shares the machine's cores with the service: node:http on kept-alive
 * connections costs it about a third of the CPU that fetch does per request (1.1-1.4 ms against 3.0-3.3 ms).
 */
export function httpCaller(port, adminKey) {
  const agent = new http.Agent({ keepAlive: true });
  return (method, path, body, headers = {}, timeoutMs = 15_000) =>
    new Promise((resolve, reject) => {
      const data = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request({
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: {
          authorization: `Bearer ${adminKey}`,
          'content-type': 'application/json',
          ...(data ? { 'content-length': Buffer.byteLength(data) } : {}),
          ...headers,
        },
      });
      const timer = setTimeout(
        () => req.destroy(Object.assign(new Error(`no answer in ${timeoutMs} ms`), { name: 'TimeoutError' })),
        timeoutMs,
      );
      req.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      req.on('response', (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode, body: text ? JSON.parse(text) : null });
        });
      });
      req.end(data);
    });
}

/** Resident memory of a local process now, in MiB (null when it is gone). */
export function rssMiB(pid) {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return kb ? Number(kb[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/**
 * The raw kafkajs consume rate of a topic's first `expected` messages: a fresh consumer group that
 * does nothing with them (the ceiling an event benchmark is set beside), in messages per second.
 */
export async function rawConsumeRate(kafka, topic, groupId, expected) {
  // The project's broker keeps 64 MiB per partition (scripts/kafka/kafka.sh): a long run's first
  // messages may be gone, and only what the topic still holds can be read.
  const admin = kafka.admin();
  await admin.connect();
  const held = (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
  await admin.disconnect();
  const want = Math.min(expected, held);
  const raw = kafka.consumer({ groupId, maxBytesPerPartition: 4 * 1024 * 1024 });
  await raw.connect();
  await raw.subscribe({ topic, fromBeginning: true });
  let count = 0;
  let first = 0;
  let last = 0;
  await raw.run({
    eachBatch: async ({ batch }) => {
      if (first === 0) first = performance.now();
      count += batch.messages.length;
      last = performance.now();
    },
  });
  // Until every message held is read, or 30 s without a new one (the first included; it then says how many it read).
  const started = performance.now();
  while (count < want && performance.now() - (last || started) < 30_000) await new Promise((r) => setTimeout(r, 20));
  await raw.disconnect();
  if (count < want) console.error(`raw consume of ${topic}: ${count} of ${want} messages read, then none for 30 s`);
  if (held < expected)
    console.error(`raw consume of ${topic}: ${expected - held} of ${expected} messages were past the broker's retention`);
  return count / ((last - first) / 1000);
}

/**
 * `rows` audit rows over the 90 days before `endMs` (26 s apart), 400 accounts (chains `acc_0` …
 * `acc_399`), a row in 500 dated 1 to 5 days before the rows written around it (a webhook retried for
 * days, a job run late). Row g is account acc_(g % 400)'s, its chain's seq g / 400 + 1, a hold's wallet
 * balances before and after. `db`: a pg client or a TypeORM data source.
 */
export async function seedAuditLog(db, rows, endMs) {
  await db.query(
    `INSERT INTO audit_log (chain, seq, at, actor, action, account_id, before, after, correlation_id, prev_hash, hash)
     SELECT 'acc_' || (g % 400), g / 400 + 1,
       to_timestamp($2::double precision) - make_interval(secs => ($1 - g) * 26)
         - CASE WHEN g % 500 = 0 THEN make_interval(days => 1 + (g / 500) % 5) ELSE interval '0' END,
       'key:bench', 'hold.created', 'acc_' || (g % 400),
       jsonb_build_object('total', '1000000', 'held', '0', 'available', '1000000', 'debt', '0'),
       jsonb_build_object('total', '1000000', 'held', '5000', 'available', '995000', 'debt', '0',
         'hold', jsonb_build_object('id', 'hold_' || g, 'amount', '5000', 'reference', 'rt_' || g)),
       'corr_' || g, md5(g::text) || md5((g + 1)::text), md5((g + 2)::text) || md5((g + 3)::text)
     FROM generate_series(1, $1) g`,
    [rows, endMs / 1000],
  );
}
