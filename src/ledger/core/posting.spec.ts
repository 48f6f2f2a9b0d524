import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Accounts, assertBalanced, grantDeltas, Posting, walletDelta, type LedgerAccount } from './posting';

const accountArb = fc.constantFrom<LedgerAccount>(
  Accounts.grant('a'),
  Accounts.grant('b'),
  Accounts.hold('h'),
  Accounts.issued,
  Accounts.consumption,
  Accounts.expired,
  Accounts.debt,
);

describe('Posting', () => {
  it('always produces balanced entries whose wallet deltas sum to zero', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(accountArb, accountArb, fc.bigInt({ min: 0n, max: 10n ** 12n }))), (moves) => {
        const posting = new Posting();
        for (const [from, to, amount] of moves) posting.move(from, to, amount);
        const entries = posting.entries();
        assertBalanced(entries);
        expect(entries.every((e) => e.amount !== 0n)).toBe(true);
        const d = walletDelta(entries);
        expect(d.grants + d.holds + d.issued + d.consumed + d.expired + d.debt).toBe(0n);
        expect(grantDeltas(entries).reduce((a, g) => a + g.amount, 0n)).toBe(d.grants);
      }),
    );
  });

  it('nets transfers per account and refuses negative ones', () => {
    const entries = new Posting()
      .move(Accounts.hold('h'), Accounts.consumption, 3n)
      .move(Accounts.hold('h'), Accounts.grant('g'), 7n)
      .entries();
    expect(entries).toEqual([
      { account: 'hold:h', amount: -10n },
      { account: 'consumption', amount: 3n },
      { account: 'grant:g', amount: 7n },
    ]);
    expect(() => new Posting().move('issued', 'debt', -1n)).toThrow(RangeError);
    expect(() => assertBalanced([{ account: 'issued', amount: 1n }])).toThrow(/unbalanced/);
  });
});
