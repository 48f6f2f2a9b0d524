import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { grantsArb, NOW } from '../../../test/support/ledger-arbitraries';
import { allocate, compareBurnOrder, inBurnOrder, isExpired, mergeParts, spendable, sumParts } from './burn-order';
import type { GrantBucket } from './types';

const at = (iso: string | null) => (iso === null ? null : new Date(iso));
const grant = (id: string, expiresAt: string | null, priority = 0, createdAt = '2026-01-01T00:00:00Z', remaining = 1n): GrantBucket => ({
  id,
  remaining,
  priority,
  expiresAt: at(expiresAt),
  createdAt: new Date(createdAt),
});

describe('burn order', () => {
  it('burns earliest expiry first, never-expiring last, then lower priority, then oldest', () => {
    const grants = [
      grant('topup', null, 30),
      grant('promo-late', '2027-03-01T00:00:00Z', 10),
      grant('allowance', '2027-01-01T00:00:00Z', 0),
      grant('admin-same-expiry', '2027-01-01T00:00:00Z', 20),
      grant('old-topup', null, 30, '2025-01-01T00:00:00Z'),
    ];
    expect(inBurnOrder(grants).map((g) => g.id)).toEqual(['allowance', 'admin-same-expiry', 'promo-late', 'old-topup', 'topup']);
  });

  it('is a total order: sorting any permutation gives the same sequence', () => {
    fc.assert(
      fc.property(
        grantsArb.chain((grants) => fc.tuple(fc.constant(grants), fc.shuffledSubarray(grants, { minLength: grants.length }))),
        ([grants, shuffled]) => {
          expect(inBurnOrder(shuffled).map((g) => g.id)).toEqual(inBurnOrder(grants).map((g) => g.id));
          for (const a of grants) {
            for (const b of grants) expect(Math.sign(compareBurnOrder(a, b)) + Math.sign(compareBurnOrder(b, a))).toBe(0);
          }
        },
      ),
    );
  });

  it('treats a grant as expired from its expiresAt on (half-open)', () => {
    expect(isExpired({ expiresAt: NOW }, NOW)).toBe(true);
    expect(isExpired({ expiresAt: new Date(NOW.getTime() + 1) }, NOW)).toBe(false);
    expect(isExpired({ expiresAt: null }, NOW)).toBe(false);
  });
});

describe('allocate', () => {
  it('takes exactly the amount (or everything spendable) from unexpired grants, never more than each holds', () => {
    fc.assert(
      fc.property(grantsArb, fc.bigInt({ min: 0n, max: 30_000_000n }), (grants, amount) => {
        const { parts, shortfall } = allocate(grants, amount, NOW);
        const byId = new Map(grants.map((g) => [g.id, g]));
        expect(sumParts(parts) + shortfall).toBe(amount);
        const available = spendable(grants, NOW);
        expect(shortfall).toBe(amount > available ? amount - available : 0n);
        for (const p of parts) {
          const g = byId.get(p.grantId)!;
          expect(p.amount > 0n && p.amount <= g.remaining).toBe(true);
          expect(isExpired(g, NOW)).toBe(false);
        }
        expect(new Set(parts.map((p) => p.grantId)).size).toBe(parts.length);
      }),
    );
  });

  it('drains grants strictly in burn order: only the last grant used may be partly used', () => {
    fc.assert(
      fc.property(grantsArb, fc.bigInt({ min: 0n, max: 30_000_000n }), (grants, amount) => {
        const { parts } = allocate(grants, amount, NOW);
        const live = inBurnOrder(grants.filter((g) => !isExpired(g, NOW) && g.remaining > 0n));
        const taken = new Map(parts.map((p) => [p.grantId, p.amount]));
        // The grants used are a prefix of the burn order, all but the last fully drained.
        const usedIds = live.filter((g) => taken.has(g.id)).map((g) => g.id);
        expect(usedIds).toEqual(live.slice(0, usedIds.length).map((g) => g.id));
        usedIds.slice(0, -1).forEach((id) => expect(taken.get(id)).toBe(live.find((g) => g.id === id)!.remaining));
      }),
    );
  });

  it('refuses a negative amount', () => {
    expect(() => allocate([], -1n, NOW)).toThrow(RangeError);
  });

  it('merges parts per grant', () => {
    expect(
      mergeParts(
        [{ grantId: 'a', amount: 2n }],
        [
          { grantId: 'b', amount: 1n },
          { grantId: 'a', amount: 3n },
        ],
      ),
    ).toEqual([
      { grantId: 'a', amount: 5n },
      { grantId: 'b', amount: 1n },
    ]);
  });
});
