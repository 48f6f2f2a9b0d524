import { describe, expect, it } from 'vitest';
import { jsonWithBigints } from './batch-write';

/** The replacer the ledger's write JSON was made with before: the oracle. */
const bigintAsString = (_key: string, value: unknown): unknown => (typeof value === 'bigint' ? value.toString() : value);

describe('jsonWithBigints', () => {
  it('writes what JSON.stringify with bigintAsString writes', () => {
    const values: unknown[] = [
      { amount: -123456n, at: new Date(1_700_000_000_123), nested: { list: [1n, null, undefined, 'x', { y: 2n }], none: undefined } },
      [0n, -0, 1.5, 'a"b', true, null, new Date(0)],
      [1n, , 3],
      { explanation: { held: 1000000n, toGrants: [{ grantId: 'g', amount: 5n }], reason: null }, f: () => 1 },
      12n,
      'text',
    ];
    for (const value of values) expect(jsonWithBigints(value)).toBe(JSON.stringify(value, bigintAsString));
  });
});
