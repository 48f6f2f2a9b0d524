// CPU cost benchmark, on the build (`npm run bench`, or `bash scripts/node.sh 24 bench/cpu-cost.mjs`):
// the service's CPU per reservation and per settled runtime, and PostgreSQL's per settled runtime,
// on a fixed workload sent at a steady pace, so that two builds (or two Node.js versions) can be
// compared on a shared host where the throughput figures of metering.mjs and fleet.mjs move by
// ±20 % from run to run.
//   1. BENCH_RUNTIMES (8000) reservations over HTTP, 64 in flight;
//   2. their `runtime.started` then their `runtime.terminated` posted to /v1/events (the same
//      ingestion and settlement as from Kafka, without the consumer), BENCH_BATCH (500) per request,
//      one request at a time.
// BENCH_ROUNDS (4) rounds on the same service; the figures are the median of the rounds after the
// first (which warms the JIT up), each round's figures printed too: on a shared host a round can
// still read 40 % above the others, so compare medians of several runs. CPU is read from /proc.
import pg from 'pg';
import { backendCpuMs, benchService, cpuBetween, cpuMsByPid, figure, fundedAccounts, machineLine } from './support.mjs';

const RUNTIMES = Number(process.env.BENCH_RUNTIMES ?? 8_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 500);
const ROUNDS = Math.max(2, Number(process.env.BENCH_ROUNDS ?? 4));
const IN_FLIGHT = 64;

const { tag, call, stop, service, scratch } = await benchService({ prefix: 'cpucost', topicPrefix: 'bench.lifecycle', pool: 20 });
console.log(machineLine());
const db = new pg.Client({ connectionString: scratch.url });
await db.connect();
const accounts = Array.from({ length: 50 }, (_, i) => `bench_${tag}_acc${i}`);
await fundedAccounts(call, accounts, '1000000.000000', 'bench');
const env = { variant: 'datalayer', environment: { name: 'python', sizeClass: 'small' } };
const serviceCpuMs = () => cpuMsByPid([service.pid]).get(service.pid);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function reserveAll(ids) {
  for (let i = 0; i < ids.length; i += IN_FLIGHT) {
    await Promise.all(
      ids.slice(i, i + IN_FLIGHT).map(async (runtimeId, k) => {
        const r = await call('POST', '/v1/reservations', { accountId: accounts[(i + k) % 50], runtimeId, ...env, minutes: 60 });
        if (r.status !== 201) throw new Error(`reservation: HTTP ${r.status} ${JSON.stringify(r.body)}`);
      }),
    );
  }
}

async function postAll(events) {
  for (let i = 0; i < events.length; i += BATCH) {
    const r = await call('POST', '/v1/events', { events: events.slice(i, i + BATCH) });
    if (r.status >= 300) throw new Error(`events: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 400)}`);
  }
}

const rounds = [];
const start = Date.parse('2026-12-05T00:00:00.000Z');
try {
  for (let round = 0; round < ROUNDS; round++) {
    const ids = Array.from({ length: RUNTIMES }, (_, i) => `bench_${tag}_r${round}_rt${i}`);
    const reserveCpu = serviceCpuMs();
    await reserveAll(ids);
    const perReservation = (serviceCpuMs() - reserveCpu) / RUNTIMES;
    const event = (i, seq, type, at, data) => ({
      id: `${ids[i]}_e${seq}`,
      type,
      occurredAt: new Date(at).toISOString(),
      accountId: accounts[i % 50],
      runtimeId: ids[i],
      seq,
      ...(data ? { data } : {}),
    });
    const started = ids.map((_, i) => event(i, 0, 'runtime.started', start + i));
    const terminated = ids.map((_, i) => event(i, 1, 'runtime.terminated', start + i + 600_000, { reason: 'user' }));
    const pgBefore = await backendCpuMs(db);
    const settleCpu = serviceCpuMs();
    await postAll(started);
    await postAll(terminated);
    const perSettled = (serviceCpuMs() - settleCpu) / RUNTIMES;
    const pgPerSettled = cpuBetween(pgBefore, await backendCpuMs(db)) / RUNTIMES;
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM runtimes WHERE runtime_id = ANY($1) AND status = 'settled'`, [ids]);
    if (rows[0].n !== RUNTIMES) throw new Error(`round ${round}: ${rows[0].n} of ${RUNTIMES} runtimes settled`);
    rounds.push({ perReservation, perSettled, pgPerSettled });
    console.log(
      `round ${round + 1}${round === 0 ? ' (warm-up)' : ''}: service ${perReservation.toFixed(3)} ms per reservation, ` +
        `${perSettled.toFixed(3)} ms per settled runtime; PostgreSQL ${pgPerSettled.toFixed(3)} ms per settled runtime`,
    );
  }
} finally {
  await db.end();
  await stop();
}

const warm = rounds.slice(1);
const note = `median of ${warm.length} rounds of ${RUNTIMES.toLocaleString('en-US')} after a warm-up round; ${process.version}`;
figure({
  name: 'service CPU per reservation (64 in flight)',
  value: median(warm.map((r) => r.perReservation)),
  unit: 'ms',
  valueText: `${median(warm.map((r) => r.perReservation)).toFixed(3)} ms`,
  target: '≤ 0.33 ms (3,000/s on one core)',
  note,
});
figure({
  name: 'service CPU per settled runtime (started + terminated over HTTP)',
  value: median(warm.map((r) => r.perSettled)),
  unit: 'ms',
  valueText: `${median(warm.map((r) => r.perSettled)).toFixed(3)} ms; PostgreSQL ${median(warm.map((r) => r.pgPerSettled)).toFixed(3)} ms`,
  target: '≤ 0.2 ms (10,000 events/s on one core)',
  note,
});
