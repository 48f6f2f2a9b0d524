import { describe, expect, it } from 'vitest';
import { jsonWithBigints, writeCall } from './batch-write';
import type { TransactionWrite } from './wallet-store';

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

describe('writeCall', () => {
  it('writes each transaction and entry row as the generic bigint-to-string JSON of its values wrote them before', () => {
    const at = new Date(1_700_000_000_123);
    const write: TransactionWrite = {
      accountId: 'acct_1',
      kind: 'settlement',
      idempotencyKey: 'hold_1:settle',
      fingerprint: 'f'.repeat(64),
      amount: -1_500_000n,
      holdId: 'hold_1',
      grantId: null,
      reference: 'rt_1',
      after: { total: 98_500_000n, held: 0n, available: 98_500_000n },
      explanation: { charged: 1_500_000n, released: 500_000n, parts: [{ grantId: 'g', amount: 5n }], note: undefined, reason: null },
      at,
      entries: [
        { account: 'hold:hold_1', amount: 2_000_000n },
        { account: 'consumption', amount: -1_500_000n },
        { account: 'grant:g', amount: -500_000n },
      ],
      expectedVersion: 7n,
    };
    const [txs, entries] = writeCall([write, { ...write, idempotencyKey: 'hold_1:adjust', expectedVersion: 8n }]).values as string[];
    const oldTx = (w: TransactionWrite, ord: number) => ({
      ord,
      account_id: w.accountId,
      kind: w.kind,
      key: w.idempotencyKey,
      fingerprint: w.fingerprint,
      amount: w.amount,
      hold_id: w.holdId,
      grant_id: w.grantId,
      reference: w.reference,
      total_after: w.after.total,
      held_after: w.after.held,
      available_after: w.after.available,
      explanation: w.explanation,
      at: w.at,
    });
    const oldEntries = (w: TransactionWrite) =>
      w.entries.map((e, i) => ({ account_id: w.accountId, key: w.idempotencyKey, line: i + 1, account: e.account, amount: e.amount }));
    const second = { ...write, idempotencyKey: 'hold_1:adjust' };
    expect(txs).toBe(JSON.stringify([oldTx(write, 0), oldTx(second, 1)], bigintAsString));
    expect(entries).toBe(JSON.stringify([...oldEntries(write), ...oldEntries(second)], bigintAsString));
  });
});
