import { ACCOUNT_ID_PATTERN } from 'src/accounts/auth/scopes';
import { fingerprint } from 'src/common/canonical-json';
import { BillingException, type Finding } from 'src/common/errors/billing.exception';
import { formatCredits } from 'src/common/money';
import { allocate } from '../core/burn-order';
import { Accounts, Posting } from '../core/posting';
import type { CreateHoldInput, HoldResult, HoldView } from '../ledger.types';
import { checkAffordable, describeParts, checkKey, checkReplay, correlationOf, holdAudit, type Operation } from './operation';
import { afterBalance, balanceNow } from './balance';

/** Create a hold: credits move from the wallet's grants (burn order) to the hold, refused if they would overdraw. */
export function createHoldOperation(input: CreateHoldInput): Operation<HoldResult> {
  const findings: Finding[] = [];
  if (input.amount <= 0n) findings.push({ field: 'amount', message: 'must be more than 0' });
  if (!ACCOUNT_ID_PATTERN.test(input.holdId)) {
    findings.push({ field: 'holdId', message: 'must be 1-128 characters of letters, digits and _.:-' });
  }
  checkKey(input.idempotencyKey, findings);
  if (findings.length > 0) throw BillingException.invalid(findings);
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
        checkReplay(state.prior, fp, input.idempotencyKey);
        if (!state.hold) throw new Error(`hold ${input.holdId} of transaction ${state.prior.id} is missing`);
        return {
          write: null,
          result: { hold: { ...state.hold }, balance: balanceNow(state, now), transactionId: state.prior.id, replayed: true },
        };
      }
      if (state.hold) {
        throw new BillingException(
          'DL_BILLING_IDEMPOTENCY_CONFLICT',
          `Hold ${input.holdId} already exists (created with another idempotency key)`,
        );
      }
      checkAffordable(state, input.amount, now);
      const { parts } = allocate(state.grants, input.amount, now);
      const posting = new Posting();
      for (const p of parts) posting.move(Accounts.grant(p.grantId), Accounts.hold(input.holdId), p.amount);
      const entries = posting.entries();
      const before = balanceNow(state, now);
      const after = afterBalance(state, entries, now);
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
          allocationDeltas: parts.map((p) => ({ holdId: input.holdId, grantId: p.grantId, held: p.amount })),
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
        result: (transactionId) => ({ hold, balance: after, transactionId, replayed: false }),
      };
    },
  };
}
