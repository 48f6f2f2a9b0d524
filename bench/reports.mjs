// Reports benchmark: the usage report (by account, environment, day, user) and top consumers for one
// month over BENCH_SESSIONS settled runtime sessions (default 10 million).
// Runs on the build (npx nest build; or `npm run bench` which builds and runs bench/run.mjs):
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bash scripts/node.sh 24 bench/reports.mjs
// Options (environment): BENCH_SESSIONS (10000000), BENCH_ACCOUNTS (5000), BENCH_RUNS (5 per query),
// BENCH_CHUNK (1000000 sessions per generation step), BENCH_RUNTIMES=1 to also write every session as a
// `runtimes` row (slower; the report does not read them). A scratch database is created on
// DATABASE_URL's server and dropped after (BENCH_KEEP=1 keeps it; BENCH_REUSE=<database> answers the
// reports again on a kept one without generating anything).
// BENCH_FLEET=<runtimes> (e.g. 1000000) instead answers the month of a fleet of that many runtimes
// running at once, each living BENCH_LIFETIME_MIN (30) on average: N / L sessions settled per
// second, 1.49 billion in January for 1,000,000. Such a month fills every (account, environment,
// user) of every day, so its rollups are generated as what they would hold, one delta per account,
// environment, user and day (the sessions of that day summed), through the same statement: the
// daily and monthly tables the month's reports read are those of the fleet, row for row; the hourly
// tables get one row per day instead of up to 24 (only a period cutting days reads them).
//
// The sessions are generated set-based (generate_series) and added to the rollups exactly as the
// metering adds them (same function, same statement), one chunk at a time; then the report service
// of the build answers the month, BENCH_RUNS times per grouping, and the median is printed.
import { createRequire } from 'node:module';
import os from 'node:os';
import { figure, machineLine, scratchDatabase } from './support.mjs';

const require = createRequire(import.meta.url);
require('reflect-metadata');
const { openDataSource } = require('../dist/src/common/database/database.module.js');
const { dataSourceOptions } = require('../dist/src/common/database/data-source.js');
const { ReportsService } = require('../dist/src/reports/reports.service.js');
const { toCsv } = require('../dist/src/reports/to-csv.js');
const { PlanCatalog } = require('../dist/src/plan-catalog/plan-catalog.js');
const { USAGE_GRAINS, USAGE_ROLLUPS, usageRollupsUpsert } = require('../dist/src/reports/usage-rollups.js');

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10_000_000);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 5_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const CHUNK = Number(process.env.BENCH_CHUNK ?? 1_000_000);
const RUNTIMES = process.env.BENCH_RUNTIMES === '1';
const FLEET = process.env.BENCH_FLEET ? Number(process.env.BENCH_FLEET) : null;
const LIFETIME_MIN = Number(process.env.BENCH_LIFETIME_MIN ?? 30);
const MONTH = { from: new Date('2031-01-01T00:00:00Z'), to: new Date('2031-02-01T00:00:00Z') };
const ENVIRONMENTS = ['python-simple', 'python-gpu', 'ai-agents', 'r-stats', 'julia', 'spark'];
const log = (m) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${m}`);

const REUSE = process.env.BENCH_REUSE;
const scratch = await scratchDatabase('reports', { reuse: REUSE });
console.log(machineLine());

let ds;
try {
  ds = await openDataSource(dataSourceOptions(scratch.url, 4));
  const genStart = Date.now();
  if (!REUSE) {
    await ds.query(`INSERT INTO accounts (id, kind, plan) SELECT 'acc_' || i, 'user', 'enterprise' FROM generate_series(1, $1) i`, [
      ACCOUNTS,
    ]);

    // Session i: account skewed towards low numbers (a few heavy users), 1 to 4 users and a couple of
    // environments per account, settled at a uniformly random second of the month (plus 2% in the
    // months around it, which the report must leave out), 1 to 120 minutes at 1 to 20 credits/hour.
    const sessions = (lo, hi) => `
      SELECT 'acc_' || (1 + floor(power(random(), 2) * ${ACCOUNTS}))::int AS account_id,
             'user_' || (1 + floor(random() * 4))::int AS user_id,
             (ARRAY['${ENVIRONMENTS.join("','")}'])[1 + floor(random() * ${ENVIRONMENTS.length})::int] AS environment,
             (timestamptz '${MONTH.from.toISOString()}' + (random() * 1.04 - 0.02) * interval '31 days') AS settled_at,
             (60000 + floor(random() * 7140000))::bigint AS running_ms,
             (1 + floor(random() * 20))::bigint * 1000000 AS rate
      FROM generate_series(${lo}, ${hi}) g`;

    // A fleet's month: day by day, one delta per account, environment and user, that day's sessions
    // summed (accounts skewed as above: account a gets a share ∝ 1/√a, like 1 + ⌊random()² × A⌋).
    const days = Math.round((MONTH.to - MONTH.from) / 86_400_000);
    const fleetSessions = FLEET === null ? 0 : Math.round((FLEET / (LIFETIME_MIN * 60)) * 86_400 * days);
    const perComboDay = fleetSessions / (days * ACCOUNTS * ENVIRONMENTS.length * 4);
    for (let day = 0; FLEET !== null && day < days; day++) {
      const t0 = Date.now();
      await ds.query(
        usageRollupsUpsert(`
          SELECT account_id, hour, environment, user_id, runtimes, runtimes * ${LIFETIME_MIN * 60_000}::bigint AS running_ms,
                 runtimes * ${LIFETIME_MIN * 60_000}::bigint * rate / 3600000 AS credits
          FROM (SELECT 'acc_' || a AS account_id, timestamptz '${MONTH.from.toISOString()}' + interval '1 day' * ${day} + interval '12 hours' AS hour,
                       environment, 'user_' || u AS user_id, greatest(1, round(${perComboDay} * 0.5 / sqrt(a::float8 / ${ACCOUNTS})))::bigint AS runtimes,
                       (1 + (a + u) % 20)::bigint * 1000000 AS rate
                FROM generate_series(1, ${ACCOUNTS}) a, unnest(ARRAY['${ENVIRONMENTS.join("','")}']) environment, generate_series(1, 4) u) f`),
      );
      log(`fleet day ${day + 1}/${days} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
    for (let lo = 1; FLEET === null && lo <= SESSIONS; lo += CHUNK) {
      const hi = Math.min(SESSIONS, lo + CHUNK - 1);
      const t0 = Date.now();
      // The metering's own statement (usageRollupsUpsert in usage-rollups.ts), fed a whole chunk pre-aggregated per hour.
      await ds.query(
        usageRollupsUpsert(`
          SELECT account_id, date_trunc('hour', settled_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour, environment, user_id,
                 count(*) AS runtimes, sum(running_ms) AS running_ms, sum(ceil(rate::numeric * running_ms / 3600000))::bigint AS credits
          FROM (${sessions(lo, hi)}) s GROUP BY 1, 2, 3, 4`),
      );
      if (RUNTIMES) {
        await ds.query(`
          INSERT INTO runtimes (runtime_id, account_id, user_id, environment, size_class, rate_per_hour, reserved_amount, status, closed_ms, charged, settlement, settled_at, started_at)
          SELECT 'rt_' || g, account_id, user_id, jsonb_build_object('name', environment), 'small', rate, 10 * rate, 'settled', running_ms,
                 ceil(rate::numeric * running_ms / 3600000)::bigint, 'events', settled_at, settled_at - running_ms * interval '1 millisecond'
          FROM (${sessions(lo, hi).replace('FROM generate_series', ', g FROM generate_series')}) x`);
      }
      log(`sessions ${lo}..${hi} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
  }
  const genMs = REUSE ? null : Date.now() - genStart;
  const tables = Object.values(USAGE_ROLLUPS).flatMap((level) => USAGE_GRAINS.map((grain) => level[grain]));
  const rollupRows = {};
  for (const table of tables) {
    if (!REUSE) await ds.query(`VACUUM ANALYZE ${table}`);
    rollupRows[table] = (await ds.query(`SELECT count(*)::int AS n FROM ${table}`))[0].n;
  }
  log(`rollup rows: ${JSON.stringify(rollupRows)}`);

  const reports = new ReportsService(ds, PlanCatalog.fromFile('config/plans.json'));
  const timings = {};
  // Every grouping of the month must show the same totals: the rollup levels agree with each other.
  const monthTotals = {};
  for (const [name, run] of [
    ['usage by account', () => reports.usage(MONTH, 'account')],
    ['usage by environment', () => reports.usage(MONTH, 'environment')],
    ['usage by day', () => reports.usage(MONTH, 'day')],
    ['usage by user', () => reports.usage(MONTH, 'user')],
    [
      'usage by user, CSV',
      async () => ({
        items: toCsv(await reports.usage(MONTH, 'user'))
          .split('\r\n')
          .slice(1, -1),
      }),
    ],
    [
      'usage by account, a period cutting days',
      () => reports.usage({ from: new Date('2031-01-03T07:00:00Z'), to: new Date('2031-01-29T17:00:00Z') }, 'account'),
    ],
    ['top 10 consumers', () => reports.topConsumers(MONTH, 10)],
  ]) {
    const ms = [];
    let rows = 0;
    for (let i = 0; i < RUNS; i++) {
      const t0 = process.hrtime.bigint();
      const r = await run();
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
      rows = r.items.length;
      if (r.report === 'usage' && r.from === MONTH.from.toISOString() && r.to === MONTH.to.toISOString())
        monthTotals[name] = JSON.stringify(r.totals);
    }
    ms.sort((a, b) => a - b);
    timings[name] = { medianMs: Math.round(ms[Math.floor(ms.length / 2)]), maxMs: Math.round(ms[ms.length - 1]), rows };
    log(`${name}: median ${timings[name].medianMs} ms (max ${timings[name].maxMs} ms, ${rows} rows)`);
  }
  const out = {
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}`,
    node: process.version,
    postgres: (await ds.query('SHOW server_version'))[0].server_version,
    settings: {
      sessions: FLEET === null ? SESSIONS : null,
      fleet: FLEET === null ? null : { runtimes: FLEET, lifetimeMinutes: LIFETIME_MIN },
      accounts: ACCOUNTS,
      runs: RUNS,
      runtimesRows: RUNTIMES,
      reused: REUSE ?? null,
      generationSeconds: genMs === null ? null : Math.round(genMs / 1000),
    },
    rollupRows,
    loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
    monthTotals: JSON.parse(Object.values(monthTotals)[0]),
    totalsAgree: new Set(Object.values(monthTotals)).size === 1,
    timings,
    underOneSecond: Object.values(timings).every((t) => t.medianMs < 1000),
  };
  console.log(JSON.stringify(out, null, 2));
  // No raw ceiling is measured for the reports: each is one query over the rollups.
  for (const [name, t] of Object.entries(timings)) {
    figure({
      name:
        FLEET === null
          ? `report: ${name} (${SESSIONS.toLocaleString('en-US')} sessions)`
          : `report: ${name} (a month of a ${FLEET.toLocaleString('en-US')}-runtime fleet)`,
      value: t.medianMs,
      unit: 'ms',
      valueText: `${t.medianMs} ms median (max ${t.maxMs} ms)`,
      target: '< 1 s',
    });
  }
  if (!out.underOneSecond || !out.totalsAgree) process.exitCode = 1;
} finally {
  await ds?.destroy();
  await scratch.drop();
}
