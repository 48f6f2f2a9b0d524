// Metering benchmarks, on the build (`npm run build` first, or `npm run bench`):
//   1. Lifecycle events applied per second end to end from Kafka, beside the raw kafkajs consume
//      rate of the same messages measured in the same run.
//   2. Reservation latency (p50/p99) at a fixed 500 requests/s over HTTP, and peak reservations/s.
// The service runs as a real process on a scratch database of DATABASE_URL's server; Kafka is
// KAFKA_BROKERS or the project's broker (started and left running).
// Options: BENCH_EVENTS (200000), BENCH_RUNTIMES (2000), BENCH_SECONDS (10), BENCH_RATE (500), BENCH_CONCURRENCY (32).
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { createServer } from 'node:net';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000);
const RUNTIMES = Number(process.env.BENCH_RUNTIMES ?? 2_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const RATE = Number(process.env.BENCH_RATE ?? 500);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const server = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const brokers = process.env.KAFKA_BROKERS ?? execFileSync('bash', ['scripts/kafka/kafka.sh', 'start'], { encoding: 'utf8' }).trim().split('\n').pop().split('=')[1];
const tag = randomBytes(3).toString('hex');
const topic = `bench.lifecycle.${tag}`;
const adminKey = `bench-admin-${tag}-key-0000`;

const db = `billing_bench_metering_${process.pid}`;
const admin = new pg.Client({ connectionString: server });
await admin.connect();
await admin.query(`CREATE DATABASE ${db}`);
const url = new URL(server);
url.pathname = `/${db}`;

const port = await new Promise((resolve) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const service = spawn(process.execPath, ['dist/src/main.js'], {
  env: {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: url.toString(),
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
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;
for (let i = 0; ; i++) {
  const ok = await fetch(`${base}/health/ready`).then((r) => r.ok).catch(() => false);
  if (ok) break;
  if (i > 300) throw new Error('service did not start');
  await new Promise((r) => setTimeout(r, 200));
}
const call = async (method, path, body, headers = {}) => {
  const res = await fetch(`${base}${path}`, {
    signal: AbortSignal.timeout(15_000),
    method,
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
};
const ACCOUNTS = 50;
const accounts = Array.from({ length: ACCOUNTS }, (_, i) => `bench_${tag}_acc${i}`);
for (const id of accounts) {
  await call('POST', '/v1/accounts', { id, kind: 'user', plan: 'enterprise' });
  await call('POST', `/v1/admin/accounts/${id}/grants`, { credits: '1000000.000000', reason: 'bench' }, { 'idempotency-key': `${id}-funds` });
}
const env = { variant: 'datalayer', environment: { name: 'python', sizeClass: 'small' } };
let runtimeCounter = 0;
const reserve = () => {
  const n = runtimeCounter++;
  return call('POST', '/v1/reservations', { accountId: accounts[n % ACCOUNTS], runtimeId: `bench_${tag}_rt${n}`, ...env, minutes: 60 });
};
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

// --- Reservations: fixed rate, then peak.
const latencies = [];
const fixedStart = performance.now();
const inflight = [];
for (let i = 0; i < RATE * SECONDS; i++) {
  const due = fixedStart + (i * 1000) / RATE;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const t = performance.now();
  inflight.push(reserve().then((res) => {
    if (res.status !== 201) throw new Error(`reservation ${res.status} ${JSON.stringify(res.body)}`);
    latencies.push(performance.now() - t);
  }));
}
await Promise.all(inflight);
const fixedElapsed = (performance.now() - fixedStart) / 1000;
latencies.sort((a, b) => a - b);

let done = 0;
const peakStart = performance.now();
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() - peakStart < SECONDS * 1000) {
      const res = await reserve();
      if (res.status !== 201) throw new Error(`reservation ${res.status}`);
      done++;
    }
  }),
);
const peak = done / ((performance.now() - peakStart) / 1000);

// --- Lifecycle events: RUNTIMES started runtimes, then heartbeats, pauses and resumes.
const kafka = new Kafka({ clientId: 'bench', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
const kadmin = kafka.admin();
await kadmin.connect();
await kadmin.createTopics({ topics: [{ topic, numPartitions: 4 }], waitForLeaders: true });
await kadmin.disconnect();
const producer = kafka.producer();
await producer.connect();
const t0 = Date.now() - 3600_000;
const messages = [];
for (let i = 0; i < EVENTS; i++) {
  const r = i % RUNTIMES;
  const round = Math.floor(i / RUNTIMES);
  const type = round === 0 ? 'runtime.started' : round % 10 === 5 ? 'runtime.paused' : round % 10 === 6 ? 'runtime.resumed' : 'runtime.heartbeat';
  const accountId = accounts[r % ACCOUNTS];
  messages.push({
    key: accountId,
    value: JSON.stringify({ id: `ev_${tag}_${i}`, type, occurredAt: new Date(t0 + round * 1000).toISOString(), accountId, runtimeId: `bench_${tag}_rt${r}`, seq: round + 1, data: {} }),
  });
}
for (let i = 0; i < messages.length; i += 10_000) await producer.send({ topic, messages: messages.slice(i, i + 10_000) });
await producer.disconnect();

// Raw kafkajs consume rate of the same messages (a fresh group that does nothing with them).
const raw = kafka.consumer({ groupId: `bench-raw-${tag}`, maxBytesPerPartition: 4 * 1024 * 1024 });
await raw.connect();
await raw.subscribe({ topic, fromBeginning: true });
let rawCount = 0;
let rawFirst = 0;
let rawLast = 0;
await raw.run({
  eachBatch: async ({ batch }) => {
    if (rawFirst === 0) rawFirst = performance.now();
    rawCount += batch.messages.length;
    rawLast = performance.now();
  },
});
while (rawCount < EVENTS) await new Promise((r) => setTimeout(r, 20));
await raw.disconnect();
const rawRate = EVENTS / ((rawLast - rawFirst) / 1000);

// End to end: the service has been consuming since the messages arrived; time first to last applied.
const q = new pg.Client({ connectionString: url.toString() });
await q.connect();
let applied = 0;
const sample = [];
for (;;) {
  applied = (await q.query(`SELECT count(*)::int AS n FROM runtime_events`)).rows[0].n;
  sample.push([performance.now(), applied]);
  if (applied >= EVENTS) break;
  await new Promise((r) => setTimeout(r, 100));
}
const { rows: [span] } = await q.query(`SELECT extract(epoch FROM max(received_at) - min(received_at)) AS s FROM runtime_events`);
const e2e = EVENTS / Number(span.s);
await q.end();

service.kill('SIGTERM');
await new Promise((r) => service.once('exit', r));
await admin.query(`DROP DATABASE ${db} WITH (FORCE)`);
await admin.end();

const f = (n) => Math.round(n).toLocaleString('en-US');
console.log(`machine: ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.cpus()[0]?.model ?? ''}, Node ${process.version}`);
console.log(`reservations at ${RATE}/s for ${SECONDS}s: p50 ${pct(latencies, 50).toFixed(2)} ms, p99 ${pct(latencies, 99).toFixed(2)} ms (achieved ${f(latencies.length / fixedElapsed)}/s)`);
console.log(`reservations at peak (${CONCURRENCY} concurrent): ${f(peak)}/s`);
console.log(`lifecycle events end to end from Kafka: ${f(e2e)}/s (${f(EVENTS)} events, ${RUNTIMES} runtimes)`);
console.log(`raw kafkajs consume of the same messages: ${f(rawRate)}/s; ratio ${(e2e / rawRate).toFixed(2)}`);
process.exit(0);
