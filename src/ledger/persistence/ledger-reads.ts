import type { EntityManager } from 'typeorm';
import { rows } from 'src/common/database/transaction';
import { BillingException } from 'src/common/errors/billing.exception';
import { inBurnOrder, isExpired } from '../core/burn-order';
import { balanceOf, grantView } from '../operations/balance';
import type { Discrepancy, HoldView, StatementEntry, WalletView } from '../ledger.types';
import { toGrant, toHold } from './wallet-store';

// The ledger's reads and checks outside the hot write path: their SQL and the mapping of its rows.

/** What the ledger's SQL runs on: a transaction's manager, or the data source. */
export type Db = Pick<EntityManager, 'query'>;

/** Creates the account's (empty) wallet if it has none; DL_BILLING_NOT_FOUND for an unknown account. */
export async function ensureWallet(em: Db, accountId: string): Promise<void> {
  const [row] = await rows<{ account: boolean }>(
    em,
    `WITH created AS (
       INSERT INTO wallets (account_id) SELECT id FROM accounts WHERE id = $1 ON CONFLICT (account_id) DO NOTHING RETURNING 1
     )
     SELECT EXISTS (SELECT 1 FROM accounts WHERE id = $1) AS account`,
    [accountId],
  );
  if (!row?.account) throw BillingException.notFound(`Account ${accountId}`);
}

/**
 * The wallet now: balances and the unexpired grants with credits left, in burn order. An account
 * without a wallet yet has an empty one; an unknown account is DL_BILLING_NOT_FOUND.
 */
export async function walletView(db: Db, accountId: string, now: Date): Promise<WalletView> {
  const [row] = await rows<{ holds_balance: string; debt: string; grants: Parameters<typeof toGrant>[0][] }>(
    db,
    `SELECT w.holds_balance::text AS holds_balance, w.debt::text AS debt,
       (SELECT coalesce(json_agg(json_build_object('id', g.id, 'source', g.source, 'amount', g.amount::text,
          'remaining', g.remaining::text, 'priority', g.priority, 'expiresAt', g.expires_at, 'createdAt', g.created_at,
          'status', g.status)), '[]'::json)
        FROM grants g WHERE g.account_id = w.account_id AND g.status = 'active' AND g.remaining > 0) AS grants
     FROM wallets w WHERE w.account_id = $1`,
    [accountId],
  );
  if (!row) {
    if (!(await rows(db, `SELECT 1 FROM accounts WHERE id = $1`, [accountId])).length) {
      throw BillingException.notFound(`Account ${accountId}`);
    }
    return { accountId, total: 0n, held: 0n, available: 0n, debt: 0n, grants: [] };
  }
  const grants = row.grants.map(toGrant);
  const balance = balanceOf(grants, BigInt(row.holds_balance), BigInt(row.debt), now);
  const live = inBurnOrder(grants.filter((g) => !isExpired(g, now)));
  return {
    accountId,
    ...balance,
    grants: live.map(grantView),
  };
}

export async function holdView(db: Db, holdId: string): Promise<HoldView | null> {
  const [row] = await rows<{ hold: Parameters<typeof toHold>[0] }>(
    db,
    `SELECT json_build_object('id', h.id, 'accountId', h.account_id, 'status', h.status, 'amount', h.amount::text,
       'settledAmount', h.settled_amount::text, 'releasedAmount', h.released_amount::text, 'chargedAmount', h.charged_amount::text,
       'debtAmount', h.debt_amount::text, 'reference', h.reference, 'expiresAt', h.expires_at, 'createdAt', h.created_at,
       'resolvedAt', h.resolved_at) AS hold FROM holds h WHERE h.id = $1`,
    [holdId],
  );
  return row ? toHold(row.hold) : null;
}

/**
 * The account's transactions, newest first; `cursor` is the id of the last one of the previous page.
 * Read from the statement's index (account, id) as far as the page: `= ANY` keeps the account out of
 * the planner's constants, so the order asked is that index's alone; ordered by id with the account a
 * constant, the planner could walk every account's newer transactions backwards by id instead.
 */
export async function statementPage(
  db: Db,
  accountId: string,
  opts: { cursor?: string; limit: number },
): Promise<{ items: StatementEntry[]; nextCursor: string | null }> {
  const found = await rows<{
    id: string;
    created_at: Date;
    kind: string;
    amount: string;
    total_after: string;
    held_after: string;
    available_after: string;
    hold_id: string | null;
    grant_id: string | null;
    reference: string | null;
    explanation: Record<string, unknown>;
  }>(
    db,
    `SELECT id::text AS id, created_at, kind, amount::text AS amount, total_after::text AS total_after,
       held_after::text AS held_after, available_after::text AS available_after, hold_id, grant_id, reference, explanation
     FROM ledger_transactions
     WHERE account_id = ANY(ARRAY[$1::text]) AND kind <> '' AND ($2::bigint IS NULL OR id < $2)
     ORDER BY ledger_transactions.account_id DESC, ledger_transactions.id DESC LIMIT $3`,
    [accountId, opts.cursor ?? null, opts.limit + 1],
  );
  const items = found.slice(0, opts.limit).map((r) => ({
    id: r.id,
    at: r.created_at,
    kind: r.kind,
    amount: BigInt(r.amount),
    totalAfter: BigInt(r.total_after),
    heldAfter: BigInt(r.held_after),
    availableAfter: BigInt(r.available_after),
    holdId: r.hold_id,
    grantId: r.grant_id,
    reference: r.reference,
    explanation: r.explanation,
  }));
  return { items, nextCursor: found.length > opts.limit ? (items[items.length - 1]?.id ?? null) : null };
}

/** Σ settled charges (and corrections) posted in [from, to). */
export async function consumedBetween(db: Db, accountId: string, from: Date, to: Date): Promise<bigint> {
  const [row] = await rows<{ spent: string }>(
    db,
    `SELECT coalesce(sum(e.amount), 0)::text AS spent
     FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id AND e.ledger_account = 'consumption'
     WHERE t.account_id = $1 AND t.kind <> '' AND t.created_at >= $2 AND t.created_at < $3 AND t.kind IN ('settlement', 'adjustment')`,
    [accountId, from, to],
  );
  return BigInt(row?.spent ?? '0');
}

export async function accountExists(db: Db, accountId: string): Promise<boolean> {
  const found = await rows<{ id: string }>(db, `SELECT id FROM accounts WHERE id = $1`, [accountId]);
  return found.length > 0;
}

/** The ids of open holds whose `expiresAt` has passed, oldest first. */
export async function dueHoldIds(db: Db, now: Date, limit: number): Promise<string[]> {
  const due = await rows<{ id: string }>(
    db,
    `SELECT id FROM holds WHERE status = 'reserved' AND expires_at <= $1 ORDER BY expires_at, id LIMIT $2`,
    [now, limit],
  );
  return due.map((r) => r.id);
}

/**
 * Checks the ledger's invariants and returns every discrepancy (none when healthy): each
 * transaction's entries sum to zero, every stored balance (wallet columns, grants' remaining,
 * open holds' amounts) equals the sum of its entries, holds' charges equal their allocations
 * plus debt, the wallet's debt equals its holds' debt, and each month's stored balance change
 * (ledger_months) equals its entries'.
 */
export async function reconcile(db: Db, accountId?: string): Promise<Discrepancy[]> {
  const acc = accountId ?? null;
  const found = await rows<Discrepancy>(
    db,
    `WITH tx AS (SELECT id, account_id, created_at FROM ledger_transactions WHERE $1::text IS NULL OR account_id = $1),
     month_sums AS (
       SELECT tx.account_id, (date_trunc('month', tx.created_at AT TIME ZONE 'UTC'))::date AS month, -sum(e.amount) AS change
       FROM tx JOIN ledger_entries e ON e.transaction_id = tx.id
       WHERE e.ledger_account IN ('issued', 'consumption', 'expired') GROUP BY 1, 2
     ),
     per_account AS (
       SELECT tx.account_id, e.ledger_account, sum(e.amount) AS total
       FROM tx JOIN ledger_entries e ON e.transaction_id = tx.id GROUP BY tx.account_id, e.ledger_account
     ), wallet_sums AS (
       SELECT account_id,
         coalesce(sum(total) FILTER (WHERE ledger_account LIKE 'grant:%'), 0) AS grants_balance,
         coalesce(sum(total) FILTER (WHERE ledger_account LIKE 'hold:%'), 0) AS holds_balance,
         coalesce(sum(total) FILTER (WHERE ledger_account = 'issued'), 0) AS issued,
         coalesce(sum(total) FILTER (WHERE ledger_account = 'consumption'), 0) AS consumed,
         coalesce(sum(total) FILTER (WHERE ledger_account = 'expired'), 0) AS expired,
         coalesce(sum(total) FILTER (WHERE ledger_account = 'debt'), 0) AS debt
       FROM per_account GROUP BY account_id
     )
     SELECT tx.account_id AS "accountId", 'transaction ' || tx.id || ' entries sum' AS what, '0' AS stored,
            sum(e.amount)::text AS "fromEntries"
       FROM tx JOIN ledger_entries e ON e.transaction_id = tx.id GROUP BY tx.account_id, tx.id HAVING sum(e.amount) <> 0
     UNION ALL
     SELECT w.account_id, 'wallet ' || c.col, c.stored::text, c.computed::text
       FROM wallets w LEFT JOIN wallet_sums s ON s.account_id = w.account_id,
       LATERAL (VALUES ('grants_balance', w.grants_balance, coalesce(s.grants_balance, 0)),
                       ('holds_balance', w.holds_balance, coalesce(s.holds_balance, 0)),
                       ('issued', w.issued, coalesce(s.issued, 0)),
                       ('consumed', w.consumed, coalesce(s.consumed, 0)),
                       ('expired', w.expired, coalesce(s.expired, 0)),
                       ('debt', w.debt, coalesce(s.debt, 0))) AS c(col, stored, computed)
       WHERE ($1::text IS NULL OR w.account_id = $1) AND c.stored <> c.computed
     UNION ALL
     SELECT g.account_id, 'grant ' || g.id || ' remaining', g.remaining::text, coalesce(p.total, 0)::text
       FROM grants g LEFT JOIN per_account p ON p.account_id = g.account_id AND p.ledger_account = 'grant:' || g.id
       WHERE ($1::text IS NULL OR g.account_id = $1) AND g.remaining <> coalesce(p.total, 0)
     UNION ALL
     SELECT h.account_id, 'hold ' || h.id || ' held', (CASE WHEN h.status = 'reserved' THEN h.amount ELSE 0 END)::text,
            coalesce(p.total, 0)::text
       FROM holds h LEFT JOIN per_account p ON p.account_id = h.account_id AND p.ledger_account = 'hold:' || h.id
       WHERE ($1::text IS NULL OR h.account_id = $1) AND (CASE WHEN h.status = 'reserved' THEN h.amount ELSE 0 END) <> coalesce(p.total, 0)
     UNION ALL
     SELECT h.account_id, 'hold ' || h.id || ' charge vs allocations + debt', h.charged_amount::text, (coalesce(a.charged, 0) + h.debt_amount)::text
       FROM holds h LEFT JOIN (SELECT hold_id, sum(charged) AS charged FROM hold_allocations GROUP BY hold_id) a ON a.hold_id = h.id
       WHERE ($1::text IS NULL OR h.account_id = $1) AND h.charged_amount <> coalesce(a.charged, 0) + h.debt_amount
     UNION ALL
     SELECT w.account_id, 'wallet debt vs holds debt', w.debt::text, (-coalesce(d.debt, 0))::text
       FROM wallets w LEFT JOIN (SELECT account_id, sum(debt_amount) AS debt FROM holds GROUP BY account_id) d ON d.account_id = w.account_id
       WHERE ($1::text IS NULL OR w.account_id = $1) AND w.debt <> -coalesce(d.debt, 0)
     UNION ALL
     SELECT coalesce(m.account_id, s.account_id), 'month ' || to_char(coalesce(m.month, s.month), 'YYYY-MM') || ' balance change',
            coalesce(m.balance_change, 0)::text, coalesce(s.change, 0)::text
       FROM (SELECT * FROM ledger_months WHERE $1::text IS NULL OR account_id = $1) m
       FULL JOIN month_sums s ON s.account_id = m.account_id AND s.month = m.month
       WHERE coalesce(m.balance_change, 0) <> coalesce(s.change, 0)`,
    [acc],
  );
  return found;
}
