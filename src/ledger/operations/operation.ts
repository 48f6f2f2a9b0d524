import { randomBytes } from 'node:crypto';
import type { AuditEntry } from 'src/audit/audit.service';
import { sha256Hex } from 'src/common/canonical-json';
import { correlationId } from 'src/common/context/correlation';
import { BillingException, type Finding } from 'src/common/errors/billing.exception';
import { formatCredits } from 'src/common/money';
import { Accounts, Posting, type LedgerAccount } from '../core/posting';
import type { ReturnPlan } from '../core/returns';
import { allocate } from '../core/burn-order';
import type { Part } from '../core/types';
import type {
  AllocationDelta,
  HoldRow,
  HoldUpdate,
  LockedWallet,
  LockKey,
  PriorTransaction,
  TransactionWrite,
} from '../persistence/wallet-store';
import type { AuditOptions, Balance } from '../ledger.types';
import type { Notification } from 'src/messaging/notifications';
import { balanceJson } from '../http';
import { afterBalance, balanceNow } from './balance';

/**
 * Each ledger operation is "lock and read one wallet, decide, write": these are the decisions,
 * pure functions of the locked state, the request and the time (the arithmetic is in core/).
 * A decision either answers without writing (a replay, a no-op) or gives the one transaction to
 * write, its audit row, and the answer once the transaction id is known.
 */
export type Decision<R> =
  | { write: null; result: R }
  | {
      write: Omit<TransactionWrite, 'accountId' | 'expectedVersion'>;
      audit: AuditEntry | null;
      /** Sent through the outbox with the transaction (expiredOnReturn's). */
      notices?: Notification[];
      result: (transactionId: string) => R;
    };

export interface Operation<R> {
  lock: LockKey;
  /** An account without a wallet gets an empty one when this is true (grants), else it is refused. */
  createsWallet?: boolean;
  decide(state: LockedWallet, now: Date): Decision<R>;
}

export const SYSTEM_ACTOR = 'system:ledger';
export const MAX_INT = 2_147_483_647;

/** The transaction to write, completed with the wallet it belongs to and the per-row deltas merged. */
export function completeWrite(state: LockedWallet, w: Omit<TransactionWrite, 'accountId' | 'expectedVersion'>): TransactionWrite {
  return {
    ...w,
    accountId: state.wallet.accountId,
    expectedVersion: state.wallet.version,
    holdUpdates: mergeHoldUpdates(w.holdUpdates ?? []),
    allocationDeltas: mergeAllocationDeltas(w.allocationDeltas ?? []),
  };
}

export function checkAffordable(available: bigint, amount: bigint): void {
  if (amount > available) {
    throw new BillingException(
      'DL_BILLING_INSUFFICIENT_CREDITS',
      `Not enough credits: ${formatCredits(amount)} required, ${formatCredits(available)} available`,
      [],
      { available: formatCredits(available), required: formatCredits(amount) },
    );
  }
}

/** A new or increased hold's input: an amount above 0 and a well-formed key (`more`: the operation's own findings, in between). */
export function checkHoldInput(amount: bigint, idempotencyKey: string, more: readonly Finding[] = []): void {
  const findings: Finding[] = [];
  if (amount <= 0n) findings.push({ field: 'amount', message: 'must be more than 0' });
  findings.push(...more);
  checkKey(idempotencyKey, findings);
  if (findings.length > 0) throw BillingException.invalid(findings);
}

/** `amount` moved from the wallet's grants (burn order) into hold `holdId`, refused if it would overdraw. */
export function allocateToHold(state: LockedWallet, holdId: string, amount: bigint, now: Date) {
  const before = balanceNow(state, now);
  checkAffordable(before.available, amount);
  const { parts } = allocate(state.grants, amount, now);
  const posting = new Posting();
  for (const p of parts) posting.move(Accounts.grant(p.grantId), Accounts.hold(holdId), p.amount);
  const entries = posting.entries();
  return {
    parts,
    entries,
    before,
    after: afterBalance(state, entries, now),
    allocationDeltas: parts.map((p): AllocationDelta => ({ holdId, grantId: p.grantId, held: p.amount })),
  };
}

export function requireHold(state: LockedWallet, holdId: string): HoldRow {
  if (!state.hold || state.hold.accountId !== state.wallet.accountId) throw BillingException.notFound(`Hold ${holdId}`);
  return state.hold;
}

/** Posts where returning credits go: grants, expired, or debt. */
export function returnTo(posting: Posting, from: LedgerAccount, plan: ReturnPlan): void {
  for (const p of plan.toGrants) posting.move(from, Accounts.grant(p.grantId), p.amount);
  for (const p of plan.toExpired) posting.move(from, Accounts.expired, p.amount);
  posting.move(from, Accounts.debt, plan.repaid);
}

/** Repaid debt: the debt holds' debt shrinks and their charge is now attributed to the paying grant. */
export function repaymentChanges(plan: ReturnPlan): { holds: HoldUpdate[]; allocations: AllocationDelta[] } {
  return {
    holds: plan.repayments.map((r) => ({ id: r.holdId, debt: -r.amount })),
    allocations: plan.repayments.map((r) => ({ holdId: r.holdId, grantId: r.grantId, charged: r.amount })),
  };
}

/**
 * `credits.expired` for what a return expires at once: credits of a grant that expired while they
 * were held (or charged), given back now. The grant's own expiry announced only what was unheld
 * then; each later return of its credits is announced once, by the transaction's key.
 */
export function expiredOnReturn(state: LockedWallet, plan: ReturnPlan, transactionKey: string): Notification[] {
  if (plan.toExpired.length === 0) return [];
  const grants = new Map([...state.grants, ...state.allocations.map((a) => a.grant)].map((g) => [g.id, g]));
  return plan.toExpired.map((p) => {
    const grant = grants.get(p.grantId);
    if (!grant?.expiresAt) throw new Error(`grant ${p.grantId} expired without an expiry`);
    return {
      type: 'credits.expired',
      accountId: state.wallet.accountId,
      cause: `credits.expired:${p.grantId}:${transactionKey}`,
      data: { grantId: p.grantId, source: grant.source, credits: formatCredits(p.amount), expiredAt: grant.expiresAt.toISOString() },
    };
  });
}

export function describeReturn(plan: ReturnPlan): Record<string, unknown> {
  return { toGrants: plan.toGrants, expiredAtOnce: plan.toExpired, debtRepaid: plan.repaid };
}

export function describeParts(parts: readonly Part[], state: LockedWallet): Record<string, unknown>[] {
  const byId = new Map(state.grants.map((g) => [g.id, g]));
  return parts.map((p) => {
    const g = byId.get(p.grantId);
    return { grantId: p.grantId, amount: p.amount, source: g?.source ?? null, expiresAt: g?.expiresAt ?? null };
  });
}

export function mergeHoldUpdates(updates: readonly HoldUpdate[]): HoldUpdate[] {
  const merged = new Map<string, HoldUpdate>();
  for (const u of updates) {
    const m = merged.get(u.id);
    if (!m) {
      merged.set(u.id, { ...u });
      continue;
    }
    m.status = u.status ?? m.status;
    m.resolvedAt = u.resolvedAt ?? m.resolvedAt;
    m.amount = (m.amount ?? 0n) + (u.amount ?? 0n);
    m.settled = (m.settled ?? 0n) + (u.settled ?? 0n);
    m.released = (m.released ?? 0n) + (u.released ?? 0n);
    m.charged = (m.charged ?? 0n) + (u.charged ?? 0n);
    m.debt = (m.debt ?? 0n) + (u.debt ?? 0n);
  }
  return [...merged.values()];
}

export function mergeAllocationDeltas(deltas: readonly AllocationDelta[]): AllocationDelta[] {
  const merged = new Map<string, AllocationDelta>();
  for (const d of deltas) {
    const key = `${d.holdId}\u0000${d.grantId}`;
    const m = merged.get(key);
    if (!m) {
      merged.set(key, { ...d });
      continue;
    }
    m.held = (m.held ?? 0n) + (d.held ?? 0n);
    m.charged = (m.charged ?? 0n) + (d.charged ?? 0n);
    m.released = (m.released ?? 0n) + (d.released ?? 0n);
  }
  return [...merged.values()];
}

/**
 * A ledger idempotency key made of a namespace and a caller's key (`http:<key>`,
 * `extend:<runtime>:<key>`): as is when it fits the ledger's 255 characters, otherwise the namespace
 * and the SHA-256 of the caller's key, so that every key the API takes has room whatever its prefix.
 */
export function namespacedKey(namespace: string, key: string): string {
  const whole = `${namespace}:${key}`;
  return whole.length <= 255 ? whole : `${namespace}:sha256:${sha256Hex(key)}`;
}

export function checkKey(key: string, findings: Finding[]): void {
  if (typeof key !== 'string' || key.length === 0 || key.length > 255) {
    findings.push({ field: 'idempotencyKey', message: 'must be 1-255 characters' });
  }
}

/**
 * A key seen before must come with the same request. The message does not quote the key: the ledger
 * stores it namespaced by its source (`http:<the caller's key>`), which is not what the caller sent.
 */
export function checkReplay(prior: PriorTransaction, fp: string): void {
  if (prior.fingerprint !== fp) {
    throw new BillingException('DL_BILLING_IDEMPOTENCY_CONFLICT', 'This idempotency key was already used for a different request');
  }
}

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(10).toString('hex')}`;
}

/**
 * The correlation of an operation's audit row, taken when the operation is made (in its caller's
 * context): a group-committed batch decides it later, outside that context.
 */
export function correlationOf(opts: AuditOptions): string | null {
  return opts.correlationId ?? correlationId();
}

/**
 * The audit row of a hold's creation or increase: `before` and `after` are the wallet's balances
 * (the same keys, so they compare); the hold itself is `after.hold`.
 */
export function holdAudit(
  opts: AuditOptions,
  action: string,
  accountId: string,
  before: Balance,
  after: Balance,
  hold: Record<string, string | null>,
  at: Date,
): AuditEntry {
  return {
    actor: opts.actor ?? SYSTEM_ACTOR,
    action,
    accountId,
    before: balanceJson(before),
    after: { ...balanceJson(after), hold, ...(opts.reason ? { reason: opts.reason } : {}) },
    correlationId: opts.correlationId ?? null,
    at,
  };
}
