import { ACCOUNT_ID_PATTERN } from 'src/common/auth/scopes';
import { fingerprint } from 'src/common/canonical-json';
import { BillingException } from 'src/common/errors/billing.exception';
import { formatCredits } from 'src/common/money';
import type { CreateHoldInput, HoldResult, HoldView } from '../ledger.types';
import { allocateToHold, checkHoldInput, checkReplay, correlationOf, describeParts, holdAudit, type Operation } from './operation';
import { balanceNow } from './balance';

/** Create a hold: credits move from the wallet's grants (burn order) to the hold, refused if they would overdraw. */
export function createHoldOperation(input: CreateHoldInput): Operation<HoldResult> {
  checkHoldInput(
    input.amount,
    input.idempotencyKey,
    ACCOUNT_ID_PATTERN.test(input.holdId) ? [] : [{ field: 'holdId', message: 'must be 1-128 characters of letters, digits and _.:-' }],
  );
  const expiresAt = input.expiresAt ?? null;
  const fp = fingerprint({
    op: 'hold',
    accountId: input.accountId,
    holdId: input.holdId,
    amount: input.amount,
    expiresAt,
    reference: input.reference,
  });
  const opts = { ...input, correlationId: correlationOf(input) };
  return {
    lock: { accountId: input.accountId, idempotencyKey: input.idempotencyKey, holdId: input.holdId },
    createsWallet: true,
    decide(state, now) {
      if (state.prior) {
        checkReplay(state.prior, fp);
        if (!state.hold) throw new Error(`hold ${input.holdId} of transaction ${state.prior.id} is missing`);
        const balance = balanceNow(state, now);
        return {
          write: null,
          result: { hold: { ...state.hold }, balance, before: balance, transactionId: state.prior.id, replayed: true },
        };
      }
      if (state.hold) {
        throw new BillingException(
          'DL_BILLING_IDEMPOTENCY_CONFLICT',
          `Hold ${input.holdId} already exists (created with another idempotency key)`,
        );
      }
      const { parts, entries, before, after, allocationDeltas } = allocateToHold(state, input.holdId, input.amount, now);
      const hold: HoldView = {
        id: input.holdId,
        accountId: input.accountId,
        status: 'reserved',
        amount: input.amount,
        settledAmount: 0n,
        releasedAmount: 0n,
        chargedAmount: 0n,
        debtAmount: 0n,
        reference: input.reference,
        expiresAt,
        createdAt: now,
        resolvedAt: null,
      };
      return {
        write: {
          kind: 'reservation',
          idempotencyKey: input.idempotencyKey,
          fingerprint: fp,
          amount: -input.amount,
          holdId: input.holdId,
          grantId: null,
          reference: input.reference,
          after,
          at: now,
          entries,
          explanation: { held: input.amount, parts: describeParts(parts, state), expiresAt },
          newHold: { id: input.holdId, amount: input.amount, reference: input.reference, expiresAt },
          allocationDeltas,
        },
        audit: holdAudit(
          opts,
          'hold.created',
          input.accountId,
          before,
          after,
          { id: input.holdId, amount: formatCredits(input.amount), reference: input.reference },
          now,
        ),
        result: (transactionId) => ({ hold, balance: after, before, transactionId, replayed: false }),
      };
    },
  };
}
