import type { EntityManager } from 'typeorm';
import type { Call, PreparedStatement } from 'src/common/database/pipelined-transaction';
import { rows } from 'src/common/database/transaction';
import { lineAfterWriteSql } from '../core/low-balance';
import { grantDeltas, walletDelta, type WalletDelta } from '../core/posting';
import { reportLedgerWrites } from '../ledger-flows';
import type { TransactionWrite } from './wallet-store';

/**
 * Writes ledger transactions — one operation's, or every one of a group-committed batch — in one
 * statement: the transactions (in the given order, so their ids follow it) and their entries, new
 * grants and holds, the changes of existing grants, holds and allocations (summed per row), and
 * each wallet once, checked at the version its first write was decided on (its low-balance line
 * re-armed by lineAfterWriteSql on the highest available balance its writes leave), and the balance's
 * change of each wallet's months (ledger_months: one row per wallet and month the writes are dated in).
 * Rows are found by primary key (= ANY of an id array, deltas from JSON objects keyed by id), never by a join the
 * planner could turn into a scan. Returns each transaction's id with its account and key.
 */
const LOW_BALANCE = lineAfterWriteSql({
  line: 'w.low_balance_line',
  rises: 'w.low_balance_rises',
  available: "($11::jsonb -> w.account_id ->> 'peak')::bigint",
});
const WRITE_SQL = `
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
    low_balance_line = ${LOW_BALANCE.line},
    low_balance_rises = ${LOW_BALANCE.rises},
    updated_at = ($11::jsonb -> w.account_id ->> 'at')::timestamptz
  WHERE w.account_id = ANY($12::text[]) AND w.version = ($11::jsonb -> w.account_id ->> 'expected')::bigint
  RETURNING 1
), month AS (
  INSERT INTO ledger_months (account_id, month, balance_change)
  SELECT m.account_id, m.month, m.change FROM jsonb_to_recordset($13::jsonb) AS m(account_id text, month date, change bigint)
  ON CONFLICT (account_id, month) DO UPDATE SET balance_change = ledger_months.balance_change + excluded.balance_change
)
SELECT tx.account_id, tx.idempotency_key AS key, tx.id::text AS id,
  ledger_assert((SELECT count(*) FROM wallet) = cardinality($12::text[]),
    'ledger write refused: a wallet is not at the version read under its lock') AS ok
FROM tx`;

export const WRITE_STATEMENT: PreparedStatement = { name: 'ledger_write_v6', text: WRITE_SQL };

interface HoldChange {
  status: string | null;
  amount: bigint;
  settled: bigint;
  released: bigint;
  charged: bigint;
  debt: bigint;
  resolved_at: Date | null;
}

interface WalletChange extends WalletDelta {
  expected: bigint;
  writes: bigint;
  at: Date;
  /** The highest available balance a write of the statement leaves (what the low-balance line is re-armed on: lineAfterWrite). */
  peak: bigint;
}

/**
 * The statement that writes `writes` (decided in this order, each on its wallet's state with the
 * ones before it applied: WalletBatch in ledger-batch.ts). A grant created by one write and drawn
 * on by a later one is inserted with its final balance (a statement cannot update a row it
 * inserts). Throws — before anything is sent — on writes the statement cannot express: one not
 * decided on its wallet's version after the previous write, or a hold both created and changed.
 */
export function writeCall(writes: readonly TransactionWrite[]): Call {
  const batch = new BatchWrite();
  for (const w of writes) batch.add(w);
  return batch.call();
}

/** What the write statement changes, row by row, summed over the writes added (in their order). */
class BatchWrite {
  private readonly txs: unknown[] = [];
  private readonly entries: unknown[] = [];
  private readonly newGrants = new Map<string, { remaining: bigint } & Record<string, unknown>>();
  private readonly grantChanges = new Map<string, bigint>();
  private readonly newHolds = new Map<string, Record<string, unknown>>();
  private readonly holdChanges = new Map<string, HoldChange>();
  private readonly allocationChanges = new Map<string, { holdId: string; held: bigint; charged: bigint; released: bigint }>();
  private readonly walletChanges = new Map<string, WalletChange>();
  /** Per wallet and UTC month of `at`: the change of grants + holds − debt, i.e. −(issued + consumed + expired). */
  private readonly monthChanges = new Map<string, { account_id: string; month: string; change: bigint }>();

  add(w: TransactionWrite): void {
    this.addTransaction(w);
    this.addGrants(w);
    this.addHolds(w);
    this.addWallet(w);
  }

  call(): Call {
    return {
      statement: WRITE_STATEMENT,
      values: [
        // Built JSON-ready (addTransaction): the batch's most numerous rows are not copied again.
        JSON.stringify(this.txs),
        JSON.stringify(this.entries),
        jsonWithBigints([...this.newGrants.values()]),
        jsonWithBigints(Object.fromEntries(this.grantChanges)),
        [...this.grantChanges.keys()],
        jsonWithBigints([...this.newHolds.values()]),
        jsonWithBigints(Object.fromEntries(this.holdChanges)),
        [...this.holdChanges.keys()],
        jsonWithBigints(Object.fromEntries([...this.allocationChanges].map(([key, { holdId: _, ...a }]) => [key, a]))),
        [...new Set([...this.allocationChanges.values()].map((a) => a.holdId))],
        jsonWithBigints(Object.fromEntries(this.walletChanges)),
        [...this.walletChanges.keys()],
        jsonWithBigints([...this.monthChanges.values()].filter((m) => m.change !== 0n)),
      ],
    };
  }

  /**
   * The transaction (its `ord` keeps the order of the ids) and its entries, as the JSON rows the
   * statement reads: bigints as decimal strings and the instant as ISO text here, so that these rows
   * (most of a batch's) are serialized as they are, not copied first (withoutBigints) to turn them.
   */
  private addTransaction(w: TransactionWrite): void {
    this.txs.push({
      ord: this.txs.length,
      account_id: w.accountId,
      kind: w.kind,
      key: w.idempotencyKey,
      fingerprint: w.fingerprint,
      amount: w.amount.toString(),
      hold_id: w.holdId,
      grant_id: w.grantId,
      reference: w.reference,
      total_after: w.after.total.toString(),
      held_after: w.after.held.toString(),
      available_after: w.after.available.toString(),
      explanation: withoutBigints(w.explanation),
      at: w.at.toISOString(),
    });
    w.entries.forEach((e, i) =>
      this.entries.push({ account_id: w.accountId, key: w.idempotencyKey, line: i + 1, account: e.account, amount: e.amount.toString() }),
    );
  }

  /** A new grant, and the changes of grants' balances (a grant created in the batch is inserted with its final balance). */
  private addGrants(w: TransactionWrite): void {
    if (w.newGrant) {
      this.newGrants.set(w.newGrant.id, { ...w.newGrant, account_id: w.accountId, expires_at: w.newGrant.expiresAt, at: w.at });
    }
    for (const change of grantDeltas(w.entries)) {
      if (change.grantId === w.newGrant?.id) continue;
      const created = this.newGrants.get(change.grantId);
      if (created) created.remaining += change.amount;
      else this.grantChanges.set(change.grantId, (this.grantChanges.get(change.grantId) ?? 0n) + change.amount);
    }
  }

  /** A new hold, and the changes of holds and their allocations. */
  private addHolds(w: TransactionWrite): void {
    if (w.newHold) this.newHolds.set(w.newHold.id, { ...w.newHold, account_id: w.accountId, expires_at: w.newHold.expiresAt, at: w.at });
    for (const u of w.holdUpdates ?? []) {
      if (this.newHolds.has(u.id)) throw new Error(`hold ${u.id} is created and changed in one batch`);
      const c = this.holdChanges.get(u.id) ?? {
        status: null,
        amount: 0n,
        settled: 0n,
        released: 0n,
        charged: 0n,
        debt: 0n,
        resolved_at: null,
      };
      this.holdChanges.set(u.id, {
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
      const c = this.allocationChanges.get(key) ?? { holdId: a.holdId, held: 0n, charged: 0n, released: 0n };
      this.allocationChanges.set(key, {
        holdId: a.holdId,
        held: c.held + (a.held ?? 0n),
        charged: c.charged + (a.charged ?? 0n),
        released: c.released + (a.released ?? 0n),
      });
    }
  }

  /** The wallet's balances, written once, checked at the version its first write was decided on. */
  private addWallet(w: TransactionWrite): void {
    const wallet = this.walletChanges.get(w.accountId) ?? {
      expected: w.expectedVersion,
      writes: 0n,
      grants: 0n,
      holds: 0n,
      issued: 0n,
      consumed: 0n,
      expired: 0n,
      debt: 0n,
      at: w.at,
      peak: w.after.available,
    };
    if (w.expectedVersion !== wallet.expected + wallet.writes) {
      throw new Error(
        `a write of wallet ${w.accountId} was decided on version ${w.expectedVersion}, not ${wallet.expected + wallet.writes}`,
      );
    }
    const d = walletDelta(w.entries);
    const month = `${w.at.toISOString().slice(0, 7)}-01`;
    const key = `${w.accountId}\u0000${month}`;
    const m = this.monthChanges.get(key) ?? { account_id: w.accountId, month, change: 0n };
    m.change -= d.issued + d.consumed + d.expired;
    this.monthChanges.set(key, m);
    this.walletChanges.set(w.accountId, {
      expected: wallet.expected,
      writes: wallet.writes + 1n,
      grants: wallet.grants + d.grants,
      holds: wallet.holds + d.holds,
      issued: wallet.issued + d.issued,
      consumed: wallet.consumed + d.consumed,
      expired: wallet.expired + d.expired,
      debt: wallet.debt + d.debt,
      at: w.at,
      peak: w.after.available > wallet.peak ? w.after.available : wallet.peak,
    });
  }
}

/** The id of each write's transaction, in the order of `writes`; throws if the statement did not write them all. */
export function parseWrite(found: unknown[], writes: readonly TransactionWrite[]): string[] {
  const ids = new Map(
    (found as { account_id: string; key: string; id: string; ok: boolean }[])
      .filter((r) => r.ok)
      .map((r) => [`${r.account_id}\u0000${r.key}`, r.id]),
  );
  const parsed = writes.map((w) => {
    const id = ids.get(`${w.accountId}\u0000${w.idempotencyKey}`);
    if (!id) throw new Error(`the ledger write of wallet ${w.accountId} returned no transaction for ${w.idempotencyKey}`);
    return id;
  });
  // Counted once the statement has written them: a transaction that fails after its write (rare:
  // its COMMIT fails) is counted all the same, so these counters are for rates, the ledger for sums.
  reportLedgerWrites(writes);
  return parsed;
}

/**
 * JSON with every bigint written as a string, without a replacer: the bigints are turned into strings
 * first, so that V8 serializes the rest on its fast path (a batch of 256 settlements is thousands of
 * values; with a replacer, serializing it was a sixth of the settlement path's CPU).
 */
export function jsonWithBigints(value: unknown): string {
  return JSON.stringify(withoutBigints(value));
}

function withoutBigints(value: unknown): unknown {
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'object': {
      if (value === null) return null;
      if (Array.isArray(value)) return value.map(withoutBigints);
      // A Date (or anything with toJSON) is written by its toJSON, as with the replacer.
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(value)) out[key] = withoutBigints((value as Record<string, unknown>)[key]);
      return out;
    }
    default:
      return value;
  }
}

/** Writes `writes` in the caller's transaction, in one statement; returns their transaction ids in order. */
export async function writeTransactions(em: Pick<EntityManager, 'query'>, writes: readonly TransactionWrite[]): Promise<string[]> {
  if (writes.length === 0) return [];
  const call = writeCall(writes);
  return parseWrite(await rows(em, call.statement.text, call.values), writes);
}
