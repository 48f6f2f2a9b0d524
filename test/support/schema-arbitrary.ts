import fc from 'fast-check';

/**
 * fast-check arbitraries from the JSON Schemas of an OpenAPI 3.1 document: values a schema accepts,
 * values at and just past its bounds, and values of the wrong type. Covers what the service's
 * document uses (type and type lists, enum, const, pattern, formats, lengths, bounds, items,
 * properties, required, additionalProperties, anyOf/oneOf, $ref); anything else is any JSON value.
 */

export type Schema = Record<string, any>;

export interface SchemaContext {
  /** The document, for `$ref`s. */
  doc: Schema;
  /** Values that make a request get past lookups, by property or parameter name (an existing account id). */
  known: Record<string, unknown[]>;
}

const MAX_LIST = 4;
const MAX_TEXT = 40;

export function resolve(ctx: SchemaContext, schema: Schema | undefined): Schema {
  let s = schema ?? {};
  while (typeof s.$ref === 'string') {
    s = s.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((node: Schema, part: string) => node[part], ctx.doc);
  }
  return s;
}

/** Values the schema accepts; for a named property, mostly the known values that exist. */
export function validValue(ctx: SchemaContext, schema: Schema | undefined, name?: string): fc.Arbitrary<unknown> {
  const s = resolve(ctx, schema);
  const known = name ? ctx.known[name] : undefined;
  const generated = generate(ctx, s);
  return known?.length ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: generated }) : generated;
}

function generate(ctx: SchemaContext, s: Schema): fc.Arbitrary<unknown> {
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const alternatives = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((a) => validValue(ctx, a)));
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (types.length === 0) return s.properties ? objectValue(ctx, s) : fc.jsonValue({ maxDepth: 2 });
  return fc.oneof(...types.map((type) => typed(ctx, s, type)));
}

function typed(ctx: SchemaContext, s: Schema, type: string): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
      if (s.format === 'date-time') {
        return fc
          .date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2035-12-31T00:00:00Z'), noInvalidDate: true })
          .map((d) => d.toISOString());
      }
      if (typeof s.pattern === 'string') {
        return fc
          .stringMatching(new RegExp(s.pattern))
          .filter((v) => v.length >= (s.minLength ?? 0) && v.length <= (s.maxLength ?? Infinity));
      }
      return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.max(s.minLength ?? 0, Math.min(s.maxLength ?? MAX_TEXT, MAX_TEXT)) });
    case 'integer':
      return fc.integer({ min: s.minimum ?? -1_000_000, max: s.maximum ?? 1_000_000 });
    case 'number':
      return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(validValue(ctx, s.items), {
        minLength: s.minItems ?? 0,
        maxLength: Math.max(s.minItems ?? 0, Math.min(s.maxItems ?? MAX_LIST, MAX_LIST)),
      });
    default:
      return objectValue(ctx, s);
  }
}

function objectValue(ctx: SchemaContext, s: Schema): fc.Arbitrary<unknown> {
  const properties = (s.properties ?? {}) as Record<string, Schema>;
  const names = Object.keys(properties);
  if (names.length === 0) {
    return s.additionalProperties === false
      ? fc.constant({})
      : fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
  }
  const required = new Set<string>(s.required ?? []);
  return fc.record(Object.fromEntries(names.map((n) => [n, validValue(ctx, properties[n], n)])), {
    requiredKeys: names.filter((n) => required.has(n)),
  });
}

/** Values at a schema's bounds and one step past them (lengths, numbers, list sizes). */
export function boundaryValues(ctx: SchemaContext, schema: Schema | undefined): unknown[] {
  const s = resolve(ctx, schema);
  const out: unknown[] = [];
  for (const n of [s.minLength, s.maxLength]) {
    if (typeof n === 'number') out.push('a'.repeat(n), 'a'.repeat(n + 1), ...(n > 0 ? ['a'.repeat(n - 1)] : []));
  }
  for (const n of [s.minimum, s.maximum]) {
    if (typeof n === 'number') out.push(n, n - 1, n + 1, n + 0.5, String(n));
  }
  if (typeof s.maxItems === 'number') out.push(Array.from({ length: Math.min(s.maxItems + 1, 10_001) }, () => 0));
  if (typeof s.minItems === 'number') out.push([]);
  if (typeof s.pattern === 'string') out.push('', 'a'.repeat(300), ' x', 'x\n');
  if (s.format === 'date-time') out.push('2026-02-30T00:00:00Z', '2026-12-01', '0000-01-01T00:00:00Z', '275760-09-13T00:00:00.000Z', 'now');
  if (Array.isArray(s.enum)) out.push(`${String(s.enum[0])}x`, String(s.enum[0]).toUpperCase(), '');
  return out;
}

/** Values of every JSON type, so that each is the wrong type for most schemas. */
export const wrongTypes: unknown[] = [null, true, 0, -1, 1.5, '', 'text', [], [1], {}, { a: 1 }];

/** Every path into a JSON value (object members and array items), for edits of one field. */
export function pathsOf(value: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (Array.isArray(value)) value.slice(0, MAX_LIST).forEach((v, i) => pathsOf(v, [...prefix, i], out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push([...prefix, k]);
      pathsOf(v, [...prefix, k], out);
    }
    out.push([...prefix, 'extra']);
  }
  return out;
}

/** A copy of `value` with the member at `path` set to `replacement` (removed when it is undefined). */
export function withEdit(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const copy: any = Array.isArray(value) ? [...value] : value && typeof value === 'object' ? { ...value } : {};
  const [head, ...rest] = path as [string | number, ...(string | number)[]];
  const next = withEdit(copy[head], rest, replacement);
  if (next === undefined && !Array.isArray(copy)) delete copy[head];
  else copy[head] = next;
  return copy;
}
