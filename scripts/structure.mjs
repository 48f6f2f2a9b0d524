// Prints figures of the code's structure, for docs/architecture.md's before/after table:
// the largest files, files over 500 lines, lines over 140 characters, the modules' import graph
// (imports that close a cycle between modules, i.e. climb back up), SQL calls per module, and the
// files a reservation and a lifecycle event walk (the value imports reachable from their entry
// points, outside common/ and infra/).
// `node scripts/structure.mjs [--json] [--types] [--why]`: --types counts `import type` too in the module graph
// (the walks count value imports only); --why lists, under each pair that climbs back up, the files
// and what they import.
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(process.argv.find((a) => a.startsWith('--root='))?.slice(7) ?? '.');
const src = join(root, 'src');

function filesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

const files = filesUnder(src);
const text = new Map(files.map((f) => [f, readFileSync(f, 'utf8')]));
const rel = (f) => relative(root, f);
const moduleOf = (f) => relative(src, f).split('/')[0].replace(/\.ts$/, '');
const shared = new Set(['common', 'infra', 'main', 'app', 'app.module', 'cli', 'cli-usage', 'cli-commands', 'cli.module']);

const withTypes = process.argv.includes('--types');

/** Value imports (not `import type`) of a file, resolved to files under src; with `types`, type imports too. */
function importsOf(file, types = false) {
  const out = [];
  const re = /^(?:import|export)\s+(type\s+)?[^'";]*?from\s+'((?:\.|src\/)[^']+)'/gms;
  for (const m of text.get(file).matchAll(re)) {
    if (m[1] && !types) continue;
    const names = m[0];
    if (
      !types &&
      /^import\s*\{([^}]*)\}/s.test(names) &&
      /^import\s*\{([^}]*)\}/s
        .exec(names)[1]
        .split(',')
        .every((n) => !n.trim() || n.trim().startsWith('type '))
    )
      continue;
    const base = m[2].startsWith('src/') ? join(root, m[2]) : resolve(dirname(file), m[2]);
    const target = [`${base}.ts`, join(base, 'index.ts')].find((p) => existsSync(p));
    if (target && text.has(target)) out.push(target);
  }
  return out;
}
const graph = new Map(files.map((f) => [f, importsOf(f)]));
const moduleGraph = withTypes ? new Map(files.map((f) => [f, importsOf(f, true)])) : graph;

const lines = files.map((f) => ({ file: rel(f), lines: text.get(f).split('\n').length - 1 })).sort((a, b) => b.lines - a.lines);
const longLines = files.reduce(
  (n, f) =>
    n +
    text
      .get(f)
      .split('\n')
      .filter((l) => l.length > 140).length,
  0,
);

// Module graph and the imports that climb back up (an edge A→B where B also reaches A).
const modEdges = new Map();
const edgeFiles = new Map();
for (const [f, targets] of moduleGraph) {
  for (const t of targets) {
    const a = moduleOf(f);
    const b = moduleOf(t);
    if (a === b || shared.has(a) || shared.has(b)) continue;
    if (!modEdges.has(a)) modEdges.set(a, new Map());
    modEdges.get(a).set(b, (modEdges.get(a).get(b) ?? 0) + 1);
    const key = `${a} ${b}`;
    if (!edgeFiles.has(key)) edgeFiles.set(key, []);
    edgeFiles.get(key).push(`${rel(f)} → ${rel(t)}`);
  }
}
function reaches(from, to) {
  const seen = new Set([from]);
  const stack = [from];
  while (stack.length) {
    const m = stack.pop();
    for (const n of modEdges.get(m)?.keys() ?? []) {
      if (n === to) return true;
      if (!seen.has(n)) {
        seen.add(n);
        stack.push(n);
      }
    }
  }
  return false;
}
const climbs = [];
for (const [a, targets] of modEdges) for (const [b, n] of targets) if (reaches(b, a)) climbs.push({ from: a, to: b, imports: n });

const sqlCalls = {};
/** SQL statements written in the source: template or string literals that start with a statement keyword. */
const sqlRe = /[`'"]\s*(?:SELECT|INSERT|UPDATE|DELETE|WITH|LOCK|TRUNCATE|COPY)\b/g;
for (const f of files) {
  const n = [...text.get(f).matchAll(sqlRe)].length;
  if (n) sqlCalls[moduleOf(f)] = (sqlCalls[moduleOf(f)] ?? 0) + n;
}
const sqlInControllers = files.filter((f) => f.endsWith('.controller.ts') && [...text.get(f).matchAll(sqlRe)].length > 0).map(rel);

function walk(entries) {
  const seen = new Set();
  const stack = entries.map((e) => join(src, e)).filter((e) => text.has(e));
  while (stack.length) {
    const f = stack.pop();
    if (seen.has(f)) continue;
    seen.add(f);
    for (const t of graph.get(f)) if (!shared.has(moduleOf(t)) && !t.endsWith('.module.ts')) stack.push(t);
  }
  const list = [...seen].map(rel).sort();
  return { files: list.length, folders: new Set(list.map((f) => dirname(f))).size, list };
}
const pick = (...candidates) => candidates.filter((c) => existsSync(join(src, c)));
const reservationWalk = walk(pick('reservations/reservations.controller.ts', 'metering/reservations.controller.ts'));
const eventWalk = walk(pick('metering/lifecycle-consumer.ts'));

const figures = {
  files: files.length,
  largest: lines.slice(0, 5),
  over500: lines.filter((l) => l.lines > 500),
  longLines,
  moduleCycles: climbs,
  sqlCalls,
  sqlInControllers,
  reservationWalk,
  eventWalk,
};
if (process.argv.includes('--json')) {
  console.log(JSON.stringify(figures, null, 2));
} else {
  console.log(`source files (not specs): ${figures.files}`);
  console.log(`largest: ${figures.largest.map((l) => `${l.file} ${l.lines}`).join(', ')}`);
  console.log(`over 500 lines: ${figures.over500.length ? figures.over500.map((l) => `${l.file} ${l.lines}`).join(', ') : 'none'}`);
  console.log(`lines over 140 characters: ${longLines}`);
  console.log(
    `imports that climb back up (module A imports B while B reaches A${withTypes ? ', type imports included' : ', value imports'}): ${climbs.reduce((n, c) => n + c.imports, 0)} in ${climbs.length} module pairs`,
  );
  for (const c of climbs) {
    console.log(`  ${c.from} → ${c.to} (${c.imports})`);
    if (process.argv.includes('--why')) for (const e of edgeFiles.get(`${c.from} ${c.to}`)) console.log(`      ${e}`);
  }
  console.log(
    `SQL statements per module (${Object.values(sqlCalls).reduce((a, b) => a + b, 0)} in all): ${Object.entries(sqlCalls)
      .sort((a, b) => b[1] - a[1])
      .map(([m, n]) => `${m} ${n}`)
      .join(', ')}`,
  );
  console.log(`SQL in controllers: ${sqlInControllers.join(', ') || 'none'}`);
  console.log(`a reservation's value imports from its controller: ${reservationWalk.files} files in ${reservationWalk.folders} folders`);
  console.log(`a lifecycle event's value imports from its consumer: ${eventWalk.files} files in ${eventWalk.folders} folders`);
}
