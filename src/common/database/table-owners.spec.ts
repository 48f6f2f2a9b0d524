import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { TABLE_OWNERS } from './table-owners';

const SRC = join(__dirname, '..', '..');

interface SourceFile {
  /** Relative to src/, with forward slashes. */
  path: string;
  text: string;
}

interface SqlWrite {
  line: number;
  /** The written table, or null when its name is computed (`INSERT INTO ${table}`). */
  table: string | null;
}

/** `INSERT INTO t`, `UPDATE t` (not `FOR UPDATE`, `DO UPDATE`, `FOR NO KEY UPDATE`), `DELETE FROM t`, `COPY t`, `TRUNCATE [TABLE] t`. */
const WRITE = /\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM|COPY|TRUNCATE(?:\s+TABLE)?)\s+(?:ONLY\s+)?"?([A-Za-z_][A-Za-z0-9_]*|\$\{\})/gi;
const NOT_A_WRITE = /\b(FOR|DO|KEY)\s+$/i;
const COMPUTED = '${}';

/** The SQL writes in a file's string and template literals (a template's substitutions read as `${}`). */
export function sqlWrites(fileName: string, text: string): SqlWrite[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: SqlWrite[] = [];
  const scan = (node: ts.Node, literal: string): void => {
    const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    for (const m of literal.matchAll(WRITE)) {
      if (/^update$/i.test(m[1]!) && NOT_A_WRITE.test(literal.slice(0, m.index))) continue;
      const name = m[2]!;
      found.push({
        line: start + (literal.slice(0, m.index).match(/\n/g)?.length ?? 0),
        table: name === COMPUTED ? null : name.toLowerCase(),
      });
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) scan(node, node.text);
    else if (ts.isTemplateExpression(node)) scan(node, node.head.text + node.templateSpans.map((s) => COMPUTED + s.literal.text).join(''));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The tables a module file says it owns (`Owns: a, b` in its opening comment). */
export function ownsStatement(text: string): string[] {
  const m = /^(?:\s*(?:\/\/|\/\*\*?|\*).*\n)*?\s*(?:\/\/|\/\*\*?|\*)\s*Owns:\s*([a-z0-9_, ]+)/.exec(text);
  return m
    ? m[1]!
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t.length > 0)
    : [];
}

const moduleOf = (path: string): string => path.split('/')[0]!;

/** Every write to a table from outside its owner's folder, and every computed table name outside a module that owns tables. */
export function ownerViolations(files: readonly SourceFile[], owners: Readonly<Record<string, string>> = TABLE_OWNERS): string[] {
  const owning = new Set(Object.values(owners));
  const problems: string[] = [];
  for (const f of files) {
    for (const w of sqlWrites(f.path, f.text)) {
      if (w.table === null) {
        if (!owning.has(moduleOf(f.path))) {
          problems.push(`src/${f.path}:${w.line} writes a table whose name is computed, outside any owning module`);
        }
        continue;
      }
      const owner = owners[w.table];
      if (owner !== undefined && owner !== moduleOf(f.path)) {
        problems.push(`src/${f.path}:${w.line} writes ${w.table}, owned by src/${owner}/: ask the owner's method`);
      }
    }
  }
  return problems;
}

function sourceFiles(dir: string): SourceFile[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    if (!e.name.endsWith('.ts') || e.name.endsWith('.spec.ts')) return [];
    return [{ path: relative(SRC, full).split(sep).join('/'), text: readFileSync(full, 'utf8') }];
  });
}

describe('one owner per table', () => {
  const files = sourceFiles(SRC);

  it('every SQL write under src/ comes from the module that owns its table', () => {
    expect(ownerViolations(files)).toEqual([]);
  });

  it('each owning module says which tables it owns, at the top of its module file, as the map does', () => {
    const stated = new Map<string, string[]>();
    for (const f of files.filter((f) => f.path.endsWith('.module.ts'))) {
      for (const table of ownsStatement(f.text)) stated.set(table, [...(stated.get(table) ?? []), f.path]);
    }
    const expected = Object.entries(TABLE_OWNERS).map(([table, owner]) => [table, [`${owner}/${owner}.module.ts`]]);
    expect([...stated].sort()).toEqual(expected.sort());
  });

  it('every entity table has an owner', () => {
    const entityTables = files.flatMap((f) => [...f.text.matchAll(/@Entity\(\{ name: '([a-z0-9_]+)' \}\)/g)].map((m) => m[1]!));
    expect(entityTables.length).toBeGreaterThan(30);
    expect(entityTables.filter((t) => !(t in TABLE_OWNERS))).toEqual([]);
  });

  it('finds a write from a module that does not own the table, in a CTE or a template, and names file and table', () => {
    const planted: SourceFile = {
      path: 'plans/sneaky.ts',
      text: [
        `const ids = 'x';`,
        'export const SQL = `WITH w AS (',
        '  UPDATE wallets SET issued = 0 WHERE account_id = ANY(${ids}) RETURNING 1',
        ") INSERT INTO audit_log (chain) SELECT 'x' FROM w`;",
        `export const lock = 'SELECT 1 FROM grants FOR UPDATE OF grants';`,
        `export const upsert = 'INSERT INTO plans_cache (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET id = 1';`,
        'export const computed = (t: string) => `DELETE FROM ${t}`;',
      ].join('\n'),
    };
    expect(ownerViolations([planted])).toEqual([
      "src/plans/sneaky.ts:3 writes wallets, owned by src/ledger/: ask the owner's method",
      "src/plans/sneaky.ts:4 writes audit_log, owned by src/audit/: ask the owner's method",
      'src/plans/sneaky.ts:7 writes a table whose name is computed, outside any owning module',
    ]);
    // The owner itself may write it.
    expect(ownerViolations([{ ...planted, path: 'ledger/sneaky.ts' }])).toEqual([
      "src/ledger/sneaky.ts:4 writes audit_log, owned by src/audit/: ask the owner's method",
    ]);
  });

  it("reads an Owns statement in a file's opening comment", () => {
    expect(ownsStatement(`/**\n * The ledger.\n * Owns: wallets, grants\n */\nimport x from 'y';`)).toEqual(['wallets', 'grants']);
    expect(ownsStatement(`// Owns: outbox\nimport x from 'y';`)).toEqual(['outbox']);
    expect(ownsStatement(`import x from 'y';\n`)).toEqual([]);
  });
});
