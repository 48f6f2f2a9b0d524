import type { EntityManager } from 'typeorm';
import { preparedRows } from 'src/common/database/prepared';
import type { Call, PreparedStatement } from 'src/common/database/pipelined-transaction';
import type { DebtHold } from '../core/returns';
import type { Entry, WalletDelta } from '../core/posting';
import { parseWrite, writeCall } from './batch-write';
import type { GrantBucket, GrantSource } from '../core/types';
import type { HoldStatus } from '../entities/hold.entity';
import type { TransactionKind } from '../entities/ledger-transaction.entity';
import type { HoldView } from '../ledger.types';

/** A wallet row: its version and its balances, the fields a transaction's entries change (`WalletDelta`). */
export interface WalletRow extends WalletDelta {
  accountId: string;
  version: bigint;
}

export interface GrantRow extends GrantBucket {
  source: GrantSource;
  amount: bigint;
  status: 'active' | 'expired';
}

/** A hold as read under its wallet's lock: the same twelve fields as the API's view. */
export type HoldRow = HoldView;

export interface AllocationRow {
  grant: GrantRow;
  held: bigint;
  charged: bigint;
  released: bigint;
}

export interface PriorTransaction {
  id: string;
  kind: TransactionKind;
  fingerprint: string;
  holdId: string | null;
  grantId: string | null;
  explanation: Record<string, unknown>;
  /** The grant the transaction created, for grants. */
  grant: GrantRow | null;
}

/** Everything a ledger write of one wallet decides on, read under the wallet's row lock. */
export interface LockedWallet {
  wallet: WalletRow;
  /** Grants with an unheld balance. */
  grants: GrantRow[];
  /** The transaction already written under the request's idempotency key, if any. */
  prior: PriorTransaction | null;
  hold: HoldRow | null;
  /** The hold's allocations, with their grants. */
  allocations: AllocationRow[];
  /** Settled holds whose charge is partly debt, oldest first. */
  debtHolds: DebtHold[];
}

export interface HoldUpdate {
  id: string;
  status?: HoldStatus;
  amount?: bigint;
  settled?: bigint;
  released?: bigint;
  charged?: bigint;
  debt?: bigint;
  resolvedAt?: Date;
}

export interface AllocationDelta {
  holdId: string;
  grantId: string;
  held?: bigint;
  charged?: bigint;
  released?: bigint;
}

export interface TransactionWrite {
  accountId: string;
  kind: TransactionKind;
  idempotencyKey: string;
  fingerprint: string;
  amount: bigint;
  holdId: string | null;
  grantId: string | null;
  reference: string | null;
  after: { total: bigint; held: bigint; available: bigint };
  explanation: Record<string, unknown>;
  at: Date;
  entries: Entry[];
  /** The wallet version read under the lock (a safety check: the lock makes it the current one). */
  expectedVersion: bigint;
  newGrant?: {
    id: string;
    source: GrantSource;
    amount: bigint;
    remaining: bigint;
    priority: number;
    expiresAt: Date | null;
    reason: string;
    reference: string | null;
  };
  newHold?: { id: string; amount: bigint; reference: string | null; expiresAt: Date | null };
  holdUpdates?: HoldUpdate[];
  allocationDeltas?: AllocationDelta[];
}

interface LockRow {
  account_id: string;
  version: string;
  seen_version: string;
  grants_balance: string;
  holds_balance: string;
  issued: string;
  consumed: string;
  expired: string;
  debt: string;
  grants: RawGrant[];
  prior: (Omit<PriorTransaction, 'grant'> & { grant: RawGrant | null }) | null;
  hold: RawHold | null;
  allocations: { grant: RawGrant; held: string; charged: string; released: string }[];
  debt_holds: { holdId: string; debt: string }[];
}

interface RawGrant {
  id: string;
  source: GrantSource;
  amount: string;
  remaining: string;
  priority: number;
  expiresAt: string | null;
  createdAt: string;
  status: 'active' | 'expired';
}

interface RawHold {
  id: string;
  accountId: string;
  status: HoldStatus;
  amount: string;
  settledAmount: string;
  releasedAmount: string;
  chargedAmount: string;
  debtAmount: string;
  reference: string | null;
  expiresAt: string | null;
  createdAt: string;
  resolvedAt: string | null;
}

export const GRANT_JSON = `json_build_object('id', g.id, 'source', g.source, 'amount', g.amount::text, 'remaining', g.remaining::text,
  'priority', g.priority, 'expiresAt', g.expires_at, 'createdAt', g.created_at, 'status', g.status)`;

/**
 * Locks the wallet row (FOR UPDATE) and reads the state of its ledger in the same statement.
 * The subqueries read the statement's snapshot, which may predate a writer we waited for; every
 * writer bumps `wallets.version`, so comparing the locked row's version with the snapshot's tells
 * whether the rest is current. If not, the read is repeated (now under the lock, with a fresh
 * snapshot). Lock order of the service: this wallet row first, then grants, holds and allocations
 * (rows only the wallet's lock holder writes), the audit chain head last. A hold (and its
 * allocations) is read only if it is the wallet's own.
 */
const LOCK_SQL = `
SELECT w.account_id, w.version::text AS version, w.grants_balance::text AS grants_balance, w.holds_balance::text AS holds_balance,
  w.issued::text AS issued, w.consumed::text AS consumed, w.expired::text AS expired, w.debt::text AS debt,
  (SELECT s.version::text FROM wallets s WHERE s.account_id = w.account_id) AS seen_version,
  (SELECT coalesce(json_agg(${GRANT_JSON}), '[]'::json) FROM grants g WHERE g.account_id = w.account_id AND g.status = 'active' AND g.remaining > 0) AS grants,
  (SELECT json_build_object('id', t.id::text, 'kind', t.kind, 'fingerprint', t.fingerprint, 'holdId', t.hold_id, 'grantId', t.grant_id,
     'explanation', t.explanation, 'grant', (SELECT ${GRANT_JSON} FROM grants g WHERE g.id = t.grant_id))
     FROM ledger_transactions t WHERE t.account_id = w.account_id AND t.idempotency_key = $2) AS prior,
  (SELECT json_build_object('id', h.id, 'accountId', h.account_id, 'status', h.status, 'amount', h.amount::text,
     'settledAmount', h.settled_amount::text, 'releasedAmount', h.released_amount::text, 'chargedAmount', h.charged_amount::text,
     'debtAmount', h.debt_amount::text, 'reference', h.reference, 'expiresAt', h.expires_at, 'createdAt', h.created_at,
     'resolvedAt', h.resolved_at) FROM holds h WHERE h.id = $3 AND h.account_id = w.account_id) AS hold,
  (SELECT coalesce(json_agg(json_build_object('grant', (SELECT ${GRANT_JSON} FROM grants g WHERE g.id = a.grant_id),
     'held', a.held::text, 'charged', a.charged::text, 'released', a.released::text)), '[]'::json)
     FROM hold_allocations a WHERE a.hold_id = $3 AND EXISTS (SELECT 1 FROM holds h WHERE h.id = $3 AND h.account_id = w.account_id)) AS allocations,
  (SELECT coalesce(json_agg(json_build_object('holdId', d.id, 'debt', d.debt_amount::text) ORDER BY d.resolved_at, d.id COLLATE "C"), '[]'::json)
     FROM holds d WHERE d.account_id = w.account_id AND d.debt_amount > 0) AS debt_holds
FROM wallets w
WHERE w.account_id = coalesce($1::text, (SELECT x.account_id FROM holds x WHERE x.id = $3))
FOR UPDATE OF w`;

export const LOCK_STATEMENT: PreparedStatement = { name: 'ledger_lock_v5', text: LOCK_SQL };
/** Only the wallet's row lock: run before LOCK_STATEMENT in the same message, whose snapshot is then current. */
export const LOCK_ONLY_STATEMENT: PreparedStatement = {
  name: 'ledger_lock_only_v1',
  text: `SELECT 1 FROM wallets WHERE account_id = coalesce($1::text, (SELECT x.account_id FROM holds x WHERE x.id = $2)) FOR UPDATE`,
};

export interface LockKey {
  accountId?: string;
  holdId?: string;
  idempotencyKey?: string;
}

/** The SQL of the ledger: one statement to lock and read a wallet, one to write a transaction. */
export const LedgerStore = {
  lockOnlyCall(by: LockKey): Call {
    return { statement: LOCK_ONLY_STATEMENT, values: [by.accountId ?? null, by.holdId ?? null] };
  },

  lockCall(by: LockKey): Call {
    return { statement: LOCK_STATEMENT, values: [by.accountId ?? null, by.idempotencyKey ?? null, by.holdId ?? null] };
  },

  /**
   * The locked state, or `stale` when the read's snapshot predates the lock (read again: the lock
   * is held now, so the next read is current), or null when there is no such wallet.
   */
  parseLock(found: unknown[]): LockedWallet | 'stale' | null {
    const row = found[0] as LockRow | undefined;
    if (!row) return null;
    if (row.seen_version !== row.version) return 'stale';
    return toLocked(row);
  },

  /** Locks and reads in the caller's transaction. */
  async lock(em: EntityManager, by: LockKey): Promise<LockedWallet | null> {
    const call = LedgerStore.lockCall(by);
    for (let attempt = 0; attempt < 3; attempt++) {
      const state = LedgerStore.parseLock(await preparedRows(em, call.statement.name, call.statement.text, call.values));
      if (state !== 'stale') return state;
    }
    throw new Error('wallet state kept changing under its lock');
  },

  /** One transaction's write statement (batch-write.ts: the statement a group-committed batch writes with). */
  writeCall(w: TransactionWrite): Call {
    return writeCall([w]);
  },

  /** The new transaction's id; throws if the wallet was not the version read under the lock. */
  parseWrite(found: unknown[], w: TransactionWrite): string {
    return parseWrite(found, [w])[0]!;
  },

  async write(em: EntityManager, w: TransactionWrite): Promise<string> {
    const call = LedgerStore.writeCall(w);
    return LedgerStore.parseWrite(await preparedRows(em, call.statement.name, call.statement.text, call.values), w);
  },
};

export function toGrant(g: RawGrant): GrantRow {
  return {
    id: g.id,
    source: g.source,
    amount: BigInt(g.amount),
    remaining: BigInt(g.remaining),
    priority: g.priority,
    expiresAt: g.expiresAt ? new Date(g.expiresAt) : null,
    createdAt: new Date(g.createdAt),
    status: g.status,
  };
}

export function toHold(h: RawHold): HoldRow {
  return {
    id: h.id,
    accountId: h.accountId,
    status: h.status,
    amount: BigInt(h.amount),
    settledAmount: BigInt(h.settledAmount),
    releasedAmount: BigInt(h.releasedAmount),
    chargedAmount: BigInt(h.chargedAmount),
    debtAmount: BigInt(h.debtAmount),
    reference: h.reference,
    expiresAt: h.expiresAt ? new Date(h.expiresAt) : null,
    createdAt: new Date(h.createdAt),
    resolvedAt: h.resolvedAt ? new Date(h.resolvedAt) : null,
  };
}

function toLocked(r: LockRow): LockedWallet {
  return {
    wallet: {
      accountId: r.account_id,
      version: BigInt(r.version),
      grants: BigInt(r.grants_balance),
      holds: BigInt(r.holds_balance),
      issued: BigInt(r.issued),
      consumed: BigInt(r.consumed),
      expired: BigInt(r.expired),
      debt: BigInt(r.debt),
    },
    grants: r.grants.map(toGrant),
    prior: r.prior ? { ...r.prior, grant: r.prior.grant ? toGrant(r.prior.grant) : null } : null,
    hold: r.hold ? toHold(r.hold) : null,
    allocations: r.allocations.map((a) => ({
      grant: toGrant(a.grant),
      held: BigInt(a.held),
      charged: BigInt(a.charged),
      released: BigInt(a.released),
    })),
    debtHolds: r.debt_holds.map((d) => ({ holdId: d.holdId, debt: BigInt(d.debt) })),
  };
}
