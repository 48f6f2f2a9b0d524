import { fingerprint } from 'src/common/canonical-json';
import { BillingException, type Finding } from 'src/common/errors/billing.exception';
import { formatCredits } from 'src/common/money';
import { planAdjustment } from '../core/adjust';
import { Accounts, Posting } from '../core/posting';
import type { AdjustHoldInput, AdjustResult } from '../ledger.types';
import {
  SYSTEM_ACTOR,
  requireHold,
  returnTo,
  repaymentChanges,
  describeReturn,
  checkKey,
  checkReplay,
  correlationOf,
  expiredOnReturn,
  type Operation,
} from './operation';
import { afterBalance, balanceNow } from './balance';

export function adjustOperation(input: AdjustHoldInput): Operation<AdjustResult> {
  const findings: Finding[] = [];
  if (input.newCharge < 0n) findings.push({ field: 'newCharge', message: 'must not be negative' });
  checkKey(input.idempotencyKey, findings);
  if (findings.length > 0) throw BillingException.invalid(findings);
  const fp = fingerprint({ op: 'adjust', holdId: input.holdId, newCharge: input.newCharge });
  const correlation = correlationOf(input);
  return {
    lock: { holdId: input.holdId, idempotencyKey: input.idempotencyKey },
    decide(state, now) {
      const hold = requireHold(state, input.holdId);
      if (state.prior) {
        checkReplay(state.prior, fp);
        const previous = BigInt(String(state.prior.explanation.previousCharge ?? hold.chargedAmount));
        const charged = BigInt(String(state.prior.explanation.charged ?? hold.chargedAmount));
        return {
          write: null,
          result: {
            holdId: hold.id,
            accountId: hold.accountId,
            previousCharge: previous,
            charged,
            delta: charged - previous,
            debt: hold.debtAmount,
            transactionId: state.prior.id,
            replayed: true,
            balance: balanceNow(state, now),
          },
        };
      }
      if (hold.status !== 'settled') {
        throw BillingException.invalid([{ field: 'holdId', message: `the hold is ${hold.status}; only a settled charge can be adjusted` }]);
      }
      const plan = planAdjustment({
        holdAmount: hold.amount,
        currentCharge: hold.chargedAmount,
        newCharge: input.newCharge,
        charges: state.allocations.filter((a) => a.charged > 0n).map((a) => ({ grant: a.grant, charged: a.charged })),
        holdDebt: hold.debtAmount,
        walletGrants: state.grants,
        otherDebtHolds: state.debtHolds.filter((d) => d.holdId !== hold.id),
        now,
      });
      const before = balanceNow(state, now);
      const unchanged: AdjustResult = {
        holdId: hold.id,
        accountId: hold.accountId,
        previousCharge: hold.chargedAmount,
        charged: plan.charge,
        delta: plan.delta,
        debt: hold.debtAmount,
        transactionId: null,
        replayed: false,
        balance: before,
      };
      if (plan.delta === 0n) return { write: null, result: unchanged };
      const posting = new Posting();
      for (const p of plan.take) posting.move(Accounts.grant(p.grantId), Accounts.consumption, p.amount);
      posting.move(Accounts.debt, Accounts.consumption, plan.newDebt);
      posting.move(Accounts.consumption, Accounts.debt, plan.cancelDebt);
      returnTo(posting, Accounts.consumption, plan.refund);
      const entries = posting.entries();
      const after = afterBalance(state, entries, now);
      const repay = repaymentChanges(plan.refund);
      const debt = hold.debtAmount + plan.newDebt - plan.cancelDebt;
      return {
        write: {
          kind: 'adjustment',
          idempotencyKey: input.idempotencyKey,
          fingerprint: fp,
          amount: -plan.delta,
          holdId: hold.id,
          grantId: null,
          reference: hold.reference,
          after,
          at: now,
          entries,
          explanation: {
            previousCharge: hold.chargedAmount,
            charged: plan.charge,
            delta: plan.delta,
            taken: plan.take,
            debt: plan.newDebt,
            debtCancelled: plan.cancelDebt,
            ...describeReturn(plan.refund),
            reason: input.reason ?? null,
          },
          holdUpdates: [{ id: hold.id, charged: plan.delta, debt: plan.newDebt - plan.cancelDebt }, ...repay.holds],
          allocationDeltas: [
            ...plan.chargeChanges.map((p) => ({ holdId: hold.id, grantId: p.grantId, charged: p.amount })),
            ...repay.allocations,
          ],
        },
        audit: {
          actor: input.actor ?? SYSTEM_ACTOR,
          action: 'hold.adjusted',
          accountId: hold.accountId,
          before: {
            hold: hold.id,
            charged: formatCredits(hold.chargedAmount),
            debt: formatCredits(hold.debtAmount),
            available: formatCredits(before.available),
          },
          after: {
            hold: hold.id,
            charged: formatCredits(plan.charge),
            debt: formatCredits(debt),
            available: formatCredits(after.available),
            ...(input.reason ? { reason: input.reason } : {}),
          },
          correlationId: correlation,
          at: now,
        },
        notices: expiredOnReturn(state, plan.refund, input.idempotencyKey),
        result: (transactionId) => ({ ...unchanged, debt, transactionId, balance: after }),
      };
    },
  };
}
