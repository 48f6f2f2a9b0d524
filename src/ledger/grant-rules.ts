import type { EntityManager } from 'typeorm';
import { fingerprint } from 'src/common/canonical-json';
import { formatCredits } from 'src/common/money';
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
 * The expiry of a due grant with credits left: its unheld remainder goes to the wallet's `expired`
 * account (held parts expire when their hold releases them), once per grant (key `expire:<grant>`).
 * The balances do not move: an expired grant was no longer available.
 */
export function expiryWrite(g: DueGrant, wallet: BalancesBefore, expectedVersion: bigint, now: Date): TransactionWrite {
  return {
    accountId: g.accountId,
    kind: 'expiry',
    idempotencyKey: `expire:${g.grantId}`,
    fingerprint: fingerprint({ op: 'expire', grantId: g.grantId }),
    amount: -g.remaining,
    holdId: null,
    grantId: g.grantId,
    reference: null,
    after: { total: wallet.available + wallet.held + wallet.debt, held: wallet.held, available: wallet.available },
    explanation: { grantId: g.grantId, source: g.source, expiresAt: g.expiresAt.toISOString(), expired: g.remaining },
    at: now,
    entries: new Posting().move(Accounts.grant(g.grantId), Accounts.expired, g.remaining).entries(),
    expectedVersion,
  };
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
