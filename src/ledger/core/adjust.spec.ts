import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { grantsArb, NOW } from '../../../test/support/ledger-arbitraries';
import { spendable, sumParts } from './burn-order';
import { planAdjustment } from './adjust';

const scenarioArb = grantsArb.chain((grants) =>
  fc.record({
    grants: fc.constant(grants),
    charges: fc.array(fc.bigInt({ min: 0n, max: 2_000_000n }), { minLength: grants.length, maxLength: grants.length }),
    holdDebt: fc.bigInt({ min: 0n, max: 2_000_000n }),
    extra: fc.bigInt({ min: 0n, max: 5_000_000n }),
    newCharge: fc.bigInt({ min: 0n, max: 30_000_000n }),
  }),
);

describe('planAdjustment', () => {
  it('charging more takes from grants in burn order and records the shortfall as debt; refunds never exceed what was charged', () => {
    fc.assert(
      fc.property(scenarioArb, ({ grants, charges, holdDebt, extra, newCharge }) => {
        const current = charges.reduce((a, b) => a + b, 0n) + holdDebt;
        const holdAmount = current + extra;
        const plan = planAdjustment({
          holdAmount,
          currentCharge: current,
          newCharge,
          charges: grants.map((g, i) => ({ grant: g, charged: charges[i]! })),
          holdDebt,
          walletGrants: grants,
          otherDebtHolds: [],
          now: NOW,
        });
        expect(plan.charge).toBe(newCharge < holdAmount ? newCharge : holdAmount);
        expect(plan.delta).toBe(plan.charge - current);
        if (plan.delta >= 0n) {
          expect(sumParts(plan.take) + plan.newDebt).toBe(plan.delta);
          const available = spendable(grants, NOW);
          expect(plan.newDebt).toBe(plan.delta > available ? plan.delta - available : 0n);
        } else {
          const refund = -plan.delta;
          const back = sumParts(plan.refund.toGrants) + sumParts(plan.refund.toExpired) + plan.refund.repaid;
          expect(plan.cancelDebt + back).toBe(refund);
          expect(plan.cancelDebt).toBe(holdDebt < refund ? holdDebt : refund);
          for (const c of plan.chargeChanges) {
            const i = grants.findIndex((g) => g.id === c.grantId);
            expect(-c.amount <= charges[i]!).toBe(true);
          }
        }
      }),
    );
  });
});
