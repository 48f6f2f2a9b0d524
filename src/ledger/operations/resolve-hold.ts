import { fingerprint } from 'src/common/canonical-json';
import { BillingException } from 'src/common/errors/billing.exception';
import { formatCredits } from 'src/common/money';
import { splitSettlement } from '../core/holds';
import { Accounts, Posting } from '../core/posting';
import { planReturn } from '../core/returns';
import type { HoldStatus } from '../entities/hold.entity';
import type { ResolveOptions, ResolveResult } from '../ledger.types';
import {
  SYSTEM_ACTOR,
  requireHold,
  returnTo,
  repaymentChanges,
  describeReturn,
  correlationOf,
  expiredOnReturn,
  type Operation,
} from './operation';
import { afterBalance, balanceNow } from './balance';

export type ResolveMode = 'settle' | 'void' | 'expire';
const RESOLVED: Record<ResolveMode, { status: HoldStatus; kind: 'settlement' | 'void' | 'release'; action: string }> = {
  settle: { status: 'settled', kind: 'settlement', action: 'hold.settled' },
  void: { status: 'voided', kind: 'void', action: 'hold.voided' },
  expire: { status: 'expired', kind: 'release', action: 'hold.expired' },
};

/**
 * Settle (charge up to the hold, release the rest), void or expire (release everything) an open
 * hold. A resolved hold answers its first outcome, whatever is asked.
 */
export function resolveOperation(holdId: string, mode: ResolveMode, requested: bigint, opts: ResolveOptions): Operation<ResolveResult> {
  if (requested < 0n) throw BillingException.invalid([{ field: 'amount', message: 'must not be negative' }]);
  const correlation = correlationOf(opts);
  return {
    lock: { holdId },
    decide(state, now) {
      const hold = requireHold(state, holdId);
      if (hold.status !== 'reserved') {
        return {
          write: null,
          result: {
            holdId,
            accountId: hold.accountId,
            status: hold.status,
            charged: hold.settledAmount,
            released: hold.releasedAmount,
            firstTime: false,
            transactionId: null,
            balance: balanceNow(state, now),
          },
        };
      }
      const { status, kind, action } = RESOLVED[mode];
      const grants = new Map(state.allocations.map((a) => [a.grant.id, a.grant]));
      const split = splitSettlement(
        state.allocations.map((a) => ({ grant: a.grant, held: a.held - a.released - a.charged })),
        requested,
      );
      const back = planReturn(
        split.released.map((p) => ({ grant: grants.get(p.grantId)!, amount: p.amount })),
        now,
        state.debtHolds,
      );
      const posting = new Posting().move(Accounts.hold(holdId), Accounts.consumption, split.charge);
      returnTo(posting, Accounts.hold(holdId), back);
      const entries = posting.entries();
      const before = balanceNow(state, now);
      const after = afterBalance(state, entries, now);
      const repay = repaymentChanges(back);
      return {
        write: {
          kind,
          idempotencyKey: `${mode}:${holdId}`,
          fingerprint: fingerprint({ op: mode, holdId, amount: requested }),
          amount: mode === 'settle' ? -split.charge : split.release,
          holdId,
          grantId: null,
          reference: hold.reference,
          after,
          at: now,
          entries,
          explanation: {
            held: hold.amount,
            requested: mode === 'settle' ? requested : null,
            charged: split.charge,
            released: split.release,
            ...describeReturn(back),
            reason: opts.reason ?? null,
          },
          holdUpdates: [
            { id: holdId, status, settled: split.charge, released: split.release, charged: split.charge, resolvedAt: now },
            ...repay.holds,
          ],
          allocationDeltas: [
            ...split.charged.map((p) => ({ holdId, grantId: p.grantId, charged: p.amount })),
            ...split.released.map((p) => ({ holdId, grantId: p.grantId, released: p.amount })),
            ...repay.allocations,
          ],
        },
        audit: {
          actor: opts.actor ?? SYSTEM_ACTOR,
          action,
          accountId: hold.accountId,
          before: { hold: holdId, status: 'reserved', held: formatCredits(hold.amount), available: formatCredits(before.available) },
          after: {
            hold: holdId,
            status,
            charged: formatCredits(split.charge),
            released: formatCredits(split.release),
            available: formatCredits(after.available),
            ...(opts.reason ? { reason: opts.reason } : {}),
          },
          correlationId: correlation,
          at: now,
        },
        notices: expiredOnReturn(state, back, `${mode}:${holdId}`),
        result: (transactionId) => ({
          holdId,
          accountId: hold.accountId,
          status,
          charged: split.charge,
          released: split.release,
          firstTime: true,
          transactionId,
          balance: after,
        }),
      };
    },
  };
}
