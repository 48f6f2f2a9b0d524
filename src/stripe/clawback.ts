import type { EntityManager } from 'typeorm';
import type { AuditService } from 'src/audit/audit.service';
import { fingerprint } from 'src/common/canonical-json';
import { formatCredits } from 'src/common/money';
import { Accounts, Posting } from 'src/ledger/core/posting';
import { balanceJson } from 'src/ledger/http';
import { balanceNow, balanceOf } from 'src/ledger/operations/balance';
import { completeWrite } from 'src/ledger/operations/operation';
import { LedgerStore } from 'src/ledger/persistence/wallet-store';

export interface ClawBackInput {
  accountId: string;
  grantId: string;
  /** At most this many micro-credits. */
  max: bigint;
  idempotencyKey: string;
  /**
   * Why: Stripe reversed the charge that paid a top-up (refund or dispute: the charge and the top-up's
   * Checkout session), or a cycle's invoice was paid after its subscription ended.
   */
  cause:
    | { kind: 'refund' | 'dispute'; chargeId: string; disputeId: string | null; topUpSession: string; reversed: bigint }
    | { kind: 'paid_after_end'; invoiceId: string; subscriptionId: string; paidAt: string; endedAt: string };
  reason: string;
  reference: string;
  actor: string;
  now: Date;
}

/**
 * Takes back up to `max` of what is left (unheld) of one grant, never below zero: one ledger
 * `adjustment` transaction (grant → issued) under the wallet lock, then its audit row. The ledger has
 * no claw-back operation of its own, so this composes its store the way its operations do.
 * Returns the micro-credits taken (0 when nothing is left or the key was already used).
 */
export async function clawBack(em: EntityManager, audit: AuditService, input: ClawBackInput): Promise<bigint> {
  const state = await LedgerStore.lock(em, { accountId: input.accountId, idempotencyKey: input.idempotencyKey });
  if (!state || state.prior) return 0n;
  const grant = state.grants.find((g) => g.id === input.grantId);
  const left = grant?.remaining ?? 0n;
  const amount = left < input.max ? left : input.max;
  if (amount <= 0n) return 0n;
  const entries = new Posting().move(Accounts.grant(input.grantId), Accounts.issued, amount).entries();
  const before = balanceNow(state, input.now);
  const grants = state.grants.map((g) => (g.id === input.grantId ? { ...g, remaining: g.remaining - amount } : g));
  const after = balanceOf(grants, state.wallet.holds, state.wallet.debt, input.now);
  const { kind, ...details } = input.cause;
  await LedgerStore.write(
    em,
    completeWrite(state, {
      kind: 'adjustment',
      idempotencyKey: input.idempotencyKey,
      fingerprint: fingerprint({ op: 'claw-back', grantId: input.grantId, amount }),
      amount: -amount,
      holdId: null,
      grantId: input.grantId,
      reference: input.reference,
      after,
      at: input.now,
      entries,
      explanation: {
        clawedBack: amount,
        grantId: input.grantId,
        cause: kind,
        ...details,
        reason: input.reason,
        actor: input.actor,
      },
    }),
  );
  await audit.record(em, {
    actor: input.actor,
    action: 'credits.clawed_back',
    accountId: input.accountId,
    before: balanceJson(before),
    after: {
      ...balanceJson(after),
      grantId: input.grantId,
      clawedBack: formatCredits(amount),
      reason: input.reason,
      reference: input.reference,
    },
    at: input.now,
  });
  return amount;
}
