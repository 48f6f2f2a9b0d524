import { randomBytes } from 'node:crypto';
import { ACCOUNT_ID_PATTERN } from '../accounts/auth/scopes';
import type { AuditEntry } from '../audit/audit.service';
import { fingerprint } from '../common/canonical-json';
import { correlationId } from '../common/context/correlation';
import { BillingException, type Finding } from '../common/errors/billing.exception';
import { formatCredits } from '../common/money';
import { planAdjustment } from './core/adjust';
import { allocate, spendable } from './core/burn-order';
import { splitSettlement } from './core/holds';
import { Accounts, grantDeltas, Posting, walletDelta, type Entry, type LedgerAccount } from './core/posting';
import { planReturn, type ReturnPlan } from './core/returns';
import { grantFingerprint } from './grant-rules';
import { DEFAULT_PRIORITY, GRANT_SOURCES, type GrantBucket, type Part } from './core/types';
import type { HoldStatus } from './entities/hold.entity';
import type { AllocationDelta, GrantRow, HoldRow, HoldUpdate, LockedWallet, LockKey, PriorTransaction, TransactionWrite } from './ledger.store';
import type {
  AdjustHoldInput,
  AdjustResult,
  AuditOptions,
  Balance,
  CreateHoldInput,
  GrantInput,
  GrantResult,
  GrantView,
  HoldResult,
  HoldView,
  IncreaseHoldInput,
  ResolveOptions,
  ResolveResult,
} from './ledger.types';

/**
 * Each ledger operation is "lock and read one wallet, decide, write": these are the decisions,
 * pure functions of the locked state, the request and the time (the arithmetic is in core/).
 * A decision either answers without writing (a replay, a no-op) or gives the one transaction to
 * write, its audit row, and the answer once the transaction id is known.
 */
export type Decision<R> =
  | { write: null; result: R }
  | { write: Omit<TransactionWrite, 'accountId' | 'expectedVersion'>; audit: AuditEntry | null; result: (transactionId: string) => R };

export interface Operation<R> {
  lock: LockKey;
  /** An account without a wallet gets an empty one when this is true (grants), else it is refused. */
  createsWallet?: boolean;
  decide(state: LockedWallet, now: Date): Decision<R>;
}

const SYSTEM_ACTOR = 'system:ledger';
const MAX_INT = 2_147_483_647;

export type ResolveMode = 'settle' | 'void' | 'expire';
const RESOLVED: Record<ResolveMode, { status: HoldStatus; kind: 'settlement' | 'void' | 'release'; action: string }> = {
  settle: { status: 'settled', kind: 'settlement', action: 'hold.settled' },
  void: { status: 'voided', kind: 'void', action: 'hold.voided' },
  expire: { status: 'expired', kind: 'release', action: 'hold.expired' },
};

// ---------------------------------------------------------------- grants

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
        checkReplay(state.prior, fp, input.idempotencyKey);
        if (!state.prior.grant) throw new Error(`grant of transaction ${state.prior.id} is missing`);
        return { write: null, result: { grant: grantView(state.prior.grant), balance: balanceNow(state, now), transactionId: state.prior.id, replayed: true } };
      }
      // Checked after the replay check: a replay answers the first outcome even once the grant has expired.
      if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) {
        throw BillingException.invalid([{ field: 'expiresAt', message: 'must be in the future' }]);
      }
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
      const grant: GrantView = { id, source: input.source, amount: input.amount, remaining, priority, expiresAt: input.expiresAt, createdAt: now };
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
          explanation: { source: input.source, reason: input.reason, actor: input.actor, expiresAt: input.expiresAt, priority, repaid: plan.repaid },
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

// ---------------------------------------------------------------- holds

export function createHoldOperation(input: CreateHoldInput): Operation<HoldResult> {
  const findings: Finding[] = [];
  if (input.amount <= 0n) findings.push({ field: 'amount', message: 'must be more than 0' });
  if (!ACCOUNT_ID_PATTERN.test(input.holdId)) findings.push({ field: 'holdId', message: 'must be 1-128 characters of letters, digits and _.:-' });
  checkKey(input.idempotencyKey, findings);
  if (findings.length > 0) throw BillingException.invalid(findings);
  const expiresAt = input.expiresAt ?? null;
  const fp = fingerprint({ op: 'hold', accountId: input.accountId, holdId: input.holdId, amount: input.amount, expiresAt, reference: input.reference });
  const opts = { ...input, correlationId: correlationOf(input) };
  return {
    lock: { accountId: input.accountId, idempotencyKey: input.idempotencyKey, holdId: input.holdId },
    createsWallet: true,
    decide(state, now) {
      if (state.prior) {
        checkReplay(state.prior, fp, input.idempotencyKey);
        if (!state.hold) throw new Error(`hold ${input.holdId} of transaction ${state.prior.id} is missing`);
        return { write: null, result: { hold: { ...state.hold }, balance: balanceNow(state, now), transactionId: state.prior.id, replayed: true } };
      }
      if (state.hold) {
        throw new BillingException('DL_BILLING_IDEMPOTENCY_CONFLICT', `Hold ${input.holdId} already exists (created with another idempotency key)`);
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
        audit: holdAudit(opts, 'hold.created', input.accountId, before, after, { id: input.holdId, amount: formatCredits(input.amount), reference: input.reference }, now),
        result: (transactionId) => ({ hold, balance: after, transactionId, replayed: false }),
      };
    },
  };
}

export function increaseHoldOperation(input: IncreaseHoldInput): Operation<HoldResult> {
  const findings: Finding[] = [];
  if (input.amount <= 0n) findings.push({ field: 'amount', message: 'must be more than 0' });
  checkKey(input.idempotencyKey, findings);
  if (findings.length > 0) throw BillingException.invalid(findings);
  const fp = fingerprint({ op: 'increase', holdId: input.holdId, amount: input.amount });
  const opts = { ...input, correlationId: correlationOf(input) };
  return {
    lock: { holdId: input.holdId, idempotencyKey: input.idempotencyKey },
    decide(state, now) {
      const hold = requireHold(state, input.holdId);
      if (state.prior) {
        checkReplay(state.prior, fp, input.idempotencyKey);
        return { write: null, result: { hold: { ...hold }, balance: balanceNow(state, now), transactionId: state.prior.id, replayed: true } };
      }
      if (hold.status !== 'reserved') {
        throw BillingException.invalid([{ field: 'holdId', message: `the hold is ${hold.status}, only an open hold can be increased` }]);
      }
      checkAffordable(state, input.amount, now);
      const { parts } = allocate(state.grants, input.amount, now);
      const posting = new Posting();
      for (const p of parts) posting.move(Accounts.grant(p.grantId), Accounts.hold(hold.id), p.amount);
      const entries = posting.entries();
      const before = balanceNow(state, now);
      const after = afterBalance(state, entries, now);
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
          allocationDeltas: parts.map((p) => ({ holdId: hold.id, grantId: p.grantId, held: p.amount })),
        },
        audit: holdAudit(
          opts,
          'hold.increased',
          hold.accountId,
          before,
          after,
          { id: hold.id, increase: formatCredits(input.amount), amount: formatCredits(hold.amount + input.amount), reference: hold.reference },
          now,
        ),
        result: (transactionId) => ({ hold: { ...hold, amount: hold.amount + input.amount }, balance: after, transactionId, replayed: false }),
      };
    },
  };
}

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

/** A correcting transaction for a settled charge (see LedgerService.adjustSettledHold). */
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
        checkReplay(state.prior, fp, input.idempotencyKey);
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
          before: { hold: hold.id, charged: formatCredits(hold.chargedAmount), debt: formatCredits(hold.debtAmount), available: formatCredits(before.available) },
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
        result: (transactionId) => ({ ...unchanged, debt, transactionId, balance: after }),
      };
    },
  };
}

// ---------------------------------------------------------------- helpers

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

export function balanceOf(grants: readonly GrantBucket[], held: bigint, debtBalance: bigint, now: Date): Balance {
  const debt = -debtBalance;
  // Debt is repaid before credits become spendable, so available is 0 while there is debt.
  const available = debt > 0n ? 0n : spendable(grants, now);
  return { total: available + held - debt, held, available, debt };
}

export function balanceNow(state: LockedWallet, now: Date): Balance {
  return balanceOf(state.grants, state.wallet.holds, state.wallet.debt, now);
}

/** The wallet's balances once `entries` are applied. */
function afterBalance(state: LockedWallet, entries: readonly Entry[], now: Date, newGrants: readonly GrantRow[] = []): Balance {
  const grants = new Map<string, GrantBucket>();
  for (const g of state.grants) grants.set(g.id, { ...g });
  for (const a of state.allocations) if (!grants.has(a.grant.id)) grants.set(a.grant.id, { ...a.grant });
  for (const g of newGrants) grants.set(g.id, { ...g, remaining: 0n });
  for (const d of grantDeltas(entries)) {
    const g = grants.get(d.grantId);
    if (g) g.remaining += d.amount;
  }
  const delta = walletDelta(entries);
  return balanceOf([...grants.values()], state.wallet.holds + delta.holds, state.wallet.debt + delta.debt, now);
}

function checkAffordable(state: LockedWallet, amount: bigint, now: Date): void {
  const { available } = balanceNow(state, now);
  if (amount > available) {
    throw new BillingException(
      'DL_BILLING_INSUFFICIENT_CREDITS',
      `Not enough credits: ${formatCredits(amount)} required, ${formatCredits(available)} available`,
      [],
      { available: formatCredits(available), required: formatCredits(amount) },
    );
  }
}

function requireHold(state: LockedWallet, holdId: string): HoldRow {
  if (!state.hold || state.hold.accountId !== state.wallet.accountId) throw BillingException.notFound(`Hold ${holdId}`);
  return state.hold;
}

/** Posts where returning credits go: grants, expired, or debt. */
function returnTo(posting: Posting, from: LedgerAccount, plan: ReturnPlan): void {
  for (const p of plan.toGrants) posting.move(from, Accounts.grant(p.grantId), p.amount);
  for (const p of plan.toExpired) posting.move(from, Accounts.expired, p.amount);
  posting.move(from, Accounts.debt, plan.repaid);
}

/** Repaid debt: the debt holds' debt shrinks and their charge is now attributed to the paying grant. */
function repaymentChanges(plan: ReturnPlan): { holds: HoldUpdate[]; allocations: AllocationDelta[] } {
  return {
    holds: plan.repayments.map((r) => ({ id: r.holdId, debt: -r.amount })),
    allocations: plan.repayments.map((r) => ({ holdId: r.holdId, grantId: r.grantId, charged: r.amount })),
  };
}

function describeReturn(plan: ReturnPlan): Record<string, unknown> {
  return { toGrants: plan.toGrants, expiredAtOnce: plan.toExpired, debtRepaid: plan.repaid };
}

function describeParts(parts: readonly Part[], state: LockedWallet): Record<string, unknown>[] {
  const byId = new Map(state.grants.map((g) => [g.id, g]));
  return parts.map((p) => {
    const g = byId.get(p.grantId);
    return { grantId: p.grantId, amount: p.amount, source: g?.source ?? null, expiresAt: g?.expiresAt ?? null };
  });
}

function mergeHoldUpdates(updates: readonly HoldUpdate[]): HoldUpdate[] {
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

function mergeAllocationDeltas(deltas: readonly AllocationDelta[]): AllocationDelta[] {
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

function checkKey(key: string, findings: Finding[]): void {
  if (typeof key !== 'string' || key.length === 0 || key.length > 255) {
    findings.push({ field: 'idempotencyKey', message: 'must be 1-255 characters' });
  }
}

function checkReplay(prior: PriorTransaction, fp: string, key: string): void {
  if (prior.fingerprint !== fp) {
    throw new BillingException('DL_BILLING_IDEMPOTENCY_CONFLICT', `The idempotency key ${JSON.stringify(key)} was already used for a different request`);
  }
}

function newId(prefix: string): string {
  return `${prefix}_${randomBytes(10).toString('hex')}`;
}

export function grantView(g: GrantRow): GrantView {
  return { id: g.id, source: g.source, amount: g.amount, remaining: g.remaining, priority: g.priority, expiresAt: g.expiresAt, createdAt: g.createdAt };
}

/**
 * The correlation of an operation's audit row, taken when the operation is made (in its caller's
 * context): a group-committed batch decides it later, outside that context.
 */
function correlationOf(opts: AuditOptions): string | null {
  return opts.correlationId ?? correlationId();
}

/**
 * The audit row of a hold's creation or increase: `before` and `after` are the wallet's balances
 * (the same keys, so they compare); the hold itself is `after.hold`.
 */
function holdAudit(opts: AuditOptions, action: string, accountId: string, before: Balance, after: Balance, hold: Record<string, string | null>, at: Date): AuditEntry {
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

export function balanceJson(b: Balance): Record<string, string> {
  return { total: formatCredits(b.total), held: formatCredits(b.held), available: formatCredits(b.available), debt: formatCredits(b.debt) };
}

export function grantJson(g: GrantView): Record<string, unknown> {
  return {
    id: g.id,
    source: g.source,
    amount: formatCredits(g.amount),
    remaining: formatCredits(g.remaining),
    priority: g.priority,
    expiresAt: g.expiresAt?.toISOString() ?? null,
    createdAt: g.createdAt.toISOString(),
  };
}
