/**
 * canonicalJson (canonical-json.ts) computed by PostgreSQL: an SQL expression, built here from a
 * description of the value, whose text is what canonicalJson gives for the same value. The set-based
 * writers (the monthly reset's bulk grant and audit rows) build fingerprints and hashed records in
 * the statement that writes them, thousands of rows at a time, instead of one by one in Node.
 *
 * Keys are sorted here, by canonicalJson's order, so an object's expression is canonical by
 * construction. Strings are escaped by PostgreSQL's `to_json(text)`, which escapes exactly what
 * JSON.stringify escapes (`"`, `\`, control characters as `\b \f \n \r \t` or `\u00xx`; nothing
 * else). Both are tested against canonicalJson with quotes, unicode, control characters, bigints
 * above 2^53 and nulls (test/integration/canonical-json-sql.test.ts). Limits: integers only (no
 * fractions), instants in years 0–9999.
 */
export type JsonSql =
  /** An SQL text expression: a JSON string (null when NULL). */
  | { kind: 'text'; sql: string }
  /** An SQL integer expression (bigint included): a JSON number as canonicalJson writes a bigint (null when NULL). */
  | { kind: 'integer'; sql: string }
  /** An SQL timestamptz expression: its toISOString() as a JSON string (null when NULL). */
  | { kind: 'instant'; sql: string }
  /** An SQL text expression that is canonical JSON already (null when NULL). */
  | { kind: 'json'; sql: string }
  | { kind: 'constant'; value: string | number | boolean | null }
  | { kind: 'object'; fields: Readonly<Record<string, JsonSql>> };

export const jsonSql = {
  text: (sql: string): JsonSql => ({ kind: 'text', sql }),
  integer: (sql: string): JsonSql => ({ kind: 'integer', sql }),
  instant: (sql: string): JsonSql => ({ kind: 'instant', sql }),
  json: (sql: string): JsonSql => ({ kind: 'json', sql }),
  constant: (value: string | number | boolean | null): JsonSql => ({ kind: 'constant', value }),
  object: (fields: Readonly<Record<string, JsonSql>>): JsonSql => ({ kind: 'object', fields }),
};

/** Constant text written into the SQL: code's own keys and values only, never data (data are expressions or parameters). */
const SAFE_CONSTANT = /^[A-Za-z0-9_.:\- ]*$/;

/** The canonical JSON text of `value`, as an SQL text expression. */
export function canonicalJsonSql(value: JsonSql): string {
  const parts: ({ constant: string } | { sql: string })[] = [];
  const put = (text: string): void => {
    const last = parts[parts.length - 1];
    if (last && 'constant' in last) last.constant += text;
    else parts.push({ constant: text });
  };
  const walk = (v: JsonSql): void => {
    switch (v.kind) {
      case 'text':
        parts.push({ sql: `coalesce(to_json((${v.sql})::text)::text, 'null')` });
        return;
      case 'integer':
        parts.push({ sql: `coalesce(((${v.sql})::numeric)::text, 'null')` });
        return;
      case 'instant':
        parts.push({ sql: `coalesce('"' || ${isoSql(v.sql)} || '"', 'null')` });
        return;
      case 'json':
        parts.push({ sql: `coalesce((${v.sql})::text, 'null')` });
        return;
      case 'constant': {
        if (typeof v.value === 'number' && !Number.isInteger(v.value)) throw new TypeError('canonicalJsonSql: integer constants only');
        if (typeof v.value === 'string' && !SAFE_CONSTANT.test(v.value)) {
          throw new TypeError(`canonicalJsonSql: ${JSON.stringify(v.value)} is data: pass it as an expression or a parameter`);
        }
        put(JSON.stringify(v.value));
        return;
      }
      case 'object': {
        // canonicalJson's order: UTF-16 code units (keys here are plain ASCII, so any order of code units agrees).
        const keys = Object.keys(v.fields).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        put('{');
        keys.forEach((key, i) => {
          if (!/^[A-Za-z0-9_]+$/.test(key)) throw new TypeError(`canonicalJsonSql: key ${JSON.stringify(key)} is not a plain name`);
          put(`${i > 0 ? ',' : ''}${JSON.stringify(key)}:`);
          walk(v.fields[key]!);
        });
        put('}');
        return;
      }
    }
  };
  walk(value);
  return parts.map((p) => ('constant' in p ? `'${p.constant}'` : p.sql)).join(' || ');
}

/** A timestamptz as Date.prototype.toISOString writes it (UTC, milliseconds), in SQL. */
export function isoSql(sql: string): string {
  return `to_char((${sql}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** The SHA-256 (hex) of an SQL text expression's UTF-8 bytes, as sha256Hex computes it. */
export function sha256HexSql(sql: string): string {
  return `encode(sha256(convert_to(${sql}, 'UTF8')), 'hex')`;
}
