import type { EntityManager } from 'typeorm';
import type { AuditEntry, AuditService } from 'src/audit/audit.service';
import { formatCredits } from 'src/common/money';
import { enqueue } from 'src/messaging/outbox';
import { expiryNotification, expiryWrite, markExpired, type DueGrant } from '../grant-rules';
import type { ExpireGrantsResult } from '../ledger.types';
import { writeTransactions } from '../persistence/batch-write';
import { lockDueGrants } from '../persistence/grant-expiry';
import type { TransactionWrite } from '../persistence/wallet-store';

/**
 * Expires the grants past their expiry of up to `batchSize` wallets (locked in account-id order),
 * in the caller's transaction: each grant's unheld remainder goes to the wallet's `expired` account
 * with a transaction of its own (grant-rules.ts: key `expire:<grant>`, so once per grant), one
 * `credits.expired` audit row per wallet and one notification per grant. Null when no grant is due.
 */
export async function expireGrantBatch(
  em: EntityManager,
  deps: { audit: AuditService; notificationsTopic: string },
  now: Date,
  batchSize: number,
): Promise<ExpireGrantsResult | null> {
  const { accounts, due } = await lockDueGrants(em, now, batchSize);
  if (accounts.length === 0) return null;
  const expired: DueGrant[] = [];
  const writes: TransactionWrite[] = [];
  const versions = new Map<string, bigint>();
  for (const g of due) {
    const grant = { accountId: g.account_id, grantId: g.id, source: g.source, remaining: BigInt(g.remaining), expiresAt: g.expires_at };
    if (grant.remaining <= 0n) continue;
    const version = versions.get(g.account_id) ?? BigInt(g.version);
    versions.set(g.account_id, version + 1n);
    expired.push(grant);
    writes.push(expiryWrite(grant, { available: BigInt(g.spendable), held: BigInt(g.holds_balance), debt: BigInt(g.debt) }, version));
  }
  await writeTransactions(em, writes);
  await markExpired(
    em,
    due.map((g) => g.id),
  );
  const perWallet = new Map<string, { grants: { id: string; source: string; expired: string }[]; total: bigint; available: bigint }>();
  for (const w of writes) {
    const e = perWallet.get(w.accountId) ?? { grants: [], total: 0n, available: w.after.available };
    e.grants.push({ id: w.grantId!, source: String(w.explanation.source), expired: formatCredits(-w.amount) });
    e.total += -w.amount;
    perWallet.set(w.accountId, e);
  }
  const audits: AuditEntry[] = [...perWallet].map(([accountId, w]) => ({
    actor: 'system:grant-expiry',
    action: 'credits.expired',
    accountId,
    after: { expired: formatCredits(w.total), available: formatCredits(w.available), grants: w.grants },
    at: now,
  }));
  await deps.audit.recordMany(em, audits);
  await enqueue(
    em,
    expired.map((g) => expiryNotification(deps.notificationsTopic, g, now)),
  );
  const amount = expired.reduce((s, g) => s + g.remaining, 0n);
  return { grants: due.length, wallets: perWallet.size, amount };
}
