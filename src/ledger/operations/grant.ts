import { ACCOUNT_ID_PATTERN } from 'src/common/auth/scopes';
import { grantFingerprint } from '../grant-rules';
import { BillingException, type Finding } from 'src/common/errors/billing.exception';
import { Accounts, Posting } from '../core/posting';
import { planReturn } from '../core/returns';
import { DEFAULT_PRIORITY, GRANT_SOURCES } from '../core/types';
import type { GrantRow } from '../persistence/wallet-store';
import type { GrantInput, GrantResult, GrantView } from '../ledger.types';
import { MAX_INT, repaymentChanges, checkKey, checkReplay, newId, correlationOf, type Operation } from './operation';
import { balanceJson, grantJson } from '../http';
import { afterBalance, balanceNow, grantView } from './balance';

/**
 * Grant: new credits for the wallet (a purchase, an allowance, an admin grant); they repay the
 * wallet's debt first. Idempotent by key (a replay with the same request answers the first grant).
 */
export function grantOperation(input: GrantInput): Operation<GrantResult> {
  const findings: Finding[] = [];
  if (input.amount <= 0n) findings.push({ field: 'amount', message: 'must be more than 0' });
  if (!GRANT_SOURCES.includes(input.source)) findings.push({ field: 'source', message: `must be one of ${GRANT_SOURCES.join(', ')}` });
  if (input.priority !== undefined && (!Number.isInteger(input.priority) || Math.abs(input.priority) > MAX_INT)) {
    findings.push({ field: 'priority', message: 'must be an integer' });
  }
  if (input.grantId !== undefined && !ACCOUNT_ID_PATTERN.test(input.grantId)) {
    findings.push({ field: 'grantId', message: 'must be 1-128 characters of letters, digits and _.:-' });
  }
  checkKey(input.idempotencyKey, findings);
  if (findings.length > 0) throw BillingException.invalid(findings);
  const priority = input.priority ?? DEFAULT_PRIORITY[input.source];
  const fp = grantFingerprint({ ...input, priority });
  const id = input.grantId ?? newId('grt');
  const correlation = correlationOf(input);
  return {
    lock: { accountId: input.accountId, idempotencyKey: input.idempotencyKey },
    createsWallet: true,
    decide(state, now) {
      if (state.prior) {
        checkReplay(state.prior, fp);
        if (!state.prior.grant) throw new Error(`grant of transaction ${state.prior.id} is missing`);
        return {
          write: null,
          result: { grant: grantView(state.prior.grant), balance: balanceNow(state, now), transactionId: state.prior.id, replayed: true },
        };
      }
      // Checked after the replay check: a replay answers the first outcome even once the grant has expired.
      checkExpiry(input.expiresAt, now);
      const bucket: GrantRow = {
        id,
        source: input.source,
        amount: input.amount,
        remaining: 0n,
        priority,
        expiresAt: input.expiresAt,
        createdAt: now,
        status: 'active',
      };
      // A new grant pays the wallet's debt first.
      const plan = planReturn([{ grant: bucket, amount: input.amount }], now, state.debtHolds);
      const posting = new Posting();
      for (const p of plan.toGrants) posting.move(Accounts.issued, Accounts.grant(p.grantId), p.amount);
      posting.move(Accounts.issued, Accounts.debt, plan.repaid);
      const entries = posting.entries();
      const remaining = input.amount - plan.repaid;
      const before = balanceNow(state, now);
      const after = afterBalance(state, entries, now, [bucket]);
      const repay = repaymentChanges(plan);
      const grant: GrantView = {
        id,
        source: input.source,
        amount: input.amount,
        remaining,
        priority,
        expiresAt: input.expiresAt,
        createdAt: now,
      };
      return {
        write: {
          kind: input.source === 'top_up' ? 'top-up' : 'grant',
          idempotencyKey: input.idempotencyKey,
          fingerprint: fp,
          amount: input.amount,
          holdId: null,
          grantId: id,
          reference: input.reference ?? null,
          after,
          at: now,
          entries,
          explanation: {
            source: input.source,
            reason: input.reason,
            actor: input.actor,
            expiresAt: input.expiresAt,
            priority,
            repaid: plan.repaid,
          },
          newGrant: {
            id,
            source: input.source,
            amount: input.amount,
            remaining,
            priority,
            expiresAt: input.expiresAt,
            reason: input.reason,
            reference: input.reference ?? null,
          },
          holdUpdates: repay.holds,
          allocationDeltas: repay.allocations,
        },
        audit: {
          actor: input.actor,
          action: 'credits.granted',
          accountId: input.accountId,
          before: balanceJson(before),
          after: { ...balanceJson(after), grant: grantJson(grant), reason: input.reason },
          correlationId: correlation,
          at: now,
        },
        result: (transactionId) => ({ grant, balance: after, transactionId, replayed: false }),
      };
    },
  };
}

/** A grant's expiry must be in the future (the console checks it before its confirmation too). */
export function checkExpiry(expiresAt: Date | null | undefined, now: Date): void {
  if (expiresAt && expiresAt.getTime() <= now.getTime()) {
    throw BillingException.invalid([{ field: 'expiresAt', message: 'must be in the future' }]);
  }
}
