import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chargeFor, holdFor, MS_PER_HOUR, settleHold } from './charges';

const SMALL = 1_000_000n; // 1.000000 credit per hour
const rate = fc.bigInt({ min: 0n, max: 10_000_000_000n }); // up to 10,000 credits/hour
const ms = fc.bigInt({ min: 0n, max: 400n * 24n * MS_PER_HOUR }); // up to 400 days

describe('chargeFor', () => {
  it('charges 30 minutes of small as 0.500000 credits', () => {
    expect(chargeFor(SMALL, 30 * 60_000)).toBe(500_000n);
  });

  it('rounds up a partial micro-credit', () => {
    // 1 credit/hour is 1 µcr per 3.6 ms.
    expect(chargeFor(SMALL, 1)).toBe(1n);
    expect(chargeFor(SMALL, 3)).toBe(1n);
    expect(chargeFor(SMALL, 4)).toBe(2n);
    expect(chargeFor(SMALL, 3_600)).toBe(1_000n);
    expect(chargeFor(SMALL, 3_601)).toBe(1_001n);
    expect(chargeFor(7_000_000n, 0)).toBe(0n);
    expect(chargeFor(0n, 1_000_000)).toBe(0n);
  });

  it('is exact for whole hours and handles amounts beyond 2^53', () => {
    expect(chargeFor(20_000_000n, 3_600_000)).toBe(20_000_000n);
    const big = 9_000_000_000_000_000n;
    expect(chargeFor(big, 3_600_000n)).toBe(big);
  });

  it('refuses negative or fractional inputs', () => {
    expect(() => chargeFor(-1n, 1)).toThrow(RangeError);
    expect(() => chargeFor(1n, -1)).toThrow(RangeError);
    expect(() => chargeFor(1n, 1.5)).toThrow(RangeError);
    expect(() => chargeFor(1n, Number.NaN)).toThrow(RangeError);
  });

  it('is the smallest whole micro-credit amount covering rate × time (never fractional, never under)', () => {
    fc.assert(
      fc.property(rate, ms, (r, t) => {
        const c = chargeFor(r, t);
        expect(typeof c).toBe('bigint');
        expect(c * MS_PER_HOUR >= r * t).toBe(true);
        expect(c === 0n || (c - 1n) * MS_PER_HOUR < r * t).toBe(true);
      }),
    );
  });

  it('is monotonic in running time and in rate', () => {
    fc.assert(
      fc.property(rate, ms, ms, (r, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(chargeFor(r, lo) <= chargeFor(r, hi)).toBe(true);
      }),
    );
    fc.assert(
      fc.property(rate, rate, ms, (a, b, t) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(chargeFor(lo, t) <= chargeFor(hi, t)).toBe(true);
      }),
    );
  });

  it('charges a whole interval no more than the sum of its rounded pieces, and less than one µcr per piece below it', () => {
    fc.assert(
      fc.property(rate, fc.array(fc.bigInt({ min: 0n, max: 48n * MS_PER_HOUR }), { minLength: 1, maxLength: 50 }), (r, pieces) => {
        const whole = chargeFor(
          r,
          pieces.reduce((s, p) => s + p, 0n),
        );
        const summed = pieces.reduce((s, p) => s + chargeFor(r, p), 0n);
        expect(whole <= summed).toBe(true);
        expect(summed - whole < BigInt(pieces.length)).toBe(true);
      }),
    );
  });
});

describe('holdFor', () => {
  it('holds the charge for the whole reservation', () => {
    expect(holdFor(SMALL, 10)).toBe(166_667n); // 1/6 credit, rounded up
    expect(holdFor(SMALL, 60)).toBe(1_000_000n);
    expect(holdFor(7_000_000n, 1440)).toBe(168_000_000n);
    expect(holdFor(SMALL, 0)).toBe(0n);
  });

  it('equals chargeFor over the same minutes, so a runtime that uses its whole reservation is charged exactly the hold', () => {
    fc.assert(
      fc.property(rate, fc.integer({ min: 0, max: 1440 }), (r, minutes) => {
        expect(holdFor(r, minutes)).toBe(chargeFor(r, minutes * 60_000));
      }),
    );
  });

  it('refuses negative or fractional minutes', () => {
    expect(() => holdFor(SMALL, -1)).toThrow(RangeError);
    expect(() => holdFor(SMALL, 0.5)).toThrow(RangeError);
  });
});

describe('settleHold', () => {
  it('charges the running time and releases the rest', () => {
    expect(settleHold(1_000_000n, SMALL, 30 * 60_000)).toEqual({ charged: 500_000n, released: 500_000n });
  });

  it('never charges more than the hold', () => {
    expect(settleHold(166_667n, SMALL, 3 * 3_600_000)).toEqual({ charged: 166_667n, released: 0n });
    fc.assert(
      fc.property(rate, fc.integer({ min: 0, max: 1440 }), ms, (r, minutes, t) => {
        const hold = holdFor(r, minutes);
        const { charged, released } = settleHold(hold, r, t);
        expect(charged <= hold && charged >= 0n && released >= 0n).toBe(true);
        expect(charged + released).toBe(hold);
        expect(charged).toBe(chargeFor(r, t) < hold ? chargeFor(r, t) : hold);
      }),
    );
  });
});
