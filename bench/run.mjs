// Runs every benchmark in bench/ one after the other (on the build) and prints their figures.
// DATABASE_URL defaults to the local server; KAFKA_BROKERS to the project's broker.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const only = process.argv.slice(2);
const benches = readdirSync('bench')
  .filter((f) => f.endsWith('.mjs') && f !== 'run.mjs')
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
let failed = 0;
for (const bench of benches) {
  console.log(`\n=== ${bench}`);
  const r = spawnSync(process.execPath, [`bench/${bench}`], { stdio: 'inherit', env: { KAFKAJS_NO_PARTITIONER_WARNING: '1', ...process.env } });
  if (r.status !== 0) failed++;
}
process.exit(failed > 0 ? 1 : 0);
