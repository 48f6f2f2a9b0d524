// Runs every benchmark in bench/ one after the other (on the build), then prints one table of their
// headline figures: figure, value, ceiling (measured in the same run), ratio, target. The table is
// Markdown, ready for docs/benchmarks.md; BENCH_OUT=<file> also writes it as JSON.
// `bash scripts/node.sh 24 bench/run.mjs ledger metering` (Node 24, as `npm run bench` and the production image) runs only the scripts whose names contain those words.
// DATABASE_URL defaults to the local server; KAFKA_BROKERS to the project's broker.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { machineLine } from './support.mjs';

const only = process.argv.slice(2);
const benches = readdirSync('bench')
  .filter((f) => f.endsWith('.mjs') && f !== 'run.mjs' && f !== 'support.mjs')
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
const machineBefore = machineLine();
console.log(machineBefore);
const startedAt = new Date().toISOString();
const dir = mkdtempSync(join(os.tmpdir(), 'bench-figures-'));
const figures = [];
const failed = [];
for (const bench of benches) {
  console.log(`\n=== ${bench}`);
  const file = join(dir, `${bench}.jsonl`);
  writeFileSync(file, '');
  const r = spawnSync(process.execPath, [`bench/${bench}`], {
    stdio: 'inherit',
    env: { KAFKAJS_NO_PARTITIONER_WARNING: '1', ...process.env, BENCH_FIGURES_FILE: file },
  });
  const rows = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => ({ script: bench, ...JSON.parse(line) }));
  figures.push(...rows);
  if (r.status !== 0) failed.push({ script: bench, status: r.status ?? r.signal, figures: rows.length });
}
rmSync(dir, { recursive: true, force: true });

const cell = (v) => String(v ?? '—').replaceAll('|', '\\|');
const table = [
  '| figure | value | ceiling | ratio | target |',
  '|---|---|---|---|---|',
  ...figures.map((f) => `| ${cell(f.figure)} | ${cell(f.valueText)} | ${cell(f.ceilingText)} | ${cell(f.ratio)} | ${cell(f.target)} |`),
];
console.log(`\n=== results (${startedAt} → ${new Date().toISOString()})`);
console.log(machineBefore);
console.log(`at the end: ${machineLine().replace(/^machine: .*, load average/, 'load average')}`);
console.log(table.join('\n'));
for (const f of failed)
  console.log(`${f.script} exited with ${f.status} (${f.figures} figure${f.figures === 1 ? '' : 's'} recorded before)`);

if (process.env.BENCH_OUT) {
  writeFileSync(
    process.env.BENCH_OUT,
    `${JSON.stringify({ startedAt, finishedAt: new Date().toISOString(), machine: machineBefore, machineAtEnd: machineLine(), figures, failed }, null, 2)}\n`,
  );
  console.log(`written to ${process.env.BENCH_OUT}`);
}
process.exit(failed.length > 0 ? 1 : 0);
