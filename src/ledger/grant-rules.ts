import type { EntityManager } from 'typeorm';
import { fingerprint } from 'src/common/canonical-json';
import { canonicalJsonSql, isoSql, jsonSql, sha256HexSql } from 'src/common/canonical-json-sql';
import { formatCredits, formatCreditsSql } from 'src/common/money';
import { notificationMessage } from 'src/messaging/notifications';
import type { OutboxEntry } from 'src/messaging/outbox';
import { Accounts, Posting } from './core/posting';
import type { GrantSource } from './core/types';
import type { TransactionWrite } from './persistence/wallet-store';

/**
 * What a grant is, defined once for every path that writes one (an operation, a group-committed
 * batch, the expiry job, the monthly reset's bulk grant): the fingerprint behind its idempotency
 * key, and its expiry.
 */

export interface GrantTerms {
  accountId: string;
  source: GrantSource;
  amount: bigint;
  expiresAt: Date | null;
  priority: number;
  grantId?: string | null;
  reason: string;
  reference?: string | null;
}

/** The fingerprint of a grant request: the same key with other terms is an idempotency conflict. */
export function grantFingerprint(g: GrantTerms): string {
  return fingerprint({
    op: 'grant',
    accountId: g.accountId,
    source: g.source,
    amount: g.amount,
    expiresAt: g.expiresAt,
    priority: g.priority,
    grantId: g.grantId ?? null,
    reason: g.reason,
    reference: g.reference ?? null,
  });
}

/** grantFingerprint computed by PostgreSQL over SQL expressions of the terms (the bulk grant's statement). */
export function grantFingerprintSql(t: Record<keyof Required<GrantTerms>, string>): string {
  return sha256HexSql(
    canonicalJsonSql(
      jsonSql.object({
        op: jsonSql.constant('grant'),
        accountId: jsonSql.text(t.accountId),
        source: jsonSql.text(t.source),
        amount: jsonSql.integer(t.amount),
        expiresAt: jsonSql.instant(t.expiresAt),
        priority: jsonSql.integer(t.priority),
        grantId: jsonSql.text(t.grantId),
        reason: jsonSql.text(t.reason),
        reference: jsonSql.text(t.reference),
      }),
    ),
  );
}

/** A grant whose expiry has passed, with what is left of it unheld. */
export interface DueGrant {
  accountId: string;
  grantId: string;
  source: string;
  remaining: bigint;
  expiresAt: Date;
}

/** A wallet's balances before its grants expire; `available` counts no expired grant already. */
export interface BalancesBefore {
  available: bigint;
  held: bigint;
  /** The wallet's debt account (0, or negative: what it owes). */
  debt: bigint;
}

/**
 * When an expiry is dated: the last millisecond of its grant's validity (periods are half-open), not
 * when the job posted it, so credits granted for a month expire in that month's statement (a Free
 * allowance expiring at midnight on the 1st: on the last day of its month, not the first of the next).
 */
export function expiryInstant(expiresAt: Date): Date {
  return new Date(expiresAt.getTime() - 1);
}

/** expiryInstant computed by PostgreSQL, over an SQL expression of the grant's expiry. */
export function expiryInstantSql(expiresAt: string): string {
  return `(${expiresAt} - interval '1 millisecond')`;
}

/**
 * The expiry of a due grant with credits left: its unheld remainder goes to the wallet's `expired`
 * account (held parts expire when their hold releases them), once per grant (key `expire:<grant>`),
 * dated by expiryInstant. The balances do not move: an expired grant was no longer available.
 */
export function expiryWrite(g: DueGrant, wallet: BalancesBefore, expectedVersion: bigint): TransactionWrite {
  return {
    accountId: g.accountId,
    kind: 'expiry',
    idempotencyKey: `expire:${g.grantId}`,
    fingerprint: expiryFingerprint(g.grantId),
    amount: -g.remaining,
    holdId: null,
    grantId: g.grantId,
    reference: null,
    after: { total: wallet.available + wallet.held + wallet.debt, held: wallet.held, available: wallet.available },
    explanation: { grantId: g.grantId, source: g.source, expiresAt: g.expiresAt.toISOString(), expired: g.remaining },
    at: expiryInstant(g.expiresAt),
    entries: new Posting().move(Accounts.grant(g.grantId), Accounts.expired, g.remaining).entries(),
    expectedVersion,
  };
}

/** The fingerprint of a grant's expiry (its key, `expire:<grant>`, is unique). */
export function expiryFingerprint(grantId: string): string {
  return fingerprint({ op: 'expire', grantId });
}

/** expiryFingerprint computed by PostgreSQL, over an SQL expression of the grant id. */
export function expiryFingerprintSql(grantId: string): string {
  return sha256HexSql(canonicalJsonSql(jsonSql.object({ op: jsonSql.constant('expire'), grantId: jsonSql.text(grantId) })));
}

/** An expiry transaction's explanation (expiryWrite's), built by PostgreSQL over a due grant's columns. */
export function expiryExplanationSql(d: { grantId: string; source: string; expiresAt: string; remaining: string }): string {
  return `jsonb_build_object('grantId', ${d.grantId}, 'source', ${d.source}, 'expiresAt', ${isoSql(d.expiresAt)}, 'expired', (${d.remaining})::text)`;
}

/** Marks due grants expired (their remainder was moved by their expiry transactions, written before). */
export async function markExpired(em: EntityManager, grantIds: readonly string[]): Promise<void> {
  if (grantIds.length === 0) return;
  await em.query(`UPDATE grants SET status = 'expired', remaining = 0, version = version + 1 WHERE id = ANY($1::text[])`, [grantIds]);
}

/** `credits.expired`, once per grant: it is written only with the grant's expiry transaction, whose key is unique. */
export function expiryNotification(topic: string, g: DueGrant, now: Date): OutboxEntry {
  return notificationMessage(
    topic,
    {
      type: 'credits.expired',
      accountId: g.accountId,
      cause: `credits.expired:${g.grantId}`,
      data: { grantId: g.grantId, source: g.source, credits: formatCredits(g.remaining), expiredAt: g.expiresAt.toISOString() },
    },
    now,
  );
}

/**
 * expiryNotification's Notification as a row (`type`, `account_id`, `cause`, `data`), built by
 * PostgreSQL over a due grant's columns (messaging's NotificationRow).
 */
export function expiryNotificationSql(d: {
  accountId: string;
  grantId: string;
  source: string;
  remaining: string;
  expiresAt: string;
}): string {
  return `'credits.expired' AS type, ${d.accountId} AS account_id, 'credits.expired:' || ${d.grantId} AS cause,
    jsonb_build_object('grantId', ${d.grantId}, 'source', ${d.source}, 'credits', ${formatCreditsSql(d.remaining)},
      'expiredAt', ${isoSql(d.expiresAt)}) AS data`;
}

/** What a bulk grant's `credits.granted` audit row tells of one account. */
export interface BulkGrantAuditTerms {
  grantId: string;
  source: string;
  amount: bigint;
  expiresAt: Date;
  /** The wallet before (not in debt). */
  before: BalancesBefore;
  /** Its grants that expired with credits left, in their expiry order. */
  expired: readonly { grantId: string; remaining: bigint }[];
}

/**
 * The `credits.granted` audit row of a bulk grant: the balances before and after, the grant, and
 * what of the account's grants expired. The bulk grant's statement builds the same (grantAuditSql);
 * this is the definition it is tested against.
 */
export function grantAudit(t: BulkGrantAuditTerms): { before: Record<string, unknown>; after: Record<string, unknown> } {
  const { available, held, debt } = t.before;
  return {
    before: { available: formatCredits(available), held: formatCredits(held), total: formatCredits(available + held) },
    after: {
      available: formatCredits(available + t.amount),
      expired: { credits: formatCredits(t.expired.reduce((s, g) => s + g.remaining, 0n)), grants: t.expired.map((g) => g.grantId) },
      grant: { amount: formatCredits(t.amount), expiresAt: t.expiresAt.toISOString(), id: t.grantId, source: t.source },
      held: formatCredits(held),
      total: formatCredits(available + t.amount + held + debt),
    },
  };
}

/**
 * grantAudit as canonical JSON texts (`before`, `after`), built by PostgreSQL over SQL expressions:
 * the wallet's balances before, the grant's terms, the credits that expired and the JSON array text
 * of the expired grants' ids (`["id",…]`).
 */
export function grantAuditSql(t: {
  available: string;
  held: string;
  debt: string;
  amount: string;
  grantId: string;
  source: string;
  expiresAt: string;
  expiredCredits: string;
  expiredIds: string;
}): { before: string; after: string } {
  const credits = (sql: string) => jsonSql.text(formatCreditsSql(sql));
  return {
    before: canonicalJsonSql(
      jsonSql.object({ available: credits(t.available), held: credits(t.held), total: credits(`${t.available} + ${t.held}`) }),
    ),
    after: canonicalJsonSql(
      jsonSql.object({
        available: credits(`${t.available} + ${t.amount}`),
        expired: jsonSql.object({ credits: credits(t.expiredCredits), grants: jsonSql.json(t.expiredIds) }),
        grant: jsonSql.object({
          amount: credits(t.amount),
          expiresAt: jsonSql.instant(t.expiresAt),
          id: jsonSql.text(t.grantId),
          source: jsonSql.text(t.source),
        }),
        held: credits(t.held),
        total: credits(`${t.available} + ${t.amount} + ${t.held} + ${t.debt}`),
      }),
    ),
  };
}
