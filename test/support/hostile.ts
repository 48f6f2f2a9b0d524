import fc from 'fast-check';
import { expect } from 'vitest';
import { ERROR_STATUS } from '../../src/common/errors/error-codes';

/**
 * Hostile input and the assertions every answer to it must pass, kept apart from any one
 * operation so that a generator that derives requests from the OpenAPI document can reuse them.
 */

const CODES = new Set(Object.keys(ERROR_STATUS));

/**
 * What a caller may get back for anything it sends: never a 5xx; every 4xx the contract's error
 * body with a known code; every 400 listing its findings, each naming a field.
 */
export function expectContractAnswer(res: { status: number; body: unknown }, what = ''): void {
  const context = `${what} → ${res.status} ${JSON.stringify(res.body)?.slice(0, 300)}`;
  expect(res.status, context).toBeLessThan(500);
  if (res.status < 400) return;
  const error = (res.body as { error?: { code?: unknown; message?: unknown; findings?: unknown } } | null)?.error;
  expect(CODES.has(String(error?.code)), context).toBe(true);
  expect(typeof error?.message, context).toBe('string');
  if (res.status === 400) {
    expect(Array.isArray(error?.findings) && error.findings.length > 0, context).toBe(true);
    for (const finding of error!.findings as { field?: unknown; message?: unknown }[]) {
      expect(typeof finding.field, context).toBe('string');
      expect(typeof finding.message, context).toBe('string');
    }
  }
}

export const nestedArrays = (depth: number, inner = ''): string => '['.repeat(depth) + inner + ']'.repeat(depth);
export const nestedObjects = (depth: number, inner = '1'): string => '{"a":'.repeat(depth) + inner + '}'.repeat(depth);

/** JSON values no field of the API expects: huge, deep, odd unicode, NUL, boundary numbers, prototype keys. */
export function hostileValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom(
      0,
      -0,
      -1,
      2 ** 31,
      2 ** 53,
      Number.MAX_SAFE_INTEGER + 2,
      1e308,
      -1e308,
      5e-324,
      '',
      ' ',
      '\u0000',
      'evt\u0000x',
      '\u202Eacc_1',
      '\uFEFF',
      '\uD83D\uDE00'.repeat(200),
      '\uD800',
      '9'.repeat(400),
      '0.0000001',
      '1e309',
      '=1+1',
      '../../etc/passwd',
      "'; DROP TABLE accounts; --",
      'x'.repeat(70_000),
      true,
      null,
      [],
      {},
    ),
    fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constant(JSON.parse('{"__proto__":{"polluted":true}}') as unknown),
    fc.constant({ constructor: { prototype: { polluted: true } } }),
    fc.integer({ min: 0, max: 40 }).map((depth) => JSON.parse(nestedArrays(depth, '1')) as unknown),
    fc.array(fc.constant(0), { minLength: 1_000, maxLength: 5_000 }),
  );
}

/**
 * Raw bodies made from a valid one by a textual attack the parsed value cannot carry: nesting far
 * past any limit, a key twice (the first or the last one wins depending on the parser), a
 * `__proto__` or `constructor.prototype` member, NUL bytes, a lone surrogate, text after the value.
 */
export function hostileText(valid: Record<string, unknown>): fc.Arbitrary<{ name: string; text: string }> {
  const json = JSON.stringify(valid);
  const firstKey = Object.keys(valid)[0] ?? 'id';
  const inside = json.slice(1, -1);
  return fc.constantFrom(
    { name: 'arrays 5,000 deep', text: nestedArrays(5_000) },
    { name: 'objects 5,000 deep', text: nestedObjects(5_000) },
    { name: 'arrays 100,000 deep', text: nestedArrays(100_000) },
    { name: 'objects 100,000 deep', text: nestedObjects(100_000) },
    { name: 'a field 3,000 deep', text: `{${inside},"extra":${nestedArrays(3_000)}}` },
    { name: 'a key twice', text: `{${inside},${JSON.stringify(firstKey)}:${JSON.stringify(valid[firstKey])}}` },
    {
      name: 'a key twice with escapes',
      text: `{${inside},"\\u${firstKey.charCodeAt(0).toString(16).padStart(4, '0')}${firstKey.slice(1)}":1}`,
    },
    { name: '__proto__', text: `{${inside},"__proto__":{"admin":true}}` },
    { name: 'constructor.prototype', text: `{${inside},"constructor":{"prototype":{"admin":true}}}` },
    { name: 'an escaped NUL', text: `{${inside},"extra":"a\\u0000b"}` },
    { name: 'a raw NUL byte', text: `{${inside},"extra":"a\u0000b"}` },
    { name: 'a lone surrogate', text: `{${inside},"extra":"\\ud800"}` },
    { name: 'text after the value', text: `${json}{}` },
    { name: 'a BOM first', text: `\uFEFF${json}` },
    { name: 'many values', text: `[${'0,'.repeat(600_000)}0]` },
  );
}
