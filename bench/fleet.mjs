// A fleet in steady state (on the build: `npm run build` first, or `npm run bench`): N runtimes
// running at once, each heartbeating every 30 s, living an exponentially distributed time of mean L,
// some pausing; launches arrive as a Poisson stream of N/L per second, each reserved over HTTP (open
// loop: a launch leaves when it is due) before its runtime.started goes to Kafka, and settled on its
// runtime.terminated. Reservations over HTTP and events over Kafka at the same time.
//
// Time is compressed by FLEET_COMPRESSION (C): event instants advance C times faster than the wall
// clock, so a runtime heartbeats every 30/C s and lives L/C on average. The benchmark keeps N/C
// runtimes alive, which sends exactly the per-second load of a fleet of N in real time (N/30
// heartbeats/s, N/L launches and settlements/s); what it does not reproduce is the size of the
// live set (N/C runtime rows instead of N).
//
// For each N of FLEET_N (increasing; the live set grows from one to the next) it warms up, measures,
// and reports: reservation p50/p99 (open loop, after the warm-up), consumer lag (max and at the end,
// in seconds: how long ago the oldest unconsumed message was sent), settlements/s, PostgreSQL and
// service CPU per runtime-hour, service RSS, database bytes per runtime-hour, the event-loop delay p99
// of the service and of the load generator (which times the reservations), and whether the run was
// sustained (lag < 5 s throughout, reservation p99 ≤ 10 ms, no launch lost). It stops at the first N
// whose events fall behind (the backlog would carry into the next); the largest sustained N is the
// largest with every N up to it sustained. Beside it, measured in the same run:
// pgbench's reservation and hold+settle ceilings, the raw kafkajs consume rate of the same topic,
// and the CPU reference. It ends by terminating every runtime and checking conservation as the fault
// suite does (test/faults/invariants.ts): every runtime charged exactly once what its events say,
// no hold left open or resolved twice, entries sum to zero, each balance equals its entries.
//
// Options: FLEET_N (list, default 100000,250000,500000,1000000), FLEET_LIFETIME_MIN (30),
// FLEET_COMPRESSION (60), FLEET_WARMUP_SECONDS (15), FLEET_SECONDS (30, measured per N),
// FLEET_ACCOUNTS (500), FLEET_PAUSE_SHARE (0.2: share of runtimes that pause once),
// BENCH_POOL (20), BENCH_REQUEST_TIMEOUT_MS (10000). A quick check:
// FLEET_N=20000,40000 FLEET_SECONDS=15 FLEET_WARMUP_SECONDS=5 bash scripts/node.sh 24 bench/fleet.mjs
import { execFile } from 'node:child_process';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { FleetLoad } from './lib/fleet-load.mjs';
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

process.env.KAFKAJS_NO_PARTITIONER_WARNING ??= '1';
const STEPS = (process.env.FLEET_N ?? '100000,250000,500000,1000000').split(',').map(Number);
const LIFETIME_MIN = Number(process.env.FLEET_LIFETIME_MIN ?? 30);
const C = Number(process.env.FLEET_COMPRESSION ?? 60);
const WARMUP_SECONDS = Number(process.env.FLEET_WARMUP_SECONDS ?? 15);
const SECONDS = Number(process.env.FLEET_SECONDS ?? 30);
const ACCOUNTS = Number(process.env.FLEET_ACCOUNTS ?? 500);
const PAUSE_SHARE = Number(process.env.FLEET_PAUSE_SHARE ?? 0.2);
const POOL = Number(process.env.BENCH_POOL ?? 20);
const REQUEST_TIMEOUT_MS = Number(process.env.BENCH_REQUEST_TIMEOUT_MS ?? 10_000);
const MAX_LAG_S = 5;
const MAX_P99_MS = 10;
const FUNDS = '10000000.000000';

console.log(machineLine());
console.log(
  `fleet: N = ${STEPS.map(fmt).join(', ')}; mean lifetime ${LIFETIME_MIN} min; heartbeat every 30 s; ${Math.round(PAUSE_SHARE * 100)} % of runtimes pause once; ` +
    `time compressed ${C}× (N/${C} runtimes alive, the event and launch rates of N in real time); ${WARMUP_SECONDS} s warm-up and ${SECONDS} s measured per N`,
);
const { brokers, tag, topic, scratch, service, base, call, stop } = await benchService({
  prefix: 'fleet',
  topicPrefix: 'bench.fleet',
  pool: POOL,
});
const probe = new pg.Client({ connectionString: scratch.url });
await probe.connect();

// PostgreSQL's own ceilings, in the same run, before the fleet (in schema pgb of the scratch database).
const reservationCeiling = await pgbenchCeiling({ url: scratch.url, script: 'reservation', clients: POOL, wallets: ACCOUNTS, seconds: 10 });
const pairCeiling = await pgbenchCeiling({ url: scratch.url, script: 'pair', clients: POOL, wallets: ACCOUNTS, seconds: 10 });
console.log(`pgbench: reservation ${pgbenchText(reservationCeiling, 'tx/s')}; hold+settle ${pgbenchText(pairCeiling, 'pairs/s')}`);
await probe.query('DROP SCHEMA pgb CASCADE');

const accounts = Array.from({ length: ACCOUNTS }, (_, i) => `fleet_${tag}_acc${i}`);
await fundedAccounts(call, accounts, FUNDS, 'fleet bench');

const kafka = new Kafka({ clientId: 'bench-fleet', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 4 }], waitForLeaders: true });
const producer = kafka.producer();
await producer.connect();

// The database before the fleet: what the fleet adds is measured from here.
await probe.query('CHECKPOINT').catch(() => undefined);
const sizeBefore = Number((await probe.query(`SELECT pg_database_size(current_database()) AS b`)).rows[0].b);
const load = new FleetLoad({
  call,
  producer,
  topic,
  accounts,
  compression: C,
  lifetimeMin: LIFETIME_MIN,
  pauseShare: PAUSE_SHARE,
  requestTimeoutMs: REQUEST_TIMEOUT_MS,
  tag,
  plannedWallSeconds: STEPS.length * (WARMUP_SECONDS + SECONDS + 120) + 600,
});
load.start();

/** How far behind the service's consumer is, in messages and in seconds (since the oldest unconsumed message was sent). */
async function lag() {
  const [ends, [committed]] = await Promise.all([
    admin.fetchTopicOffsets(topic),
    admin.fetchOffsets({ groupId: `bench-${tag}`, topics: [topic] }),
  ]);
  let produced = 0;
  let consumed = 0;
  for (const end of ends) {
    produced += Number(end.high);
    consumed += Math.max(0, Number(committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? 0));
  }
  return { messages: produced - consumed, seconds: load.secondsBehind(consumed), consumed };
}

const pct = (sorted, p) => (sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/**
 * Event-loop delay over the window, p99 in ms: the load generator's own (a late loop delays the
 * answers it times) and the service's (prom-client's histogram, which each scrape of /metrics resets).
 */
const generatorLoop = monitorEventLoopDelay({ resolution: 10 });
generatorLoop.enable();
const serviceLoopP99 = async () => {
  const text = await fetch(`${base}/metrics`).then((r) => r.text());
  const m = /^dl_billing_nodejs_eventloop_lag_p99_seconds (\S+)$/m.exec(text);
  return m ? Number(m[1]) * 1000 : null;
};
const dbSize = async () => Number((await probe.query(`SELECT pg_database_size(current_database()) AS b`)).rows[0].b);
const results = [];
/** The largest N sustained, every smaller N sustained too; and the largest whose events alone kept up (lag < 5 s). */
let largest = null;
let keptUp = null;
for (const n of STEPS) {
  const rampStart = performance.now();
  await load.growTo(Math.round(n / C), n / (LIFETIME_MIN * 60));
  console.error(
    `N=${fmt(n)}: ${fmt(load.alive)} runtimes alive after ${((performance.now() - rampStart) / 1000).toFixed(1)} s of ramp; warming up`,
  );
  await sleep(WARMUP_SECONDS * 1000);
  load.resetWindow();
  generatorLoop.reset();
  await serviceLoopP99();
  const before = {
    at: performance.now(),
    service: cpuMsByPid([service.pid]),
    postgres: await backendCpuMs(probe),
    size: await dbSize(),
    wall: new Date(),
  };
  let maxLag = 0;
  let maxRss = 0;
  while (performance.now() - before.at < SECONDS * 1000) {
    await sleep(1000);
    const l = await lag();
    maxLag = Math.max(maxLag, l.seconds);
    maxRss = Math.max(maxRss, rssMiB(service.pid) ?? 0);
    console.error(
      `  t=${Math.round((performance.now() - before.at) / 1000)} s lag ${l.messages} msgs / ${l.seconds.toFixed(1)} s, alive ${load.alive}, rss ${Math.round(rssMiB(service.pid) ?? 0)} MiB`,
    );
  }
  const after = {
    at: performance.now(),
    service: cpuMsByPid([service.pid]),
    postgres: await backendCpuMs(probe),
    size: await dbSize(),
    wall: new Date(),
  };
  const endLag = await lag();
  const serviceLoopMs = await serviceLoopP99();
  const generatorLoopMs = generatorLoop.percentile(99) / 1e6;
  const w = load.window();
  const seconds = (after.at - before.at) / 1000;
  const settled = Number(
    (await probe.query(`SELECT count(*)::int AS n FROM runtimes WHERE settled_at >= $1 AND settled_at < $2`, [before.wall, after.wall]))
      .rows[0].n,
  );
  // The real fleet's runtime-hours over the window (the same as the compressed fleet's in event time).
  const runtimeHours = (n * seconds) / 3600;
  const latencies = w.latencies.sort((a, b) => a - b);
  const r = {
    n,
    alive: load.alive,
    seconds,
    launchesPerSecond: w.launched / seconds,
    offeredLaunches: n / (LIFETIME_MIN * 60),
    lost: w.lost,
    lostReasons: w.reasons,
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
    eventsPerSecond: w.events / seconds,
    heartbeatsPerSecond: w.heartbeats / seconds,
    terminatedPerSecond: w.terminated / seconds,
    settledPerSecond: settled / seconds,
    maxLag: Math.max(maxLag, endLag.seconds),
    endLag: endLag.seconds,
    postgresMsPerRuntimeHour: (cpuBetween(before.postgres, after.postgres) ?? NaN) / runtimeHours,
    serviceMsPerRuntimeHour: (cpuBetween(before.service, after.service) ?? NaN) / runtimeHours,
    maxRss: Math.max(maxRss, rssMiB(service.pid) ?? 0),
    bytesPerRuntimeHour: (after.size - before.size) / runtimeHours,
    generatorBehindMs: w.maxBehindMs,
    serviceLoopMs,
    generatorLoopMs,
    load: os.loadavg()[0],
  };
  r.sustained =
    r.maxLag < MAX_LAG_S && r.p99 !== null && r.p99 <= MAX_P99_MS && r.lost === 0 && r.launchesPerSecond >= 0.9 * r.offeredLaunches;
  results.push(r);
  console.log(
    `N=${fmt(n)} (${fmt(r.alive)} alive at ${C}×): ${r.sustained ? 'sustained' : 'NOT sustained'}; ` +
      `launches ${r.launchesPerSecond.toFixed(0)}/s (offered ${r.offeredLaunches.toFixed(0)}/s, ${r.lost} lost${r.lost ? ` ${JSON.stringify(r.lostReasons)}` : ''}), reservation p50 ${r.p50?.toFixed(2)} ms p99 ${r.p99?.toFixed(2)} ms; ` +
      `events ${fmt(r.eventsPerSecond)}/s (${fmt(r.heartbeatsPerSecond)} heartbeats/s); terminated ${r.terminatedPerSecond.toFixed(0)}/s, settled ${r.settledPerSecond.toFixed(0)}/s; ` +
      `lag max ${r.maxLag.toFixed(1)} s, at the end ${r.endLag.toFixed(1)} s; CPU per runtime-hour: PostgreSQL ${r.postgresMsPerRuntimeHour.toFixed(2)} ms, service ${r.serviceMsPerRuntimeHour.toFixed(2)} ms; ` +
      `service RSS max ${fmt(r.maxRss)} MiB; database +${fmt(r.bytesPerRuntimeHour)} bytes per runtime-hour; load generator at most ${fmt(r.generatorBehindMs)} ms behind its schedule; event-loop delay p99: service ${r.serviceLoopMs?.toFixed(1) ?? '—'} ms, load generator ${r.generatorLoopMs.toFixed(1)} ms; load average ${r.load.toFixed(1)}`,
  );
  r.eventsKeptUp = r.maxLag < MAX_LAG_S;
  if (results.every((x) => x.sustained)) largest = r;
  if (r.eventsKeptUp) keptUp = r;
  // A backlog would carry into the next N: stop there. (A reservation tail above 10 ms does not.)
  if (!r.eventsKeptUp) break;
}

// Every runtime terminates; the service must catch up and settle each exactly once.
const drainStart = performance.now();
await load.stop();
for (;;) {
  const l = await lag();
  const open = Number((await probe.query(`SELECT count(*)::int AS n FROM runtimes WHERE status NOT IN ('settled', 'voided')`)).rows[0].n);
  if (l.messages === 0 && open === 0) break;
  if (performance.now() - drainStart > 20 * 60_000)
    throw new Error(`not drained after 20 min: ${l.messages} messages behind, ${open} runtimes not settled`);
  await sleep(1000);
}
console.error(`drained in ${((performance.now() - drainStart) / 1000).toFixed(1)} s`);
const sizeAfter = await dbSize();
// What one runtime's whole life leaves in the database (reservation, hold, settlement, its stored
// events, audit rows, rollups, and the dead row versions of its updates: this machine runs without
// autovacuum), and what a month of the 1,000,000 fleet's launches (N/L per second) would add.
const bytesPerRuntime = (sizeAfter - sizeBefore) / load.expectedCharges().size;
const monthBytes = bytesPerRuntime * (1_000_000 / (LIFETIME_MIN * 60)) * 86_400 * 30;
console.log(
  `storage: ${fmt(bytesPerRuntime)} bytes per runtime launched (${fmt(load.expectedCharges().size)} runtimes, database ${(sizeBefore / 2 ** 20).toFixed(0)} → ${(sizeAfter / 2 ** 20).toFixed(0)} MiB); ` +
    `${fmt((bytesPerRuntime * 3600) / (LIFETIME_MIN * 60))} bytes per runtime-hour; a month of 1,000,000 runtimes: ${(monthBytes / 2 ** 40).toFixed(2)} TiB`,
);

// Raw kafkajs consume rate of the whole topic (a fresh group that does nothing with the messages).
const rawRate = await rawConsumeRate(kafka, topic, `bench-fleet-raw-${tag}`, load.sent);

const problems = await conservation();
await producer.disconnect();
await admin.disconnect();
await probe.end();
await stop();

for (const r of results) {
  figure({
    name: `fleet of ${fmt(r.n)} runtimes (time ×${C}, ${SECONDS} s)`,
    value: r.n,
    unit: 'runtimes',
    valueText:
      `${r.sustained ? 'sustained' : 'not sustained'}: reservations ${r.launchesPerSecond.toFixed(0)}/s p50 ${r.p50?.toFixed(2)} ms p99 ${r.p99?.toFixed(2)} ms (${r.lost} lost); ` +
      `${fmt(r.eventsPerSecond)} events/s; lag max ${r.maxLag.toFixed(1)} s, end ${r.endLag.toFixed(1)} s; settled ${r.settledPerSecond.toFixed(0)}/s; ` +
      `CPU/runtime-hour PostgreSQL ${r.postgresMsPerRuntimeHour.toFixed(2)} ms, service ${r.serviceMsPerRuntimeHour.toFixed(2)} ms; RSS ${fmt(r.maxRss)} MiB; ` +
      `${fmt(r.bytesPerRuntimeHour)} B/runtime-hour; load ${r.load.toFixed(1)}`,
    ceilingText: `reservations ${pgbenchText(reservationCeiling, 'tx/s')}; hold+settle ${pgbenchText(pairCeiling, 'pairs/s')}; raw kafkajs ${fmt(rawRate)} msgs/s`,
    target: 'N ≥ 1,000,000 with lag < 5 s, p99 ≤ 10 ms, RSS ≤ 256 MiB',
  });
}
figure({
  name: 'largest fleet sustained',
  value: largest?.n ?? 0,
  unit: 'runtimes',
  valueText:
    `${largest ? fmt(largest.n) : 'none of ' + STEPS.map(fmt).join(', ')} (steps ${STEPS.map(fmt).join(', ')}; events alone kept up to ${keptUp ? fmt(keptUp.n) : 'none'}); ` +
    `${fmt(bytesPerRuntime)} bytes per runtime launched, a month of 1,000,000 runtimes ${(monthBytes / 2 ** 40).toFixed(2)} TiB; conservation: ${problems.length === 0 ? 'every runtime charged once, balances equal their entries' : problems.length + ' problem(s)'}`,
  ceilingText: `raw kafkajs ${fmt(rawRate)} msgs/s; ${machineLine().replace(/^machine: .*, load average/, 'load average')}`,
  target: '≥ 1,000,000',
});
if (problems.length > 0) {
  for (const p of problems) console.error(`conservation: ${p}`);
  process.exit(1);
}
process.exit(0);

/** The fault suite's checks (test/faults/invariants.ts) on everything the fleet did. */
async function conservation() {
  const problems = [];
  const [total] = (await probe.query(`SELECT coalesce(sum(amount), 0)::text AS total FROM ledger_entries`)).rows;
  if (total.total !== '0') problems.push(`ledger entries sum to ${total.total}`);
  const expected = load.expectedCharges();
  const found = new Map((await probe.query(`SELECT runtime_id, status, charged::text FROM runtimes`)).rows.map((r) => [r.runtime_id, r]));
  if (found.size !== expected.size) problems.push(`${expected.size} runtimes launched, ${found.size} known to the service`);
  const failed = load.failedIds();
  let wrong = 0;
  for (const [id, want] of expected) {
    const row = found.get(id);
    if (row && (row.status === 'settled' || (failed.has(id) && row.status === 'voided')) && BigInt(row.charged) === want) continue;
    if (wrong++ < 10) problems.push(`runtime ${id}: ${row ? `${row.status}, charged ${row.charged}` : 'unknown'}, expected ${want}`);
  }
  if (wrong > 10) problems.push(`… and ${wrong - 10} more runtimes`);
  const twice = (
    await probe.query(
      `SELECT count(*)::int AS n FROM (SELECT hold_id FROM ledger_transactions WHERE kind IN ('settlement', 'void', 'release') GROUP BY hold_id HAVING count(*) > 1) x`,
    )
  ).rows[0].n;
  if (twice > 0) problems.push(`${twice} holds resolved more than once`);
  const open = (await probe.query(`SELECT count(*)::int AS n FROM holds WHERE status = 'reserved'`)).rows[0].n;
  if (open > 0) problems.push(`${open} holds still reserved`);
  const wallets = new Map(
    (
      await probe.query(`SELECT account_id, grants_balance::text AS grants, holds_balance::text AS held, consumed::text FROM wallets`)
    ).rows.map((w) => [w.account_id, w]),
  );
  const funds = BigInt(FUNDS.replace('.', ''));
  for (const [account, charged] of load.chargesByAccount(expected)) {
    const w = wallets.get(account);
    const want = { grants: String(funds - charged), held: '0', consumed: String(charged) };
    if (!w || w.grants !== want.grants || w.held !== want.held || w.consumed !== want.consumed)
      problems.push(`wallet ${account}: ${JSON.stringify(w)}, expected ${JSON.stringify(want)}`);
  }
  const reconcile = await new Promise((resolve) =>
    execFile(
      process.execPath,
      ['dist/src/cli.js', 'ledger', 'reconcile'],
      { env: { ...process.env, DATABASE_URL: scratch.url, KAFKA_BROKERS: '', LOG_LEVEL: 'error' } },
      (error, stdout, stderr) => resolve({ code: error ? (error.code ?? 1) : 0, out: `${stdout}${stderr}` }),
    ),
  );
  if (reconcile.code !== 0) problems.push(`ledger reconcile exited ${reconcile.code}: ${reconcile.out.slice(0, 2000)}`);
  console.log(
    `conservation: ${fmt(expected.size)} runtimes, ${fmt(load.sent)} events; ${problems.length === 0 ? 'all checks pass' : problems.join('; ')}`,
  );
  return problems;
}
