import { fingerprint } from 'src/common/canonical-json';
import { BillingException } from 'src/common/errors/billing.exception';
import { formatCredits } from 'src/common/money';
import type { HoldResult, IncreaseHoldInput } from '../ledger.types';
import {
  allocateToHold,
  checkHoldInput,
  checkReplay,
  correlationOf,
  describeParts,
  holdAudit,
  requireHold,
  type Operation,
} from './operation';
import { balanceNow } from './balance';

/** Increase an open hold (a reservation's extension), refused like a new hold when it would overdraw. */
export function increaseHoldOperation(input: IncreaseHoldInput): Operation<HoldResult> {
  checkHoldInput(input.amount, input.idempotencyKey);
  const fp = fingerprint({ op: 'increase', holdId: input.holdId, amount: input.amount });
  const opts = { ...input, correlationId: correlationOf(input) };
  return {
    lock: { holdId: input.holdId, idempotencyKey: input.idempotencyKey },
    decide(state, now) {
      const hold = requireHold(state, input.holdId);
      if (state.prior) {
        checkReplay(state.prior, fp);
        const balance = balanceNow(state, now);
        return {
          write: null,
          result: { hold: { ...hold }, balance, before: balance, transactionId: state.prior.id, replayed: true },
        };
      }
      if (hold.status !== 'reserved') {
        throw BillingException.invalid([{ field: 'holdId', message: `the hold is ${hold.status}, only an open hold can be increased` }]);
      }
      const { parts, entries, before, after, allocationDeltas } = allocateToHold(state, hold.id, input.amount, now);
      return {
        write: {
          kind: 'reservation',
          idempotencyKey: input.idempotencyKey,
          fingerprint: fp,
          amount: -input.amount,
          holdId: hold.id,
          grantId: null,
          reference: hold.reference,
          after,
          at: now,
          entries,
          explanation: { held: input.amount, increase: true, holdAmount: hold.amount + input.amount, parts: describeParts(parts, state) },
          holdUpdates: [{ id: hold.id, amount: input.amount }],
          allocationDeltas,
        },
        audit: holdAudit(
          opts,
          'hold.increased',
          hold.accountId,
          before,
          after,
          {
            id: hold.id,
            increase: formatCredits(input.amount),
            amount: formatCredits(hold.amount + input.amount),
            reference: hold.reference,
          },
          now,
        ),
        result: (transactionId) => ({
          hold: { ...hold, amount: hold.amount + input.amount },
          balance: after,
          before,
          transactionId,
          replayed: false,
        }),
      };
    },
  };
}
