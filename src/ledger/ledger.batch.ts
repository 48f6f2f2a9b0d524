import type { Call, PreparedStatement } from '../common/database/pipelined-transaction';
import { grantDeltas, walletDelta } from './core/posting';
import type { DebtHold } from './core/returns';
import { bigintAsString, GRANT_JSON, toGrant, toHold, type AllocationRow, type GrantRow, type HoldRow, type LockedWallet, type LockKey, type PriorTransaction, type TransactionWrite } from './ledger.store';

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
 * wallet, the batch's holds of that wallet with their allocations, and the wallet's debts. $2 and
 * $3 map each account id to its keys and its hold ids. (Run after LOCK_WALLETS_STATEMENT, in the
 * same message: its snapshot is taken once the locks are held, so it is current.)
 */
const READ_BATCH_SQL = `
SELECT w.account_id, w.version::text AS version, w.grants_balance::text AS grants_balance, w.holds_balance::text AS holds_balance,
  w.issued::text AS issued, w.consumed::text AS consumed, w.expired::text AS expired, w.debt::text AS debt,
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
     FROM holds h WHERE h.id = ANY(ARRAY(SELECT jsonb_array_elements_text($3::jsonb -> w.account_id)))) AS holds,
  (SELECT coalesce(json_agg(json_build_object('holdId', a.hold_id, 'grant', (SELECT ${GRANT_JSON} FROM grants g WHERE g.id = a.grant_id),
     'held', a.held::text, 'charged', a.charged::text, 'released', a.released::text)), '[]'::json)
     FROM hold_allocations a WHERE a.hold_id = ANY(ARRAY(SELECT jsonb_array_elements_text($3::jsonb -> w.account_id)))) AS allocations,
  (SELECT coalesce(json_agg(json_build_object('holdId', d.id, 'debt', d.debt_amount::text, 'resolvedAt', d.resolved_at)
     ORDER BY d.resolved_at, d.id COLLATE "C"), '[]'::json)
     FROM holds d WHERE d.account_id = w.account_id AND d.debt_amount > 0) AS debt_holds
FROM wallets w
WHERE w.account_id = ANY($1::text[])`;

const READ_BATCH_STATEMENT: PreparedStatement = { name: 'ledger_read_batch_v2', text: READ_BATCH_SQL };

/** The first statements of a batch: lock its wallets, then read them (`locks`: each wallet's operations' keys). */
export function batchReadCalls(locks: ReadonlyMap<string, readonly LockKey[]>): Call[] {
  const accounts = [...locks.keys()];
  const keys: Record<string, string[]> = {};
  const holds: Record<string, string[]> = {};
  for (const [accountId, of] of locks) {
    keys[accountId] = [...new Set(of.map((l) => l.idempotencyKey).filter((k): k is string => !!k))];
    holds[accountId] = [...new Set(of.map((l) => l.holdId).filter((h): h is string => !!h))];
  }
  return [
    { statement: LOCK_WALLETS_STATEMENT, values: [accounts] },
    { statement: READ_BATCH_STATEMENT, values: [accounts, JSON.stringify(keys), JSON.stringify(holds)] },
  ];
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
    );
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

  /** Applies a decided transaction, as WRITE_SQL does. */
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
      per.set(a.grantId, { held: cur.held + (a.held ?? 0n), charged: cur.charged + (a.charged ?? 0n), released: cur.released + (a.released ?? 0n) });
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
 * Writes every transaction of a batch in one statement, as WRITE_SQL (ledger.store.ts) writes one:
 * the transactions (in batch order, so their ids follow it) and their entries, new grants and
 * holds, the changes of existing grants, holds and allocations (summed per row over the batch), and
 * each wallet once, checked at the version its first write was decided on. Rows are found by
 * primary key (= ANY of an id array, deltas from JSON objects keyed by id), never by a join the
 * planner could turn into a scan. Returns each transaction's id with its account and key.
 */
const WRITE_BATCH_SQL = `
WITH tx AS (
  INSERT INTO ledger_transactions (account_id, kind, idempotency_key, fingerprint, amount, hold_id, grant_id, reference,
    total_after, held_after, available_after, explanation, created_at)
  SELECT r.account_id, r.kind, r.key, r.fingerprint, r.amount, r.hold_id, r.grant_id, r.reference, r.total_after, r.held_after,
    r.available_after, r.explanation, r.at
  FROM jsonb_to_recordset($1::jsonb) AS r(ord int, account_id text, kind text, key text, fingerprint text, amount bigint, hold_id text,
    grant_id text, reference text, total_after bigint, held_after bigint, available_after bigint, explanation jsonb, at timestamptz)
  ORDER BY r.ord
  RETURNING id, account_id, idempotency_key
), ent AS (
  INSERT INTO ledger_entries (transaction_id, line, ledger_account, amount)
  SELECT tx.id, e.line, e.account, e.amount
  FROM jsonb_to_recordset($2::jsonb) AS e(account_id text, key text, line smallint, account text, amount bigint)
  JOIN tx ON tx.account_id = e.account_id AND tx.idempotency_key = e.key
), new_grant AS (
  INSERT INTO grants (id, account_id, source, amount, remaining, priority, expires_at, reason, reference, created_at)
  SELECT g.id, g.account_id, g.source, g.amount, g.remaining, g.priority, g.expires_at, g.reason, g.reference, g.at
  FROM jsonb_to_recordset($3::jsonb) AS g(id text, account_id text, source text, amount bigint, remaining bigint, priority int,
    expires_at timestamptz, reason text, reference text, at timestamptz)
), grant_update AS (
  UPDATE grants g SET remaining = g.remaining + ($4::jsonb ->> g.id)::bigint, version = g.version + 1
  WHERE g.id = ANY($5::text[])
), new_hold AS (
  INSERT INTO holds (id, account_id, status, amount, reference, expires_at, created_at)
  SELECT h.id, h.account_id, 'reserved', h.amount, h.reference, h.expires_at, h.at
  FROM jsonb_to_recordset($6::jsonb) AS h(id text, account_id text, amount bigint, reference text, expires_at timestamptz, at timestamptz)
), hold_update AS (
  UPDATE holds h SET status = coalesce($7::jsonb -> h.id ->> 'status', h.status),
    amount = h.amount + ($7::jsonb -> h.id ->> 'amount')::bigint,
    settled_amount = h.settled_amount + ($7::jsonb -> h.id ->> 'settled')::bigint,
    released_amount = h.released_amount + ($7::jsonb -> h.id ->> 'released')::bigint,
    charged_amount = h.charged_amount + ($7::jsonb -> h.id ->> 'charged')::bigint,
    debt_amount = h.debt_amount + ($7::jsonb -> h.id ->> 'debt')::bigint,
    resolved_at = coalesce(($7::jsonb -> h.id ->> 'resolved_at')::timestamptz, h.resolved_at), version = h.version + 1
  WHERE h.id = ANY($8::text[])
), allocation_update AS (
  UPDATE hold_allocations a SET held = a.held + ($9::jsonb -> (a.hold_id || '|' || a.grant_id) ->> 'held')::bigint,
    charged = a.charged + ($9::jsonb -> (a.hold_id || '|' || a.grant_id) ->> 'charged')::bigint,
    released = a.released + ($9::jsonb -> (a.hold_id || '|' || a.grant_id) ->> 'released')::bigint
  WHERE a.hold_id = ANY($10::text[]) AND $9::jsonb ? (a.hold_id || '|' || a.grant_id)
), allocation_insert AS (
  INSERT INTO hold_allocations (hold_id, grant_id, held, charged, released)
  SELECT split_part(d.key, '|', 1), split_part(d.key, '|', 2), (d.value ->> 'held')::bigint, (d.value ->> 'charged')::bigint,
    (d.value ->> 'released')::bigint
  FROM jsonb_each($9::jsonb) AS d
  WHERE (SELECT count(*) FROM hold_allocations a WHERE a.hold_id = split_part(d.key, '|', 1) AND a.grant_id = split_part(d.key, '|', 2)) = 0
), wallet AS (
  UPDATE wallets w SET grants_balance = w.grants_balance + ($11::jsonb -> w.account_id ->> 'grants')::bigint,
    holds_balance = w.holds_balance + ($11::jsonb -> w.account_id ->> 'holds')::bigint,
    issued = w.issued + ($11::jsonb -> w.account_id ->> 'issued')::bigint,
    consumed = w.consumed + ($11::jsonb -> w.account_id ->> 'consumed')::bigint,
    expired = w.expired + ($11::jsonb -> w.account_id ->> 'expired')::bigint,
    debt = w.debt + ($11::jsonb -> w.account_id ->> 'debt')::bigint,
    version = w.version + ($11::jsonb -> w.account_id ->> 'writes')::bigint,
    updated_at = ($11::jsonb -> w.account_id ->> 'at')::timestamptz
  WHERE w.account_id = ANY($12::text[]) AND w.version = ($11::jsonb -> w.account_id ->> 'expected')::bigint
  RETURNING 1
)
SELECT tx.account_id, tx.idempotency_key AS key, tx.id::text AS id,
  ledger_assert((SELECT count(*) FROM wallet) = cardinality($12::text[]),
    'ledger write refused: a wallet is not at the version read under its lock') AS ok
FROM tx`;

const WRITE_BATCH_STATEMENT: PreparedStatement = { name: 'ledger_write_batch_v1', text: WRITE_BATCH_SQL };

interface HoldChange {
  status: string | null;
  amount: bigint;
  settled: bigint;
  released: bigint;
  charged: bigint;
  debt: bigint;
  resolved_at: Date | null;
}

interface WalletChange {
  expected: bigint;
  writes: bigint;
  grants: bigint;
  holds: bigint;
  issued: bigint;
  consumed: bigint;
  expired: bigint;
  debt: bigint;
  at: Date;
}

/**
 * The statement that writes `writes` (decided in this order, each on its wallet's state with the
 * ones before it applied: WalletBatch). A grant created by one write and drawn on by a later one is
 * inserted with its final balance (a statement cannot update a row it inserts). Throws — before
 * anything is sent — on a batch the statement cannot express: a write not decided on its wallet's
 * version after the previous write, or a hold both created and changed.
 */
export function batchWriteCall(writes: readonly TransactionWrite[]): Call {
  const txs: unknown[] = [];
  const entries: unknown[] = [];
  const newGrants = new Map<string, { remaining: bigint } & Record<string, unknown>>();
  const grantChanges = new Map<string, bigint>();
  const newHolds = new Map<string, Record<string, unknown>>();
  const holdChanges = new Map<string, HoldChange>();
  const allocationChanges = new Map<string, Allocation & { holdId: string }>();
  const walletChanges = new Map<string, WalletChange>();
  writes.forEach((w, ord) => {
    txs.push({
      ord,
      account_id: w.accountId,
      kind: w.kind,
      key: w.idempotencyKey,
      fingerprint: w.fingerprint,
      amount: w.amount,
      hold_id: w.holdId,
      grant_id: w.grantId,
      reference: w.reference,
      total_after: w.after.total,
      held_after: w.after.held,
      available_after: w.after.available,
      explanation: w.explanation,
      at: w.at,
    });
    w.entries.forEach((e, i) => entries.push({ account_id: w.accountId, key: w.idempotencyKey, line: i + 1, account: e.account, amount: e.amount }));
    if (w.newGrant) newGrants.set(w.newGrant.id, { ...w.newGrant, account_id: w.accountId, expires_at: w.newGrant.expiresAt, at: w.at });
    for (const change of grantDeltas(w.entries)) {
      if (change.grantId === w.newGrant?.id) continue;
      const created = newGrants.get(change.grantId);
      if (created) created.remaining += change.amount;
      else grantChanges.set(change.grantId, (grantChanges.get(change.grantId) ?? 0n) + change.amount);
    }
    if (w.newHold) newHolds.set(w.newHold.id, { ...w.newHold, account_id: w.accountId, expires_at: w.newHold.expiresAt, at: w.at });
    for (const u of w.holdUpdates ?? []) {
      if (newHolds.has(u.id)) throw new Error(`hold ${u.id} is created and changed in one batch`);
      const c = holdChanges.get(u.id) ?? { status: null, amount: 0n, settled: 0n, released: 0n, charged: 0n, debt: 0n, resolved_at: null };
      holdChanges.set(u.id, {
        status: u.status ?? c.status,
        amount: c.amount + (u.amount ?? 0n),
        settled: c.settled + (u.settled ?? 0n),
        released: c.released + (u.released ?? 0n),
        charged: c.charged + (u.charged ?? 0n),
        debt: c.debt + (u.debt ?? 0n),
        resolved_at: u.resolvedAt ?? c.resolved_at,
      });
    }
    for (const a of w.allocationDeltas ?? []) {
      const key = `${a.holdId}|${a.grantId}`;
      const c = allocationChanges.get(key) ?? { holdId: a.holdId, held: 0n, charged: 0n, released: 0n };
      allocationChanges.set(key, { holdId: a.holdId, held: c.held + (a.held ?? 0n), charged: c.charged + (a.charged ?? 0n), released: c.released + (a.released ?? 0n) });
    }
    const wallet = walletChanges.get(w.accountId) ?? { expected: w.expectedVersion, writes: 0n, grants: 0n, holds: 0n, issued: 0n, consumed: 0n, expired: 0n, debt: 0n, at: w.at };
    if (w.expectedVersion !== wallet.expected + wallet.writes) {
      throw new Error(`a write of wallet ${w.accountId} was decided on version ${w.expectedVersion}, not ${wallet.expected + wallet.writes}`);
    }
    const d = walletDelta(w.entries);
    walletChanges.set(w.accountId, {
      expected: wallet.expected,
      writes: wallet.writes + 1n,
      grants: wallet.grants + d.grants,
      holds: wallet.holds + d.holds,
      issued: wallet.issued + d.issued,
      consumed: wallet.consumed + d.consumed,
      expired: wallet.expired + d.expired,
      debt: wallet.debt + d.debt,
      at: w.at,
    });
  });
  const json = (value: unknown): string => JSON.stringify(value, bigintAsString);
  return {
    statement: WRITE_BATCH_STATEMENT,
    values: [
      json(txs),
      json(entries),
      json([...newGrants.values()]),
      json(Object.fromEntries(grantChanges)),
      [...grantChanges.keys()],
      json([...newHolds.values()]),
      json(Object.fromEntries(holdChanges)),
      [...holdChanges.keys()],
      json(Object.fromEntries([...allocationChanges].map(([key, { holdId: _, ...a }]) => [key, a]))),
      [...new Set([...allocationChanges.values()].map((a) => a.holdId))],
      json(Object.fromEntries(walletChanges)),
      [...walletChanges.keys()],
    ],
  };
}

/** The id of each write's transaction, in the order of `writes`; throws if the statement did not write them all. */
export function parseBatchWrite(found: unknown[], writes: readonly TransactionWrite[]): string[] {
  const ids = new Map((found as { account_id: string; key: string; id: string; ok: boolean }[]).filter((r) => r.ok).map((r) => [`${r.account_id}\u0000${r.key}`, r.id]));
  return writes.map((w) => {
    const id = ids.get(`${w.accountId}\u0000${w.idempotencyKey}`);
    if (!id) throw new Error(`the batch's write of wallet ${w.accountId} returned no transaction for ${w.idempotencyKey}`);
    return id;
  });
}
