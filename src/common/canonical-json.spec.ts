import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json';

/** The first, plainly written version: the one whose output every stored fingerprint and audit hash was made with. */
function reference(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('non-finite number cannot be canonicalized');
      return JSON.stringify(value);
    case 'bigint':
      return value.toString();
    case 'string':
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((v) => reference(v ?? null)).join(',')}]`;
      if (value instanceof Date) return JSON.stringify(value.toISOString());
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${reference(v)}`).join(',')}}`;
    }
    default:
      throw new TypeError(`cannot canonicalize a ${typeof value}`);
  }
}

/** A deterministic pseudo-random generator (the same values on every run). */
function generator(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const KEYS = ['a', 'b', 'B', 'aa', '', 'é', 'z\u0000', '\ud83d\ude00', '\uffff', '10', '9', 'amount', 'holdId', '"q"', 'toJSON_'];

function randomValue(next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 3 ? 7 : 10));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return next() < 0.5;
    case 2:
      return [0, -0, 1.5, 1e21, 1e-7, -123456789, 2 ** 53, 0.1 + 0.2][Math.floor(next() * 8)];
    case 3:
      return BigInt(Math.floor(next() * 1e12)) * (next() < 0.5 ? -1n : 1n);
    case 4:
      return KEYS[Math.floor(next() * KEYS.length)]! + '\n\t\\';
    case 5:
      return new Date(Math.floor(next() * 4e12));
    case 6:
      return undefined;
    case 7:
    case 8: {
      const out: Record<string, unknown> = {};
      for (let i = Math.floor(next() * 6); i > 0; i--) out[KEYS[Math.floor(next() * KEYS.length)]!] = randomValue(next, depth + 1);
      return out;
    }
    default:
      return Array.from({ length: Math.floor(next() * 5) }, () => randomValue(next, depth + 1));
  }
}

describe('canonicalJson', () => {
  it('writes what the reference writes, for objects, arrays, strings, numbers, bigints, dates and undefined', () => {
    const next = generator(23);
    for (let i = 0; i < 5_000; i++) {
      const value = { v: randomValue(next, 0), w: randomValue(next, 0) };
      expect(canonicalJson(value)).toBe(reference(value));
    }
  });

  it('orders the keys of objects small and large (sorted in place up to 24 keys, by the default sort past them) as the reference does', () => {
    const next = generator(7);
    for (const size of [0, 1, 2, 23, 24, 25, 200]) {
      for (let round = 0; round < 20; round++) {
        const value: Record<string, unknown> = {};
        for (let i = 0; i < size; i++) value[`${KEYS[Math.floor(next() * KEYS.length)]!}${Math.floor(next() * 1000)}`] = i;
        expect(canonicalJson(value)).toBe(reference(value));
      }
    }
  });

  it('writes array holes and undefined items as the reference does', () => {
    const sparse = [1, , 3, undefined];
    expect(canonicalJson(sparse)).toBe(reference(sparse));
    expect(canonicalJson({ a: undefined, b: [undefined] })).toBe('{"b":[null]}');
  });

  it('refuses what has no JSON form, as the reference does', () => {
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(TypeError);
    expect(() => canonicalJson({ a: () => 1 })).toThrow(TypeError);
    expect(() => canonicalJson([Symbol('s')])).toThrow(TypeError);
  });
});
