import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lineAfterWrite, type LowBalanceLine } from './low-balance';

describe('lineAfterWrite', () => {
  it('clears the line and counts one more rise when the balance is at or above it, else leaves both', () => {
    const mark: LowBalanceLine = { line: 5n, rises: 2n };
    expect(lineAfterWrite(mark, 5n)).toEqual({ line: null, rises: 3n });
    expect(lineAfterWrite(mark, 9n)).toEqual({ line: null, rises: 3n });
    expect(lineAfterWrite(mark, 4n)).toEqual(mark);
    expect(lineAfterWrite({ line: null, rises: 2n }, 100n)).toEqual({ line: null, rises: 2n });
  });

  it('run on each write of a batch in turn is run once on the highest balance they leave (what the write statement does)', () => {
    const balance = fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n });
    fc.assert(
      fc.property(
        fc.option(fc.bigInt({ min: 1n, max: 10n ** 12n })),
        fc.bigInt({ min: 0n, max: 10n ** 6n }),
        fc.array(balance, { minLength: 1 }),
        (line, rises, after) => {
          const mark = { line, rises };
          const peak = after.reduce((a, b) => (b > a ? b : a));
          expect(after.reduce(lineAfterWrite, mark)).toEqual(lineAfterWrite(mark, peak));
        },
      ),
    );
  });
});
