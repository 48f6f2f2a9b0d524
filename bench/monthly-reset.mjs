// Monthly reset benchmark: the set-based Free allowance reset of BENCH_ACCOUNTS (100,000) accounts.
// Runs on the build (npx nest build; or `npm run bench`):
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bash scripts/node.sh 24 bench/monthly-reset.mjs
// Options (environment): BENCH_ACCOUNTS (100000), BENCH_BATCH (5000), BENCH_WORKERS (2), BENCH_POOL (4).
// A scratch database is created on DATABASE_URL's server and dropped after (BENCH_KEEP keeps it).
// Three runs: the first month (grants only), the month boundary (expire the 50 left + grant 50 new:
// the figure that matters), and the same month again (idempotent: grants nothing).
import { createRequire } from 'node:module';
import os from 'node:os';
import { backendCpuMs, cpuBetween, figure, fmt, machineLine, scratchDatabase } from './support.mjs';

const require = createRequire(import.meta.url);
require('reflect-metadata');
const { openDataSource } = require('../dist/src/common/database/database.module.js');
const { dataSourceOptions } = require('../dist/src/common/database/data-source.js');
const { LedgerService } = require('../dist/src/ledger/ledger.service.js');
const { AuditService } = require('../dist/src/audit/audit.service.js');
const { ManualClock } = require('../dist/src/infra/clock/clock.js');
const { loadConfig } = require('../dist/src/common/config/config.js');
const { PlanCatalog } = require('../dist/src/plan-catalog/plan-catalog.js');
const { AllowancesService } = require('../dist/src/plans/allowances.service.js');

const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 100_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 5000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const POOL = Number(process.env.BENCH_POOL ?? 4);

const scratch = await scratchDatabase('reset');
console.log(machineLine());

let ds;
try {
  ds = await openDataSource(dataSourceOptions(scratch.url, POOL));
  const clock = new ManualClock(new Date('2026-12-01T00:00:00.000Z'));
  const config = loadConfig({ DATABASE_URL: scratch.url, CRON_ENABLED: 'false', LOG_LEVEL: 'error' });
  const catalog = PlanCatalog.fromFile(config.files.plans);
  const ledger = new LedgerService(ds, new AuditService(ds, clock), clock);
  const allowances = new AllowancesService(ds, catalog, ledger, clock, config);

  const seedStart = Date.now();
  await ds.query(
    `INSERT INTO accounts (id, kind, plan) SELECT 'bench_' || lpad(i::text, 6, '0'), 'user', 'free' FROM generate_series(1, $1) AS i`,
    [ACCOUNTS],
  );
  await ds.query(`INSERT INTO wallets (account_id) SELECT id FROM accounts`);
  await ds.query('ANALYZE');
  const seedMs = Date.now() - seedStart;

  // CPU seconds spent by this process and by the database's backends (local server, /proc): what the
  // run costs whatever else the machine is doing; on an idle 2-core machine the wall time is about half.
  const runs = {};
  const run = async (name, at) => {
    clock.set(at);
    const cpu0 = process.cpuUsage();
    const db0 = await backendCpuMs(ds);
    const started = process.hrtime.bigint();
    const result = await allowances.monthlyReset(clock.now(), { batchSize: BATCH, workers: WORKERS });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cpu = process.cpuUsage(cpu0);
    const nodeCpuSeconds = Math.round(((cpu.user + cpu.system) / 1e6) * 100) / 100;
    const postgresCpuSeconds = Math.round(((cpuBetween(db0, await backendCpuMs(ds)) ?? 0) / 1000) * 100) / 100;
    const cpuSeconds = Math.round((nodeCpuSeconds + postgresCpuSeconds) * 100) / 100;
    runs[name] = {
      seconds: Math.round(seconds * 100) / 100,
      cpuSeconds,
      nodeCpuSeconds,
      postgresCpuSeconds,
      accountsPerSecond: Math.round(result.accounts / seconds),
      ...result,
    };
    console.error(
      `${name}: ${result.accounts} accounts granted, ${result.expiredGrants} grants expired in ${seconds.toFixed(2)} s (${cpuSeconds} CPU s: Node ${nodeCpuSeconds}, PostgreSQL ${postgresCpuSeconds})`,
    );
    await ds.query('ANALYZE');
  };
  await run('firstMonth', '2026-12-01T00:00:00.000Z');
  await run('monthBoundary', '2027-01-01T00:00:00.000Z');
  await run('sameMonthAgain', '2027-01-01T00:05:00.000Z');
  // No raw ceiling is measured for the reset: it is set-based SQL already (no per-account round trips).
  const boundary = runs.monthBoundary;
  figure({
    name: `monthly reset of ${fmt(ACCOUNTS)} Free accounts (month boundary)`,
    value: boundary.seconds,
    unit: 's',
    valueText: `${boundary.seconds} s wall, ${boundary.cpuSeconds} CPU s (Node ${boundary.nodeCpuSeconds}, PostgreSQL ${boundary.postgresCpuSeconds}; ${fmt(boundary.accountsPerSecond)} accounts/s)`,
    target: ACCOUNTS === 100_000 ? '≤ 10 s' : '≤ 10 s for 100,000',
  });

  const check = await ds.query(
    `SELECT (SELECT count(*)::int FROM grants WHERE source = 'plan_allowance') AS allowances,
       (SELECT count(*)::int FROM grants WHERE status = 'active') AS active_grants,
       (SELECT count(*)::int FROM outbox) AS notifications,
       (SELECT count(*)::int FROM audit_log) AS audit_rows,
       (SELECT count(*)::int FROM wallets WHERE grants_balance <> 50000000) AS wrong_wallets`,
  );
  const sample = `bench_${String(Math.ceil(ACCOUNTS / 2)).padStart(6, '0')}`;
  const problems = await ledger.reconcile(sample);
  const report = {
    loadAverage: os.loadavg().map((l) => Math.round(l * 10) / 10),
    postgres: (await ds.query('SHOW server_version'))[0].server_version,
    settings: { accounts: ACCOUNTS, batch: BATCH, workers: WORKERS, pool: POOL, seedMs },
    runs,
    check: check[0],
    sampleReconciles: problems.length === 0,
  };
  console.log(JSON.stringify(report, null, 2));
  if (problems.length > 0 || check[0].wrong_wallets !== 0) {
    console.error('the ledger does not reconcile after the reset:', problems.slice(0, 5));
    process.exitCode = 1;
  }
} finally {
  await ds?.destroy();
  await scratch.drop();
}
