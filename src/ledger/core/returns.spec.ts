import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { grantsArb, NOW } from '../../../test/support/ledger-arbitraries';
import { isExpired, sumParts } from './burn-order';
import { planReturn } from './returns';

const debtsArb = fc
  .array(fc.bigInt({ min: 0n, max: 3_000_000n }), { maxLength: 4 })
  .map((ds) => ds.map((debt, i) => ({ holdId: `h${i}`, debt })));

describe('planReturn', () => {
  it('conserves every credit: back to grants + expired at once + paid to debt = returned', () => {
    fc.assert(
      fc.property(grantsArb, debtsArb, (grants, debts) => {
        const parts = grants.map((g) => ({ grant: g, amount: g.remaining }));
        const plan = planReturn(parts, NOW, debts);
        const returned = parts.reduce((a, p) => a + p.amount, 0n);
        expect(sumParts(plan.toGrants) + sumParts(plan.toExpired) + plan.repaid).toBe(returned);
        expect(plan.repayments.reduce((a, r) => a + r.amount, 0n)).toBe(plan.repaid);
      }),
    );
  });

  it('expires what belongs to expired grants and pays debt only from live credits, oldest debt first', () => {
    fc.assert(
      fc.property(grantsArb, debtsArb, (grants, debts) => {
        const parts = grants.map((g) => ({ grant: g, amount: g.remaining }));
        const plan = planReturn(parts, NOW, debts);
        const expired = parts.filter((p) => isExpired(p.grant, NOW)).reduce((a, p) => a + p.amount, 0n);
        const live = parts.filter((p) => !isExpired(p.grant, NOW)).reduce((a, p) => a + p.amount, 0n);
        const owed = debts.reduce((a, d) => a + d.debt, 0n);
        expect(sumParts(plan.toExpired)).toBe(expired);
        expect(plan.repaid).toBe(live < owed ? live : owed);
        // Never more than a hold owes; a later hold is paid only once the earlier ones are clear.
        let unpaidBefore = false;
        for (const d of debts) {
          const paid = plan.repayments.filter((r) => r.holdId === d.holdId).reduce((a, r) => a + r.amount, 0n);
          expect(paid <= d.debt).toBe(true);
          if (unpaidBefore) expect(paid).toBe(0n);
          if (paid < d.debt) unpaidBefore = true;
        }
      }),
    );
  });
});
