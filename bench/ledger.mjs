// Ledger benchmark: hold + settle pairs per second on one hot wallet and across 10,000 wallets,
// each beside PostgreSQL's own rate for the same shape of work measured with pgbench in the same run
// (bench/support.mjs: lock the wallet FOR UPDATE, insert the transaction and its entries, update the
// balances, commit; a hold then a settle), with as many connections as the benchmark uses.
// Runs on the build (npx nest build; or `npm run bench` which builds and runs bench/run.mjs):
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bash scripts/node.sh 24 bench/ledger.mjs
// Options (environment): BENCH_SECONDS (10 per scenario), BENCH_CONCURRENCY (64: callers with a hold+settle in flight), BENCH_POOL (20),
// BENCH_WALLETS (10000). A scratch database is created on DATABASE_URL's server and dropped after.
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { backendCpuMs, cpuBetween, figure, machineLine, pgbenchCeiling, pgbenchText, scratchDatabase } from './support.mjs';

const require = createRequire(import.meta.url);
require('reflect-metadata');
// Only warnings and errors from the service's loggers: the figures are the output.
require('@nestjs/common').Logger.overrideLogger(['error', 'warn']);
const { openDataSource } = require('../dist/src/common/database/database.module.js');
const { dataSourceOptions } = require('../dist/src/common/database/data-source.js');
const { LedgerService } = require('../dist/src/ledger/ledger.service.js');
const { AuditService } = require('../dist/src/audit/audit.service.js');
const { SystemClock } = require('../dist/src/infra/clock/clock.js');

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const POOL = Number(process.env.BENCH_POOL ?? 20);
const WALLETS = Number(process.env.BENCH_WALLETS ?? 10_000);
const CREDIT = 1_000_000n;

const scratch = await scratchDatabase('ledger');
console.log(machineLine());

let ds;
try {
  ds = await openDataSource(dataSourceOptions(scratch.url, POOL));
  const clock = new SystemClock();
  const ledger = new LedgerService(ds, new AuditService(ds, clock), clock);

  const hot = 'bench_hot';
  const many = Array.from({ length: WALLETS }, (_, i) => `bench_${String(i).padStart(5, '0')}`);
  const seedStart = Date.now();
  await ds.query(`INSERT INTO accounts (id, kind, plan) SELECT unnest($1::text[]), 'user', 'free'`, [[hot, ...many]]);
  await ds.query(`INSERT INTO wallets (account_id) SELECT unnest($1::text[])`, [[hot, ...many]]);
  await pool([hot, ...many], CONCURRENCY, (accountId) =>
    ledger.grantTx({
      accountId,
      source: 'admin',
      amount: (accountId === hot ? 100_000_000n : 100_000n) * CREDIT,
      expiresAt: null,
      idempotencyKey: `seed:${accountId}`,
      reason: 'benchmark seed',
      actor: 'bench',
    }),
  );
  const seedMs = Date.now() - seedStart;

  const results = {};
  results.hot = await run('one hot wallet', () => hot);
  results.many = await run(`across ${WALLETS} wallets`, () => many[Math.floor(Math.random() * many.length)]);

  // PostgreSQL's ceiling for the same pairs, with the connections the ledger could use at once.
  const clients = Math.min(CONCURRENCY, POOL);
  const ceilings = {
    hot: await pgbenchCeiling({ url: scratch.url, script: 'pair', clients, wallets: 1, seconds: SECONDS }),
    many: await pgbenchCeiling({ url: scratch.url, script: 'pair', clients, wallets: WALLETS, seconds: SECONDS }),
  };

  const problems = await ledger.reconcile();
  const report = {
    // Other work on the machine shows here: with 2 cores, a load above ~2 means the benchmark shared them.
    loadAverageAtEnd: os.loadavg().map((l) => Math.round(l * 10) / 10),
    node: process.version,
    postgres: (await ds.query('SHOW server_version'))[0].server_version,
    settings: { seconds: SECONDS, concurrency: CONCURRENCY, pool: POOL, wallets: WALLETS, seedMs },
    hotWallet: results.hot,
    manyWallets: results.many,
    pgbenchCeilings: ceilings,
    reconciles: problems.length === 0,
  };
  console.log(JSON.stringify(report, null, 2));
  for (const [key, name, target] of [
    ['hot', 'hold+settle pairs, one hot wallet', '≥ 500/s'],
    ['many', `hold+settle pairs, ${WALLETS.toLocaleString('en-US')} wallets`, '≥ 2,000/s'],
  ]) {
    const c = ceilings[key];
    figure({
      name,
      value: results[key].pairsPerSecond,
      unit: 'pairs/s',
      valueText: `${results[key].pairsPerSecond.toLocaleString('en-US')} pairs/s (p99 ${results[key].p99ms} ms, ${results[key].errors} errors)`,
      ceiling: 'error' in c ? null : c.perSecond,
      ceilingText: pgbenchText(c, 'pairs/s'),
      target,
    });
  }
  if (problems.length > 0) {
    console.error('the ledger does not reconcile after the benchmark:', problems.slice(0, 5));
    process.exitCode = 1;
  }

  /** Hold then settle, from CONCURRENCY workers, for SECONDS. */
  async function run(name, pick) {
    const latencies = [];
    const load = os.loadavg()[0];
    const cpu0 = process.cpuUsage();
    const pg0 = await backendCpuMs(ds);
    let pairs = 0;
    let errors = 0;
    const deadline = Date.now() + SECONDS * 1000;
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (Date.now() < deadline) {
          const accountId = pick();
          const holdId = `h_${randomBytes(8).toString('hex')}`;
          const t0 = process.hrtime.bigint();
          try {
            await ledger.createHoldTx({ accountId, holdId, amount: CREDIT, reference: 'bench', idempotencyKey: holdId });
            await ledger.settleHoldTx({ holdId, amount: BigInt(Math.floor(Math.random() * 1_000_000)) });
            pairs++;
            latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
          } catch (error) {
            errors++;
            if (errors < 5) console.error(name, error);
          }
        }
      }),
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    latencies.sort((a, b) => a - b);
    const q = (p) => Math.round((latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0) * 10) / 10;
    const cpu = process.cpuUsage(cpu0);
    const pg1 = await backendCpuMs(ds);
    const out = {
      pairs,
      seconds: Math.round(seconds * 10) / 10,
      pairsPerSecond: Math.round(pairs / seconds),
      p50ms: q(0.5),
      p99ms: q(0.99),
      errors,
      nodeCpuMsPerPair: Math.round(((cpu.user + cpu.system) / 1000 / Math.max(pairs, 1)) * 100) / 100,
      // CPU of this database's PostgreSQL backends (when the server runs on this machine): with the
      // Node figure, what a pair costs whatever else the machine is doing.
      postgresCpuMsPerPair: cpuBetween(pg0, pg1) === null ? null : Math.round((cpuBetween(pg0, pg1) / Math.max(pairs, 1)) * 100) / 100,
      loadAverageBefore: Math.round(load * 10) / 10,
    };
    console.error(`${name}: ${out.pairsPerSecond} hold+settle pairs/s (p50 ${out.p50ms} ms, p99 ${out.p99ms} ms, ${errors} errors)`);
    return out;
  }
} finally {
  await ds?.destroy();
  await scratch.drop();
}

/** User+system CPU (ms) of each of the benchmark database's backends, read from /proc; null if unavailable. */
async function pool(items, width, work) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}
