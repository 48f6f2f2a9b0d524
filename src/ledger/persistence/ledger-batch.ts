import { auditRounds, type AuditEntry, type AuditService } from 'src/audit/audit.service';
import type { Call, PreparedStatement } from 'src/common/database/pipelined-transaction';
import { lineAfterWrite, type LowBalanceLine } from '../core/low-balance';
import { grantDeltas, walletDelta } from '../core/posting';
import type { DebtHold } from '../core/returns';
import { completeWrite, type Operation } from '../operations/operation';
import { parseWrite, writeCall } from './batch-write';
import { notificationMessage, type Notification } from 'src/messaging/notifications';
import { enqueueCall } from 'src/messaging/outbox';
import {
  GRANT_JSON,
  toGrant,
  toHold,
  type AllocationRow,
  type GrantRow,
  type HoldRow,
  type LockedWallet,
  type LockKey,
  type PriorTransaction,
  type TransactionWrite,
} from './wallet-store';

/**
 * Locks a batch's wallets in one statement, in account-id order (bytes: COLLATE "C"; the rows are
 * sorted before they are locked), the order every job that locks several wallets uses, so that
 * batches cannot deadlock one another.
 */
const LOCK_WALLETS_STATEMENT: PreparedStatement = {
  name: 'ledger_lock_wallets_v1',
  text: `SELECT w.account_id FROM wallets w WHERE w.account_id = ANY($1::text[]) ORDER BY w.account_id COLLATE "C" FOR UPDATE`,
};

/**
 * Reads, under the wallets' locks, everything a batch decides on: per wallet (one row each), the
 * wallet, its grants, the transactions already written under the batch's idempotency keys of that
 * wallet, the batch's holds of that wallet with their allocations (only holds of its own account:
 * a hold id names a runtime, and a launch may name another account's runtime, which it is then
 * refused; its hold must not bring that account's grants into this wallet), and the wallet's debts. $2 and
 * $3 map each account id to its keys and its hold ids. (Run after LOCK_WALLETS_STATEMENT, in the
 * same message: its snapshot is taken once the locks are held, so it is current.)
 */
const READ_BATCH_SQL = `
SELECT w.account_id, w.version::text AS version, w.grants_balance::text AS grants_balance, w.holds_balance::text AS holds_balance,
  w.issued::text AS issued, w.consumed::text AS consumed, w.expired::text AS expired, w.debt::text AS debt,
  w.low_balance_line::text AS low_balance_line, w.low_balance_rises::text AS low_balance_rises,
  (SELECT coalesce(json_agg(${GRANT_JSON}), '[]'::json) FROM grants g WHERE g.account_id = w.account_id AND g.status = 'active' AND g.remaining > 0) AS grants,
  -- One probe of (account_id, idempotency_key) per key (LIMIT 1 keeps the subquery a parameterized index
  -- lookup: as a join or with = ANY, the plan found the account's rows and filtered them by key, a
  -- read that grows with the account's history).
  (SELECT coalesce(json_agg(p.prior), '[]'::json) FROM jsonb_array_elements_text($2::jsonb -> w.account_id) AS k(key),
     LATERAL (SELECT json_build_object('key', t.idempotency_key, 'id', t.id::text, 'kind', t.kind, 'fingerprint', t.fingerprint,
       'holdId', t.hold_id, 'grantId', t.grant_id, 'explanation', t.explanation,
       'grant', (SELECT ${GRANT_JSON} FROM grants g WHERE g.id = t.grant_id)) AS prior
       FROM ledger_transactions t WHERE t.account_id = w.account_id AND t.idempotency_key = k.key LIMIT 1) p) AS priors,
  (SELECT coalesce(json_agg(json_build_object('id', h.id, 'accountId', h.account_id, 'status', h.status, 'amount', h.amount::text,
     'settledAmount', h.settled_amount::text, 'releasedAmount', h.released_amount::text, 'chargedAmount', h.charged_amount::text,
     'debtAmount', h.debt_amount::text, 'reference', h.reference, 'expiresAt', h.expires_at, 'createdAt', h.created_at,
     'resolvedAt', h.resolved_at)), '[]'::json)
     FROM holds h WHERE h.id = ANY(ARRAY(SELECT jsonb_array_elements_text($3::jsonb -> w.account_id))) AND h.account_id = w.account_id) AS holds,
  (SELECT coalesce(json_agg(json_build_object('holdId', a.hold_id, 'grant', (SELECT ${GRANT_JSON} FROM grants g WHERE g.id = a.grant_id),
     'held', a.held::text, 'charged', a.charged::text, 'released', a.released::text)), '[]'::json)
     FROM hold_allocations a WHERE a.hold_id = ANY(ARRAY(SELECT h.id FROM holds h
       WHERE h.id = ANY(ARRAY(SELECT jsonb_array_elements_text($3::jsonb -> w.account_id))) AND h.account_id = w.account_id))) AS allocations,
  (SELECT coalesce(json_agg(json_build_object('holdId', d.id, 'debt', d.debt_amount::text, 'resolvedAt', d.resolved_at)
     ORDER BY d.resolved_at, d.id COLLATE "C"), '[]'::json)
     FROM holds d WHERE d.account_id = w.account_id AND d.debt_amount > 0) AS debt_holds
FROM wallets w
WHERE w.account_id = ANY($1::text[])`;

const READ_BATCH_STATEMENT: PreparedStatement = { name: 'ledger_read_batch_v4', text: READ_BATCH_SQL };

const MARK_LOW_BALANCE: PreparedStatement = {
  name: 'ledger_mark_low_balance_v1',
  text: `UPDATE wallets SET low_balance_line = $2, low_balance_rises = $3 WHERE account_id = $1`,
};

/** Sets a wallet's low-balance line (the caller holds the wallet's lock; not a balance: the version stays). */
export function lowBalanceMarkCall(accountId: string, mark: { line: bigint; rises: bigint }): Call {
  return { statement: MARK_LOW_BALANCE, values: [accountId, mark.line.toString(), mark.rises.toString()] };
}

/** The first statements of a batch: lock its wallets, then read them (`locks`: each wallet's operations' keys). */
export function batchReadCalls(locks: ReadonlyMap<string, readonly LockKey[]>): Call[] {
  const accounts = [...locks.keys()];
  const keys: Record<string, string[]> = {};
  const holds: Record<string, string[]> = {};
  for (const [accountId, of] of locks) {
    keys[accountId] = [...new Set(of.map((l) => l.idempotencyKey).filter((k): k is string => !!k))];
    holds[accountId] = [...new Set(of.map((l) => l.holdId).filter((h): h is string => !!h))];
  }
  return [lockWalletsCall(accounts), { statement: READ_BATCH_STATEMENT, values: [accounts, JSON.stringify(keys), JSON.stringify(holds)] }];
}

/** Locks the wallets of `accounts` in the order every job that locks several wallets uses (bytewise by account id). */
export function lockWalletsCall(accounts: readonly string[]): Call {
  return { statement: LOCK_WALLETS_STATEMENT, values: [accounts] };
}

type Raw = Record<string, unknown> & {
  account_id: string;
  grants: Parameters<typeof toGrant>[0][];
  priors: (Omit<PriorTransaction, 'grant'> & { key: string; grant: Parameters<typeof toGrant>[0] | null })[];
  holds: Parameters<typeof toHold>[0][];
  allocations: { holdId: string; grant: Parameters<typeof toGrant>[0]; held: string; charged: string; released: string }[];
  debt_holds: { holdId: string; debt: string; resolvedAt: string }[];
};

interface Allocation {
  held: bigint;
  charged: bigint;
  released: bigint;
}

/**
 * One wallet's state for a whole batch, kept current in memory: after each operation is decided,
 * its transaction is applied here exactly as the write statement applies it in the database (the
 * wallet's version, balances, grants, holds, allocations and debts), so the next operation decides
 * on the state it would read — and every write of the batch can travel in one message. The write
 * statement checks the wallet version it was decided on, so a divergence fails the batch (which
 * then runs one operation at a time) instead of writing anything wrong.
 */
export class WalletBatch {
  private constructor(
    private readonly wallet: LockedWallet['wallet'],
    private readonly grants: Map<string, GrantRow>,
    private readonly priors: Map<string, PriorTransaction>,
    private readonly holds: Map<string, HoldRow>,
    private readonly allocations: Map<string, Map<string, Allocation>>,
    private readonly debts: Map<string, { debt: bigint; resolvedAt: Date }>,
    private lowBalance: LowBalanceLine,
  ) {}

  /** The state of each wallet the read found (by account id; a wallet that does not exist is missing). */
  static parseAll(found: unknown[]): Map<string, WalletBatch> {
    return new Map((found as Raw[]).map((r) => [r.account_id, WalletBatch.parse(r)]));
  }

  private static parse(r: Raw): WalletBatch {
    const grants = new Map<string, GrantRow>();
    for (const g of r.grants) grants.set(g.id, toGrant(g));
    const allocations = new Map<string, Map<string, Allocation>>();
    for (const a of r.allocations) {
      if (!grants.has(a.grant.id)) grants.set(a.grant.id, toGrant(a.grant));
      const per = allocations.get(a.holdId) ?? new Map<string, Allocation>();
      per.set(a.grant.id, { held: BigInt(a.held), charged: BigInt(a.charged), released: BigInt(a.released) });
      allocations.set(a.holdId, per);
    }
    return new WalletBatch(
      {
        accountId: r.account_id,
        version: BigInt(r.version as string),
        grants: BigInt(r.grants_balance as string),
        holds: BigInt(r.holds_balance as string),
        issued: BigInt(r.issued as string),
        consumed: BigInt(r.consumed as string),
        expired: BigInt(r.expired as string),
        debt: BigInt(r.debt as string),
      },
      grants,
      new Map(r.priors.map((p) => [p.key, { ...p, grant: p.grant ? toGrant(p.grant) : null }])),
      new Map(r.holds.map((h) => [h.id, toHold(h)])),
      allocations,
      new Map(r.debt_holds.map((d) => [d.holdId, { debt: BigInt(d.debt), resolvedAt: new Date(d.resolvedAt) }])),
      { line: r.low_balance_line === null ? null : BigInt(r.low_balance_line as string), rises: BigInt(r.low_balance_rises as string) },
    );
  }

  /** The low-balance line, as the batch's writes so far left it. */
  lowBalanceLine(): LowBalanceLine {
    return { ...this.lowBalance };
  }

  /** What the lock-and-read statement would return for this operation now. */
  view(lock: LockKey): LockedWallet {
    const hold = lock.holdId ? (this.holds.get(lock.holdId) ?? null) : null;
    const allocations: AllocationRow[] = [];
    for (const [grantId, a] of (lock.holdId && this.allocations.get(lock.holdId)) || []) {
      allocations.push({ grant: { ...this.grants.get(grantId)! }, ...a });
    }
    const debtHolds: DebtHold[] = [...this.debts]
      .filter(([, d]) => d.debt > 0n)
      .sort(([ia, a], [ib, b]) => a.resolvedAt.getTime() - b.resolvedAt.getTime() || (ia < ib ? -1 : ia > ib ? 1 : 0))
      .map(([holdId, d]) => ({ holdId, debt: d.debt }));
    return {
      wallet: { ...this.wallet },
      grants: [...this.grants.values()].filter((g) => g.remaining > 0n).map((g) => ({ ...g })),
      prior: lock.idempotencyKey ? (this.priors.get(lock.idempotencyKey) ?? null) : null,
      hold: hold ? { ...hold } : null,
      allocations,
      debtHolds,
    };
  }

  /** Applies a decided transaction, as the write statement (batch-write.ts) does. */
  apply(w: TransactionWrite): void {
    const d = walletDelta(w.entries);
    const wallet = this.wallet;
    wallet.version += 1n;
    wallet.grants += d.grants;
    wallet.holds += d.holds;
    wallet.issued += d.issued;
    wallet.consumed += d.consumed;
    wallet.expired += d.expired;
    wallet.debt += d.debt;
    this.lowBalance = lineAfterWrite(this.lowBalance, w.after.available);
    if (w.newGrant) {
      const g = w.newGrant;
      this.grants.set(g.id, {
        id: g.id,
        source: g.source,
        amount: g.amount,
        remaining: g.remaining,
        priority: g.priority,
        expiresAt: g.expiresAt,
        createdAt: w.at,
        status: 'active',
      });
    }
    for (const change of grantDeltas(w.entries)) {
      if (change.grantId === w.newGrant?.id) continue;
      const g = this.grants.get(change.grantId);
      if (!g) throw new Error(`grant ${change.grantId} is not in the batch's state`);
      g.remaining += change.amount;
    }
    if (w.newHold) {
      const h = w.newHold;
      this.holds.set(h.id, {
        id: h.id,
        accountId: wallet.accountId,
        status: 'reserved',
        amount: h.amount,
        settledAmount: 0n,
        releasedAmount: 0n,
        chargedAmount: 0n,
        debtAmount: 0n,
        reference: h.reference,
        expiresAt: h.expiresAt,
        createdAt: w.at,
        resolvedAt: null,
      });
    }
    for (const u of w.holdUpdates ?? []) {
      const h = this.holds.get(u.id);
      const debt = this.debts.get(u.id);
      if (h) {
        h.status = u.status ?? h.status;
        h.amount += u.amount ?? 0n;
        h.settledAmount += u.settled ?? 0n;
        h.releasedAmount += u.released ?? 0n;
        h.chargedAmount += u.charged ?? 0n;
        h.debtAmount += u.debt ?? 0n;
        h.resolvedAt = u.resolvedAt ?? h.resolvedAt;
      }
      if ((u.debt ?? 0n) !== 0n) {
        // A hold whose debt changes is either a debtor read with the wallet or this batch's hold.
        const resolvedAt = debt?.resolvedAt ?? h?.resolvedAt;
        if (!resolvedAt) throw new Error(`hold ${u.id} is not in the batch's state`);
        this.debts.set(u.id, { debt: (debt?.debt ?? 0n) + u.debt!, resolvedAt });
      }
    }
    for (const a of w.allocationDeltas ?? []) {
      const per = this.allocations.get(a.holdId) ?? new Map<string, Allocation>();
      const cur = per.get(a.grantId) ?? { held: 0n, charged: 0n, released: 0n };
      per.set(a.grantId, {
        held: cur.held + (a.held ?? 0n),
        charged: cur.charged + (a.charged ?? 0n),
        released: cur.released + (a.released ?? 0n),
      });
      this.allocations.set(a.holdId, per);
    }
    this.priors.set(w.idempotencyKey, {
      id: '',
      kind: w.kind,
      fingerprint: w.fingerprint,
      holdId: w.holdId,
      grantId: w.grantId,
      explanation: w.explanation,
      grant: w.newGrant ? { ...this.grants.get(w.newGrant.id)! } : null,
    });
  }
}

/**
 * The ledger's part of a group-committed batch: the wallets read by batchReadCalls (under their
 * locks), operations decided one after the other on them, each wallet's state with the batch's
 * earlier operations applied, and every write with its audit rows sent in the batch's last round
 * trip. Used by the ledger's own lanes and by callers that group-commit ledger operations with rows
 * of their own (reservations).
 */
export class LedgerBatch {
  private readonly writes: TransactionWrite[] = [];
  private readonly audits: (AuditEntry | null)[] = [];
  private readonly notices: Notification[][] = [];
  private readonly dropped = new Set<string>();
  private transactionIds = new Map<TransactionWrite, string>();

  private constructor(
    private readonly states: Map<string, WalletBatch>,
    private readonly audit: AuditService,
    private readonly notificationsTopic: string,
  ) {}

  /** `found`: the rows of batchReadCalls' read statement; `notificationsTopic`: where the operations' notices go. */
  static of(found: unknown[], audit: AuditService, notificationsTopic: string): LedgerBatch {
    return new LedgerBatch(WalletBatch.parseAll(found), audit, notificationsTopic);
  }

  /** Whether the account's wallet was read (it exists). */
  has(accountId: string): boolean {
    return this.states.has(accountId);
  }

  /** The wallet's low-balance line (the batch's operations so far applied); undefined: not read. */
  lowBalanceLine(accountId: string): LowBalanceLine | undefined {
    return this.states.get(accountId)?.lowBalanceLine();
  }

  /**
   * Decides `op` on its wallet's current state and, when it writes, applies the write to that state.
   * A refusal (what deciding throws) changes nothing and is returned; otherwise the operation's
   * answer, to be read after `written`. Throws only when the write cannot be applied to the state
   * (the whole batch must then fail).
   */
  decide<R>(accountId: string, op: Operation<R>, now: Date): { refused: unknown } | { answer: () => R } {
    const state = this.states.get(accountId);
    if (!state) throw new Error(`the wallet of ${accountId} is not in the batch`);
    const view = state.view({ ...op.lock, accountId });
    let decision: ReturnType<typeof op.decide>;
    try {
      decision = op.decide(view, now);
    } catch (refused) {
      return { refused };
    }
    if (decision.write === null) {
      const result = decision.result;
      return { answer: () => result };
    }
    const write = completeWrite(view, decision.write);
    state.apply(write);
    this.writes.push(write);
    this.audits.push(decision.audit);
    this.notices.push(decision.notices ?? []);
    const answer = decision.result;
    return { answer: () => answer(this.transactionIds.get(write)!) };
  }

  /** Leaves out every write of the account decided so far (its operations run elsewhere); the account is done for this batch. */
  drop(accountId: string): void {
    this.dropped.add(accountId);
    this.states.delete(accountId);
  }

  /**
   * The statements that write the batch: every transaction in one, then `also` (a caller's own
   * writes, after the ledger's locks), then the audit rows (one statement per round of distinct
   * chains: the chain heads are locked last), then the notices, if any.
   */
  writeCalls(also: Call[] = []): Call[] {
    const kept = this.kept();
    const calls: Call[] = kept.length > 0 ? [writeCall(kept.map((k) => k.write))] : [];
    calls.push(...also);
    const entries = kept.flatMap((k) => (k.audit ? [{ entry: k.audit }] : []));
    for (const round of auditRounds(entries)) calls.push(this.audit.recordCall(round.map((r) => r.entry)));
    for (const k of kept) calls.push(...noticeCalls(this.notificationsTopic, k.notices, k.write.at));
    return calls;
  }

  /**
   * `results`: the rows of writeCalls' statements, once committed; the answers can be read after
   * this. Returns the rows of `also` (`count` statements).
   */
  written(results: unknown[][], count = 0): unknown[][] {
    const writes = this.kept().map((k) => k.write);
    if (writes.length > 0) {
      const ids = parseWrite(results[0] ?? [], writes);
      this.transactionIds = new Map(writes.map((w, i) => [w, ids[i]!]));
    }
    const from = writes.length > 0 ? 1 : 0;
    return results.slice(from, from + count);
  }

  private kept(): { write: TransactionWrite; audit: AuditEntry | null; notices: Notification[] }[] {
    return this.writes
      .map((write, i) => ({ write, audit: this.audits[i]!, notices: this.notices[i]! }))
      .filter((k) => !this.dropped.has(k.write.accountId));
  }
}

/** The statement that sends an operation's notices through the outbox, when it has any. */
export function noticeCalls(topic: string, notices: readonly Notification[] | undefined, at: Date): Call[] {
  return notices && notices.length > 0 ? [enqueueCall(notices.map((n) => notificationMessage(topic, n, at)))] : [];
}
