import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { grantsArb } from '../../../test/support/ledger-arbitraries';
import { inBurnOrder, sumParts } from './burn-order';
import { capCharge, splitSettlement } from './holds';

describe('splitSettlement', () => {
  const heldArb = grantsArb.chain((grants) =>
    fc.tuple(
      fc.constant(grants),
      fc.array(fc.bigInt({ min: 0n, max: 4_000_000n }), { minLength: grants.length, maxLength: grants.length }),
    ),
  );

  it('charges at most the hold, in burn order, and releases exactly the rest of each allocation', () => {
    fc.assert(
      fc.property(heldArb, fc.bigInt({ min: 0n, max: 40_000_000n }), ([grants, helds], requested) => {
        const parts = grants.map((g, i) => ({ grant: g, held: helds[i]! }));
        const total = helds.reduce((a, b) => a + b, 0n);
        const split = splitSettlement(parts, requested);
        expect(split.charge).toBe(requested < total ? requested : total);
        expect(split.charge + split.release).toBe(total);
        expect(sumParts(split.charged)).toBe(split.charge);
        expect(sumParts(split.released)).toBe(split.release);
        // Per allocation: charged + released = held.
        for (const p of parts) {
          const c = split.charged.find((x) => x.grantId === p.grant.id)?.amount ?? 0n;
          const r = split.released.find((x) => x.grantId === p.grant.id)?.amount ?? 0n;
          expect(c + r).toBe(p.held);
        }
        // Burn order: an allocation is charged only once every earlier one is fully charged.
        const ordered = inBurnOrder(parts.map((p) => ({ ...p.grant, held: p.held })));
        let seenPartial = false;
        for (const p of ordered) {
          const c = split.charged.find((x) => x.grantId === p.id)?.amount ?? 0n;
          if (seenPartial) expect(c).toBe(0n);
          if (c < p.held) seenPartial = true;
        }
      }),
    );
  });

  it('caps a charge at the hold and refuses a negative one', () => {
    expect(capCharge(5n, 3n)).toBe(3n);
    expect(capCharge(2n, 3n)).toBe(2n);
    expect(() => capCharge(-1n, 3n)).toThrow(RangeError);
  });
});
