import { describe, expect, it } from 'vitest';
import { JSON_LIMITS, jsonLimitProblem, jsonTextOf } from './json-limits';

const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const nestedObjects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe('jsonLimitProblem', () => {
  it('accepts what the API sends: nesting up to the limit, strings with escapes, keys repeated in different objects', () => {
    expect(jsonLimitProblem(nestedArrays(JSON_LIMITS.maxDepth))).toBeUndefined();
    expect(jsonLimitProblem(nestedObjects(JSON_LIMITS.maxDepth))).toBeUndefined();
    expect(jsonLimitProblem('{"a":"[[[{{{\\"","b":{"a":1},"c":[{"a":1},{"a":2}]}')).toBeUndefined();
    expect(jsonLimitProblem('{"text":"a\\\\u0000 is not a NUL: the backslash is escaped"}')).toBeUndefined();
    expect(jsonLimitProblem('')).toBeUndefined();
  });

  it.each([5_000, 100_000])('refuses arrays and objects %i levels deep, without recursing', (depth) => {
    expect(jsonLimitProblem(nestedArrays(depth))).toBe('must not be nested more than 32 levels deep');
    expect(jsonLimitProblem(nestedObjects(depth))).toBe('must not be nested more than 32 levels deep');
    expect(jsonLimitProblem(nestedArrays(JSON_LIMITS.maxDepth + 1))).toBe('must not be nested more than 32 levels deep');
  });

  it('refuses more values than the limit', () => {
    expect(jsonLimitProblem(`[${Array(10).fill(0).join(',')}]`, { maxDepth: 32, maxValues: 10 })).toBeUndefined();
    expect(jsonLimitProblem(`[${Array(11).fill(0).join(',')}]`, { maxDepth: 32, maxValues: 10 })).toBe('must not hold more than 10 values');
  });

  it('refuses NUL characters, escaped or raw', () => {
    expect(jsonLimitProblem('{"id":"evt\\u0000"}')).toBe('must not contain NUL characters');
    expect(jsonLimitProblem('{"id":"evt\u0000"}')).toBe('must not contain NUL characters');
  });

  it('refuses a key twice in one object, also when spelled with escapes, and a __proto__ key', () => {
    expect(jsonLimitProblem('{"a":1,"b":{"c":1},"a":2}')).toBe('must not have the key "a" twice in one object');
    expect(jsonLimitProblem('{"a":1,"\\u0061":2}')).toBe('must not have the key "a" twice in one object');
    expect(jsonLimitProblem('[{"a":1},{"x":{"a":1,"a":1}}]')).toBe('must not have the key "a" twice in one object');
    expect(jsonLimitProblem('{"data":{"__proto__":{"admin":true}}}')).toBe('must not have a __proto__ key');
    expect(jsonLimitProblem('{"data":{"\\u005f_proto__":1}}')).toBe('must not have a __proto__ key');
  });

  it('refuses an escaped lone surrogate, and keeps escaped pairs and escaped backslashes', () => {
    const lone = 'must not contain a lone UTF-16 surrogate (\\uD800-\\uDFFF not in a pair)';
    expect(jsonLimitProblem('{"name":"a\\ud800"}')).toBe(lone);
    expect(jsonLimitProblem('{"name":"a\\uDC00b"}')).toBe(lone);
    expect(jsonLimitProblem('{"name":"\\ud83d\\u0041"}')).toBe(lone);
    expect(jsonLimitProblem('{"\\ud800":1}')).toBe(lone);
    expect(jsonLimitProblem('{"name":"\\ud83d\\ude00 \\u00e9 \\\\ud800"}')).toBeUndefined();
    expect(JSON.parse('{"name":"\\ud83d\\ude00"}')).toEqual({ name: '\u{1F600}' });
  });
});

describe('jsonTextOf', () => {
  it('decodes UTF-8 and checks the limits', () => {
    expect(jsonTextOf(Buffer.from('{"name":"clé 😀"}'))).toEqual({ text: '{"name":"clé 😀"}', problem: undefined });
    expect(jsonTextOf(Buffer.from('[[[1]]]')).problem).toBeUndefined();
    expect(jsonTextOf(Buffer.from(`{"a":${nestedArrays(5_000)}}`)).problem).toBe('must not be nested more than 32 levels deep');
  });

  it.each([
    ['a lone continuation byte', [0x80]],
    ['a truncated sequence', [0xc3, 0x28]],
    ['0xFF', [0xff]],
    ['an encoded surrogate (CESU-8)', [0xed, 0xa0, 0x80]],
    ['an overlong encoding of "/"', [0xc0, 0xaf]],
    ['Latin-1 é', [0xe9]],
  ])('refuses %s instead of storing U+FFFD', (_what, bytes) => {
    const body = Buffer.concat([Buffer.from('{"reason":"a'), Buffer.from(bytes), Buffer.from('b"}')]);
    expect(jsonTextOf(body).problem).toBe('must be UTF-8 (bytes that are no UTF-8 character were found)');
  });
});
