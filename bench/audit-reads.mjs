// Audit log reads by time range: what `GET /v1/audit` reads on a 300,000-row log (90 days, 400
// accounts), a row in 500 dated 1 to 5 days before the rows written around it (a webhook retried for
// days, a job run late). Each read is AuditService.list as the service sends it, through
// EXPLAIN (ANALYZE, BUFFERS); rows read = the rows every scan of the plan produced or filtered out
// (as test/support/query-plan.ts), best time of three, warm cache. Each range is also read to its
// last page and compared with the rows whose `at` is in it.
// Runs on the build (npx nest build):
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bash scripts/node.sh 24 bench/audit-reads.mjs
// Options (environment): BENCH_ROWS (300000), BENCH_INDEX (an extra CREATE INDEX statement to try).
import { createRequire } from 'node:module';
import { machineLine, scratchDatabase, seedAuditLog } from './support.mjs';

const require = createRequire(import.meta.url);
require('reflect-metadata');
require('@nestjs/common').Logger.overrideLogger(['error', 'warn']);
const { openDataSource } = require('../dist/src/common/database/database.module.js');
const { dataSourceOptions } = require('../dist/src/common/database/data-source.js');
const { AuditService } = require('../dist/src/audit/audit.service.js');
const { ManualClock } = require('../dist/src/infra/clock/clock.js');

const ROWS = Number(process.env.BENCH_ROWS ?? 300_000);
const END = Date.parse('2026-12-06T12:00:00Z');

const scratch = await scratchDatabase('audit_reads');
console.log(machineLine());
let ds;
try {
  ds = await openDataSource(dataSourceOptions(scratch.url, 2), true);
  await seedAuditLog(ds, ROWS, END);
  if (process.env.BENCH_INDEX) await ds.query(process.env.BENCH_INDEX);
  await ds.query('VACUUM ANALYZE audit_log');
  const indexes = await ds.query(
    `SELECT indexrelname AS name, pg_size_pretty(pg_relation_size(indexrelid)) AS size FROM pg_stat_user_indexes WHERE relname = 'audit_log'`,
  );
  console.log('indexes:', indexes.map((i) => `${i.name} ${i.size}`).join(', '));

  const day = { from: new Date('2026-11-01T00:00:00Z'), to: new Date('2026-11-02T00:00:00Z') };
  const hour = { from: new Date('2026-11-01T10:00:00Z'), to: new Date('2026-11-01T11:00:00Z') };
  const cases = [
    ['one day', { ...day }],
    ['one hour', { ...hour }],
    ['one account, one day', { accountId: 'acc_7', ...day }],
    ['one account, no range', { accountId: 'acc_7' }],
    ['no range', {}],
  ];
  for (const [name, filter] of cases) {
    const best = { ms: Infinity };
    for (let i = 0; i < 3; i++) {
      const { explained, plans } = explaining(ds);
      const started = process.hrtime.bigint();
      await new AuditService(explained, new ManualClock(new Date(END))).list({ ...filter, limit: 100 });
      const plan = plans[0];
      const ms = plan['Actual Total Time'];
      if (ms < best.ms) best.ms = ms;
      best.rows = visited(plan);
      best.buffers = (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
      best.nodes = nodes(plan);
      best.wall = Number(process.hrtime.bigint() - started) / 1e6;
    }
    // Every page of the range, against the rows whose `at` is in it.
    const { explained, plans } = explaining(ds);
    const service = new AuditService(explained, new ManualClock(new Date(END)));
    const seen = [];
    let cursor;
    let pages = 0;
    do {
      const page = await service.list({ ...filter, cursor, limit: 100 });
      seen.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor && pages < 200);
    const [{ expected }] = await ds.query(
      `SELECT count(*)::int AS expected FROM audit_log WHERE ($1::text IS NULL OR account_id = $1) AND ($2::timestamptz IS NULL OR at >= $2)
         AND ($3::timestamptz IS NULL OR at < $3)`,
      [filter.accountId ?? null, filter.from ?? null, filter.to ?? null],
    );
    console.log(
      `${name}: first page ${best.rows} rows read, ${best.buffers} buffers, ${best.ms.toFixed(2)} ms (plan: ${best.nodes}); ` +
        (pages < 200
          ? `${seen.length} rows in ${pages} pages (${plans.reduce((sum, p) => sum + visited(p), 0)} rows read), ${expected} in the range`
          : `${expected} in the range (not paged to the end)`),
    );
  }
} finally {
  await ds?.destroy();
  await scratch.drop();
}

function explaining(source) {
  const plans = [];
  const query = async (text, values) => {
    const result = await source.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, values);
    plans.push(result[0]['QUERY PLAN'][0].Plan);
    return source.query(text, values);
  };
  return { explained: { query }, plans };
}

function visited(node) {
  const own = /Scan/.test(node['Node Type'])
    ? (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * node['Actual Loops']
    : 0;
  return own + (node.Plans ?? []).reduce((sum, n) => sum + visited(n), 0);
}

function nodes(node) {
  const name = node['Index Name'] ? `${node['Node Type']} ${node['Index Name']}` : node['Node Type'];
  return [name, ...(node.Plans ?? []).map(nodes)].join(' > ');
}
