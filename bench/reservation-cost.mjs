// What one reservation costs PostgreSQL in work that does not depend on how busy the machine is:
// WAL bytes and records, and buffers touched (hit, read, dirtied), per reservation, over a fixed
// number of reservations through the service over HTTP. CPU time on a shared machine moves with the
// other work on it; these counts do not (with one request in flight; more in flight group-commit
// reservations into batches whose size does depend on timing).
// The audit log holds BENCH_AUDIT_ROWS rows first (as bench/audit-reads.mjs), so its indexes are
// not trivially small. After a warm-up, a CHECKPOINT (so every run starts with the same full-page
// images to write: the first change of each page after a checkpoint logs the whole page) and a reset
// of the statistics, then the measured reservations. Figures:
//   - WAL: pg_current_wal_lsn() before and after (the whole server's: run it on a server nothing else
//     writes to), and pg_stat_statements' WAL and buffer counts of the service's statements, with
//     each statement's fastest execution (a hint of its CPU, less moved by other work than its mean);
//   - buffers by relation: pg_statio_user_tables / _indexes (blocks hit + read);
//   - BENCH_WAL_DIR=<the server's pg_wal>: the WAL by relation and resource manager, from pg_waldump.
// pg_stat_statements must be loaded (shared_preload_libraries) for the per-statement figures; they
// are left out otherwise (a server of one's own, initdb'd with it, keeps the machine's untouched).
// No Kafka (events over HTTP only): the reservation path writes the same.
// Runs on the build (npx nest build):
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/reservation-cost.mjs
// Options (environment): BENCH_RESERVATIONS (5000), BENCH_WARMUP (500), BENCH_AUDIT_ROWS (300000),
// BENCH_CONCURRENCY (1), BENCH_SQL (statements run after the audit log is filled, e.g. an index
// dropped or another tried), BENCH_WAL_DIR.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { figure, fundedAccounts, httpCaller, machineLine, scratchDatabase, seedAuditLog, startService } from './support.mjs';

const RESERVATIONS = Number(process.env.BENCH_RESERVATIONS ?? 5_000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 500);
const AUDIT_ROWS = Number(process.env.BENCH_AUDIT_ROWS ?? 300_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 1);
const ACCOUNTS = 50;
// A relation's name in the figures: a primary key (named by a hash) by its table.
const RELATION_NAME = `CASE WHEN c.relname LIKE 'PK\\_%' THEN t.relname || ' (primary key)' ELSE c.relname END`;

const scratch = await scratchDatabase('reservation_cost');
console.log(machineLine());
const tag = randomBytes(3).toString('hex');
const { service, port, adminKey } = await startService({
  databaseUrl: scratch.url,
  brokers: '',
  tag,
  pool: 20,
  topic: `bench.lifecycle.${tag}`,
});
const db = new pg.Client({ connectionString: scratch.url });
try {
  await db.connect();
  const call = httpCaller(port, adminKey);
  await seedAuditLog(db, AUDIT_ROWS, Date.now() - 3_600_000);
  if (process.env.BENCH_SQL) await db.query(process.env.BENCH_SQL);
  await db.query('VACUUM ANALYZE');
  const statements = (await db.query(`SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'`)).rowCount
    ? true
    : await db
        .query('CREATE EXTENSION pg_stat_statements')
        .then(() => db.query('SELECT count(*) FROM pg_stat_statements'))
        .then(
          () => true,
          (error) => (console.error(`no per-statement figures: ${error.message}`), false),
        );
  const indexes = await db.query(
    `SELECT indexrelname AS name, pg_size_pretty(pg_relation_size(indexrelid)) AS size FROM pg_stat_user_indexes WHERE relname = 'audit_log'`,
  );
  console.log(`audit_log: ${AUDIT_ROWS} rows; indexes: ${indexes.rows.map((i) => `${i.name} ${i.size}`).join(', ')}`);

  const accounts = Array.from({ length: ACCOUNTS }, (_, i) => `bench_${tag}_acc${i}`);
  await fundedAccounts(call, accounts, '1000000.000000', 'bench');
  const env = { variant: 'datalayer', environment: { name: 'python', sizeClass: 'small' } };
  let next = 0;
  const run = async (count) => {
    const end = next + count;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < end) {
          const n = next++;
          const res = await call('POST', '/v1/reservations', {
            accountId: accounts[n % ACCOUNTS],
            runtimeId: `bench_${tag}_rt${n}`,
            ...env,
            minutes: 60,
          });
          if (res.status !== 201) throw new Error(`reservation ${n}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
        }
      }),
    );
  };
  await run(WARMUP);

  await db.query('CHECKPOINT');
  if (statements) await db.query('SELECT pg_stat_statements_reset()');
  await db.query('SELECT pg_stat_reset()');
  await new Promise((r) => setTimeout(r, 1500)); // the backends' pending counts flushed before the reset's baseline
  await db.query('SELECT pg_stat_reset()');
  const [{ lsn: startLsn }] = (await db.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows;
  const started = performance.now();
  await run(RESERVATIONS);
  const seconds = (performance.now() - started) / 1000;
  const [{ lsn: endLsn, bytes }] = (
    await db.query(`SELECT pg_current_wal_lsn()::text AS lsn, pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint AS bytes`, [
      startLsn,
    ])
  ).rows;
  // Backends report their table and index counts when idle, at most once a second.
  await new Promise((r) => setTimeout(r, 2500));

  const per = (n) => Number(n) / RESERVATIONS;
  const f1 = (n) => per(n).toFixed(1);
  console.log(
    `${RESERVATIONS} reservations, ${CONCURRENCY} in flight, ${seconds.toFixed(1)} s; WAL ${f1(bytes)} bytes per reservation (server-wide, ${startLsn} to ${endLsn})`,
  );
  figure({
    name: 'PostgreSQL WAL per reservation',
    value: Number(bytes) / RESERVATIONS,
    unit: 'bytes',
    note: `${CONCURRENCY} in flight; the server's whole WAL`,
  });
  if (statements) {
    const [t] = (
      await db.query(
        `SELECT sum(calls) AS calls, sum(wal_bytes) AS wal_bytes, sum(wal_records) AS wal_records, sum(wal_fpi) AS wal_fpi,
           sum(shared_blks_hit) AS hit, sum(shared_blks_read) AS read, sum(shared_blks_dirtied) AS dirtied, sum(shared_blks_written) AS written
         FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND toplevel
           AND query NOT ILIKE '%pg_stat%' AND query NOT ILIKE '%pg_current_wal_lsn%'`,
      )
    ).rows;
    console.log(
      `statements (top level): ${f1(t.calls)} per reservation; WAL ${f1(t.wal_bytes)} bytes, ${f1(t.wal_records)} records, ${per(t.wal_fpi).toFixed(2)} full-page images; ` +
        `buffers hit ${f1(t.hit)}, read ${f1(t.read)}, dirtied ${per(t.dirtied).toFixed(2)}, written ${per(t.written).toFixed(2)}`,
    );
    const top = await db.query(
      `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS query, calls, wal_bytes, shared_blks_hit + shared_blks_read AS blocks, shared_blks_dirtied AS dirtied,
         min_exec_time AS min
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND toplevel
       ORDER BY wal_bytes DESC, shared_blks_hit DESC LIMIT 12`,
    );
    for (const s of top.rows)
      console.log(
        `  ${f1(s.wal_bytes).padStart(8)} WAL bytes, ${f1(s.blocks).padStart(6)} blocks, ${per(s.dirtied).toFixed(2)} dirtied, ${per(s.calls).toFixed(2)} calls, fastest ${s.min.toFixed(3)} ms: ${s.query}`,
      );
  }
  const io = await db.query(
    `SELECT relname AS name, coalesce(heap_blks_hit, 0) + coalesce(heap_blks_read, 0) AS blocks FROM pg_statio_user_tables
     UNION ALL SELECT CASE WHEN indexrelname LIKE 'PK\\_%' THEN relname || ' (primary key)' ELSE indexrelname END, idx_blks_hit + idx_blks_read
     FROM pg_statio_user_indexes
     ORDER BY blocks DESC`,
  );
  const total = io.rows.reduce((s, r) => s + Number(r.blocks), 0);
  console.log(
    `blocks hit + read by relation, per reservation (total ${f1(total)}): ` +
      io.rows
        .filter((r) => Number(r.blocks) > 0)
        .slice(0, 20)
        .map((r) => `${r.name} ${f1(r.blocks)}`)
        .join(', '),
  );
  const audit = io.rows.filter((r) => r.name.startsWith('audit_log')).map((r) => `${r.name} ${f1(r.blocks)}`);
  console.log(`  audit_log's: ${audit.join(', ')}`);

  if (process.env.BENCH_WAL_DIR) {
    const names = new Map(
      (
        await db.query(`SELECT c.relfilenode::text AS node, ${RELATION_NAME} AS name FROM pg_class c LEFT JOIN pg_index i ON i.indexrelid = c.oid
         LEFT JOIN pg_class t ON t.oid = i.indrelid WHERE c.relfilenode <> 0`)
      ).rows.map((r) => [r.node, r.name]),
    );
    const [{ oid }] = (await db.query('SELECT oid::text FROM pg_database WHERE datname = current_database()')).rows;
    const dump = execFileSync('pg_waldump', ['-p', process.env.BENCH_WAL_DIR, '-s', startLsn, '-e', endLsn], {
      encoding: 'utf8',
      maxBuffer: 1 << 30,
    });
    const by = new Map();
    for (const line of dump.split('\n')) {
      const m = /^rmgr: (\S+)\s+len \(rec\/tot\):\s+(\d+)\/\s*(\d+)/.exec(line);
      if (!m) continue;
      const r = /blkref #0: rel \d+\/(\d+)\/(\d+)/.exec(line);
      const rel = !r ? '(no relation)' : r[1] === oid ? (names.get(r[2]) ?? `rel ${r[2]}`) : 'another database';
      const key = `${rel} (${m[1]})`;
      const e = by.get(key) ?? { records: 0, bytes: 0, fpi: 0 };
      e.records++;
      e.bytes += Number(m[3]);
      e.fpi += Number(m[3]) - Number(m[2]);
      by.set(key, e);
    }
    const rows = [...by.entries()].sort((a, b) => b[1].bytes - a[1].bytes);
    console.log("WAL by relation (of the record's first block), per reservation: bytes (of which full-page images), records");
    for (const [key, e] of rows.slice(0, 30)) console.log(`  ${key}: ${f1(e.bytes)} (${f1(e.fpi)}), ${per(e.records).toFixed(2)}`);
  }
} finally {
  await db.end().catch(() => undefined);
  service.kill('SIGTERM');
  await new Promise((r) => service.once('exit', r));
  await scratch.drop();
}
