// Metering benchmarks, on the build (`npm run build` first, or `npm run bench`):
//   1. Lifecycle events applied per second end to end from Kafka, beside the raw kafkajs consume
//      rate of the same messages measured in the same run.
//   2. Reservations over HTTP: open loop at a fixed BENCH_RATE/s (achieved rate, p50/p99 of the
//      completed ones, how many timed out or failed; "not sustained" when the service falls behind),
//      then the peak with BENCH_CONCURRENCY requests in flight; both beside PostgreSQL's own rate for
//      a reservation-shaped transaction measured with pgbench in the same run (bench/support.mjs).
// The service runs as a real process on a scratch database of DATABASE_URL's server; Kafka is
// KAFKA_BROKERS or the project's broker (started and left running).
// Options: BENCH_EVENTS (200000), BENCH_RUNTIMES (2000), BENCH_SECONDS (10), BENCH_RATE (500),
// BENCH_CONCURRENCY (64), BENCH_POOL (20, the service's DATABASE_POOL_SIZE), BENCH_REQUEST_TIMEOUT_MS
// (10000: a fixed-rate request not answered by then counts as timed out), BENCH_WARMUP_SECONDS (5:
// the fixed rate is measured after this long at the same rate; its figures are printed too).
// BENCH_SERVICE_PROF=<dir> writes the service's V8 CPU profile there (node --cpu-prof) when it exits.
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import {
  backendCpuMs,
  benchService,
  cpuBetween,
  cpuMsByPid,
  figure,
  fmt,
  fundedAccounts,
  machineLine,
  pgbenchCeiling,
  pgbenchText,
  rawConsumeRate,
  rssMiB,
} from './support.mjs';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000);
const RUNTIMES = Number(process.env.BENCH_RUNTIMES ?? 2_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const RATE = Number(process.env.BENCH_RATE ?? 500);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const POOL = Number(process.env.BENCH_POOL ?? 20);
const REQUEST_TIMEOUT_MS = Number(process.env.BENCH_REQUEST_TIMEOUT_MS ?? 10_000);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
// BENCH_STREAM=settlement: the events are a settlement-only stream, each runtime started then
// terminated (BENCH_EVENTS = 2 × BENCH_RUNTIMES); by default heartbeats, pauses and resumes.
const SETTLEMENT_STREAM = process.env.BENCH_STREAM === 'settlement';
const { brokers, tag, topic, scratch, service, base, call, stop } = await benchService({
  prefix: 'metering',
  topicPrefix: 'bench.lifecycle',
  pool: POOL,
});
console.log(machineLine());
const ACCOUNTS = 50;
const accounts = Array.from({ length: ACCOUNTS }, (_, i) => `bench_${tag}_acc${i}`);
await fundedAccounts(call, accounts, '1000000.000000', 'bench');
const env = { variant: 'datalayer', environment: { name: 'python', sizeClass: 'small' } };
/** Runtime n of the benchmark: its id and account (the events phase uses the same). */
const runtimeId = (n) => `bench_${tag}_rt${n}`;
const reserveRuntime = (n, timeoutMs) =>
  call('POST', '/v1/reservations', { accountId: accounts[n % ACCOUNTS], runtimeId: runtimeId(n), ...env, minutes: 60 }, {}, timeoutMs);
let runtimeCounter = 0;
const reserve = (timeoutMs) => reserveRuntime(runtimeCounter++, timeoutMs);
const pct = (sorted, p) => (sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]);
const ms = (v) => (v === null ? '—' : v.toFixed(2));
/** Why a request did not complete (`call`'s own timeout counts as timed out; the rest by their error code). */
const failure = (error) => {
  const code = error?.name === 'TimeoutError' ? 'TimeoutError' : (error?.code ?? error?.name ?? 'error');
  return { code, timedOut: code === 'TimeoutError' };
};

// --- Reservations at a fixed rate, open loop: a request leaves when it is due, whatever is still in
// flight, so a service slower than the rate shows as a lower achieved rate and timeouts, not a crash.
async function openLoop(rate, seconds) {
  const run = {
    sent: 0,
    created: 0,
    firstDone: 0,
    lastDone: 0,
    refused: 0,
    timedOut: 0,
    failed: 0,
    reasons: {},
    latencies: [],
    perSecond: [],
  };
  const note = (reason) => (run.reasons[reason] = (run.reasons[reason] ?? 0) + 1);
  const start = performance.now();
  const inflight = [];
  for (let i = 0; i < rate * seconds; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t = performance.now();
    run.sent++;
    inflight.push(
      reserve(REQUEST_TIMEOUT_MS).then(
        (res) => {
          if (res.status === 201) {
            const now = performance.now();
            if (run.created++ === 0) run.firstDone = now;
            run.lastDone = now;
            run.latencies.push(now - t);
            (run.perSecond[Math.floor((t - start) / 1000)] ??= []).push(now - t);
          } else {
            run.refused++;
            note(`HTTP ${res.status}`);
          }
        },
        (error) => {
          const f = failure(error);
          if (f.timedOut) run.timedOut++;
          else run.failed++;
          note(f.code);
        },
      ),
    );
  }
  await Promise.all(inflight);
  run.latencies.sort((a, b) => a - b);
  // The rate at which reservations completed, first to last completion: what the service kept up with,
  // whatever the latency (which only shifts the completions).
  run.achieved = run.created > 1 ? (run.created - 1) / ((run.lastDone - run.firstDone) / 1000) : run.created / seconds;
  run.p50 = pct(run.latencies, 50);
  run.p99 = pct(run.latencies, 99);
  run.sustained = run.achieved >= 0.95 * rate && run.timedOut + run.failed + run.refused === 0;
  return run;
}
const bySecond = (run) => run.perSecond.map((l) => (l.sort((a, b) => a - b), `${ms(pct(l, 50))}/${ms(pct(l, 99))}`)).join(' ');

// The service was just started on a new database: in its first seconds of load V8 is still
// compiling the hot code, and the database's connections are still filling their caches. A warm-up
// at the same rate comes first; its figures are printed beside the measured ones.
// The service's resident memory over the reservation phases (warm-up, fixed rate, peak), every 100 ms.
let reservationsMaxRss = rssMiB(service.pid) ?? 0;
const reservationsRssTimer = setInterval(() => (reservationsMaxRss = Math.max(reservationsMaxRss, rssMiB(service.pid) ?? 0)), 100);
const warmup = WARMUP_SECONDS > 0 ? await openLoop(RATE, WARMUP_SECONDS) : null;
const fixed = await openLoop(RATE, SECONDS);
// Second by second (by when the request was sent), on stderr: where the slow ones were.
if (warmup) console.error(`warm-up at ${fmt(RATE)}/s, p50/p99 ms by second: ${bySecond(warmup)}`);
console.error(`fixed rate, p50/p99 ms by second: ${bySecond(fixed)}`);

// Requests given up on may still be running in the service: let it drain (its readiness check waits
// for a database connection behind them) before the peak, for at most 30 s.
for (const drainStart = performance.now(); performance.now() - drainStart < 30_000;) {
  const t = performance.now();
  await fetch(`${base}/health/ready`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
  if (performance.now() - t < 50) break;
  await new Promise((r) => setTimeout(r, 500));
}

// --- Reservations at peak: CONCURRENCY requests in flight, each sent when the previous one answered.
// CPU per reservation of the service, its database backends and this load generator (all on this machine).
const cpuProbe = new pg.Client({ connectionString: scratch.url });
await cpuProbe.connect();
const cpuSample = async () => ({
  service: cpuMsByPid([service.pid]),
  postgres: await backendCpuMs(cpuProbe),
  generator: process.cpuUsage(),
});
const cpu0 = await cpuSample();
let done = 0;
let peakErrors = 0;
const peakStart = performance.now();
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() - peakStart < SECONDS * 1000) {
      const res = await reserve().catch((error) => ({ status: failure(error).code }));
      if (res.status === 201) done++;
      else if (peakErrors++ < 3) console.error(`peak: reservation answered ${res.status}`);
    }
  }),
);
const peak = done / ((performance.now() - peakStart) / 1000);
const cpu1 = await cpuSample();
clearInterval(reservationsRssTimer);
const reservationsRssEnd = rssMiB(service.pid);
await cpuProbe.end();
const perReservation = (ms) => (ms === null || done === 0 ? null : Math.round((ms / done) * 100) / 100);
const peakCpu = {
  serviceMs: perReservation(cpuBetween(cpu0.service, cpu1.service)),
  postgresMs: perReservation(cpuBetween(cpu0.postgres, cpu1.postgres)),
  generatorMs: perReservation(
    (() => {
      const u = process.cpuUsage(cpu0.generator);
      return (u.user + u.system) / 1000;
    })(),
  ),
};

// PostgreSQL's own rate for a reservation-shaped transaction, with the service's connections.
const reservationCeiling = await pgbenchCeiling({
  url: scratch.url,
  script: 'reservation',
  clients: Math.min(CONCURRENCY, POOL),
  wallets: ACCOUNTS,
  seconds: SECONDS,
});

// --- Lifecycle events: RUNTIMES started runtimes, then heartbeats, pauses and resumes. Every one of
// them is reserved first, as the control plane does before a launch (the reservation phases may have
// left some out: requests that timed out, or fewer than RUNTIMES): the figure is the normal path, not
// runtimes started without a reservation (reserved on the fly or told to terminate, at every rebuild).
const q = new pg.Client({ connectionString: scratch.url });
await q.connect();
const ids = Array.from({ length: RUNTIMES }, (_, r) => runtimeId(r));
const { rows: alreadyReserved } = await q.query(`SELECT runtime_id FROM runtimes WHERE runtime_id = ANY($1) AND hold_id IS NOT NULL`, [
  ids,
]);
const reservedIds = new Set(alreadyReserved.map((r) => r.runtime_id));
const missing = ids.flatMap((id, r) => (reservedIds.has(id) ? [] : [r]));
for (let i = 0; i < missing.length; i += 16) {
  await Promise.all(
    missing.slice(i, i + 16).map(async (r) => {
      const res = await reserveRuntime(r);
      if (res.status !== 201 && res.status !== 200)
        throw new Error(`reserving ${runtimeId(r)} for the events: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    }),
  );
}
const kafka = new Kafka({ clientId: 'bench', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
const kadmin = kafka.admin();
await kadmin.connect();
await kadmin.createTopics({ topics: [{ topic, numPartitions: 4 }], waitForLeaders: true });
await kadmin.disconnect();
// Polls (every 50 ms, from now on) until every event is applied; resolves with the database's time then.
const appliedAll = (async () => {
  for (;;) {
    // Events applied: stored, or heartbeats counted by their runtimes (heartbeats are not stored).
    const {
      rows: [r],
    } = await q.query(`SELECT coalesce(sum(events_count), 0)::int AS n, clock_timestamp() AS at FROM runtimes`);
    if (r.n >= EVENTS) return { end: r.at };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
})();
// CPU of the service and of its database's backends over the events phase (from just before the
// messages are sent to the poll that found them all applied), and the service's resident memory.
const eventsCpu0 = { service: cpuMsByPid([service.pid]), postgres: await backendCpuMs(q) };
let eventsMaxRss = rssMiB(service.pid) ?? 0;
const rssTimer = setInterval(() => (eventsMaxRss = Math.max(eventsMaxRss, rssMiB(service.pid) ?? 0)), 100);
const producer = kafka.producer();
await producer.connect();
const t0 = Date.now() - 3600_000;
const messages = [];
for (let i = 0; i < EVENTS; i++) {
  const r = i % RUNTIMES;
  const round = Math.floor(i / RUNTIMES);
  const type = SETTLEMENT_STREAM
    ? ['runtime.started', 'runtime.terminated'][Math.min(round, 1)]
    : round === 0
      ? 'runtime.started'
      : round % 10 === 5
        ? 'runtime.paused'
        : round % 10 === 6
          ? 'runtime.resumed'
          : 'runtime.heartbeat';
  const accountId = accounts[r % ACCOUNTS];
  messages.push({
    key: accountId,
    value: JSON.stringify({
      id: `ev_${tag}_${i}`,
      type,
      occurredAt: new Date(t0 + round * 1000).toISOString(),
      accountId,
      runtimeId: runtimeId(r),
      seq: round + 1,
      data: type === 'runtime.terminated' ? { reason: 'user' } : {},
    }),
  });
}
// Sends of 2,000: a send is one record batch per partition, and the accounts' keys can put most of a
// send in one partition, past the broker's 1 MB batch limit (MESSAGE_TOO_LARGE) with 10,000.
for (let i = 0; i < messages.length; i += 2_000) await producer.send({ topic, messages: messages.slice(i, i + 2_000) });
await producer.disconnect();

// Raw kafkajs consume rate of the same messages (a fresh group that does nothing with them).
const rawRate = await rawConsumeRate(kafka, topic, `bench-raw-${tag}`, EVENTS);

// End to end: from the start of the first transaction that applied events (the service consumes as
// the messages arrive) to the poll that found them all applied, both on the database's clock. (The
// spread of received_at alone leaves out the last chunk's own transaction, which on a small run is
// most of the work.)
const { end: appliedAt } = await appliedAll;
clearInterval(rssTimer);
const eventsCpu1 = { service: cpuMsByPid([service.pid]), postgres: await backendCpuMs(q) };
const eventsRssEnd = rssMiB(service.pid);
// Per runtime settled (the settlement stream) or per event (the lifecycle stream).
const eventsUnits = SETTLEMENT_STREAM ? RUNTIMES : EVENTS;
const perUnit = (ms) => (ms === null ? '—' : (ms / eventsUnits).toFixed(3));
const eventsCpu = {
  service: perUnit(cpuBetween(eventsCpu0.service, eventsCpu1.service)),
  postgres: perUnit(cpuBetween(eventsCpu0.postgres, eventsCpu1.postgres)),
};
const {
  rows: [span],
} = await q.query(`SELECT extract(epoch FROM $1::timestamptz - min(received_at)) AS s FROM runtime_events`, [appliedAt]);
const e2e = EVENTS / Number(span.s);
await q.end();

await stop();

const reservationCeilingValue = 'error' in reservationCeiling ? null : reservationCeiling.perSecond;
const lost = fixed.timedOut + fixed.failed + fixed.refused;
figure({
  name: `reservations at a fixed ${fmt(RATE)}/s (open loop, ${SECONDS} s)`,
  value: Math.round(fixed.achieved),
  unit: 'reservations/s',
  valueText:
    `${fixed.sustained ? 'sustained' : 'not sustained'}: ${fmt(fixed.achieved)}/s achieved, p50 ${ms(fixed.p50)} ms, p99 ${ms(fixed.p99)} ms of ${fmt(fixed.created)} completed; ` +
    `${fmt(fixed.timedOut)} timed out, ${fmt(fixed.failed + fixed.refused)} failed of ${fmt(fixed.sent)} sent` +
    (lost > 0
      ? ` (${Object.entries(fixed.reasons)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')})`
      : '') +
    (warmup ? `; after a ${WARMUP_SECONDS}-s warm-up at the same rate (p50 ${ms(warmup.p50)} ms, p99 ${ms(warmup.p99)} ms)` : ''),
  ceiling: reservationCeilingValue,
  ceilingText: pgbenchText(reservationCeiling, 'tx/s'),
  target: `p99 ≤ 10 ms at 500/s`,
});
figure({
  name: `reservations at peak (${CONCURRENCY} in flight)`,
  value: Math.round(peak),
  unit: 'reservations/s',
  valueText:
    `${fmt(peak)} reservations/s${peakErrors > 0 ? ` (${peakErrors} failed)` : ''}; CPU per reservation: service ${peakCpu.serviceMs ?? '—'} ms, ` +
    `PostgreSQL ${peakCpu.postgresMs ?? '—'} ms, load generator ${peakCpu.generatorMs ?? '—'} ms; ` +
    `service RSS max ${fmt(reservationsMaxRss)} MiB over the reservation phases, ${fmt(reservationsRssEnd)} MiB after them`,
  ceiling: reservationCeilingValue,
  ceilingText: pgbenchText(reservationCeiling, 'tx/s'),
  target: '≥ 2,000/s',
});
figure({
  name: `${SETTLEMENT_STREAM ? 'settlement-only stream (started + terminated)' : 'lifecycle events'} applied end to end from Kafka (${fmt(EVENTS)} events, ${fmt(RUNTIMES)} runtimes)`,
  value: Math.round(e2e),
  unit: 'events/s',
  valueText:
    `${fmt(e2e)} events/s; CPU per ${SETTLEMENT_STREAM ? 'runtime settled' : 'event'}: service ${eventsCpu.service} ms, ` +
    `PostgreSQL ${eventsCpu.postgres} ms; service RSS max ${fmt(eventsMaxRss)} MiB, ${fmt(eventsRssEnd)} MiB at the end ` +
    `(${fmt(missing.length)} of the runtimes reserved just before the events: the reservation phases had not)`,
  ceiling: Math.round(rawRate),
  ceilingText: `${fmt(rawRate)} events/s (raw kafkajs consume of the same messages)`,
  target: SETTLEMENT_STREAM ? '≥ 10,000/s' : '≥ 20,000/s',
});
process.exit(0);
