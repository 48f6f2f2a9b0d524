import type { EntityManager } from 'typeorm';
import type { AuditEntry, AuditService } from '../../audit/audit.service';
import { fingerprint } from '../../common/canonical-json';
import { formatCredits } from '../../common/money';
import { notificationMessage } from '../../messaging/notifications';
import { enqueue } from '../../messaging/outbox';
import type { ExpireGrantsResult } from '../ledger.types';
import { lockDueGrants, writeGrantExpiries, type GrantExpiry } from '../persistence/grant-expiry';

/**
 * Expires the grants past their expiry of up to `batchSize` wallets (locked in account-id order),
 * in the caller's transaction: each grant's unheld remainder goes to the wallet's `expired` account
 * with a transaction of its own (key `expire:<grant>`, so once per grant), one `credits.expired`
 * audit row per wallet and one notification per grant. Null when no grant is due.
 */
export async function expireGrantBatch(
  em: EntityManager,
  deps: { audit: AuditService; notificationsTopic: string },
  now: Date,
  batchSize: number,
): Promise<ExpireGrantsResult | null> {
  const { accounts, due } = await lockDueGrants(em, now, batchSize);
  if (accounts.length === 0) return null;
  const input: GrantExpiry[] = due
    .filter((g) => BigInt(g.remaining) > 0n)
    .map((g) => {
      const available = BigInt(g.spendable);
      const held = BigInt(g.holds_balance);
      return {
        account_id: g.account_id,
        grant_id: g.id,
        amount: g.remaining,
        key: `expire:${g.id}`,
        fingerprint: fingerprint({ op: 'expire', grantId: g.id }),
        total_after: (available + held + BigInt(g.debt)).toString(),
        held_after: held.toString(),
        available_after: available.toString(),
        explanation: { grantId: g.id, source: g.source, expiresAt: g.expires_at.toISOString(), expired: g.remaining },
      };
    });
  await writeGrantExpiries(em, input, due.map((g) => g.id), now, accounts);
  const perWallet = new Map<string, { grants: { id: string; source: string; expired: string }[]; total: bigint; available: string }>();
  for (const g of input) {
    const w = perWallet.get(g.account_id) ?? { grants: [], total: 0n, available: g.available_after };
    w.grants.push({ id: g.grant_id, source: g.explanation.source, expired: formatCredits(BigInt(g.amount)) });
    w.total += BigInt(g.amount);
    perWallet.set(g.account_id, w);
  }
  const audits: AuditEntry[] = [...perWallet].map(([accountId, w]) => ({
    actor: 'system:grant-expiry',
    action: 'credits.expired',
    accountId,
    after: { expired: formatCredits(w.total), available: formatCredits(BigInt(w.available)), grants: w.grants },
    at: now,
  }));
  await deps.audit.recordMany(em, audits);
  // `credits.expired` per grant, with its expiry transaction (whose key `expire:<grant>` makes it once per grant).
  await enqueue(
    em,
    input.map((g) =>
      notificationMessage(
        deps.notificationsTopic,
        {
          type: 'credits.expired',
          accountId: g.account_id,
          cause: `credits.expired:${g.grant_id}`,
          data: { grantId: g.grant_id, source: g.explanation.source, credits: formatCredits(BigInt(g.amount)), expiredAt: g.explanation.expiresAt },
        },
        now,
      ),
    ),
  );
  const amount = input.reduce((s, g) => s + BigInt(g.amount), 0n);
  return { grants: due.length, wallets: perWallet.size, amount };
}
