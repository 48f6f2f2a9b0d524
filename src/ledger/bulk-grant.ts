import type { EntityManager } from 'typeorm';
import type { AuditEntry, AuditService } from '../audit/audit.service';
import { rows } from '../common/database/transaction';
import { formatCredits } from '../common/money';
import { enqueue } from '../messaging/outbox';
import { Accounts, Posting } from './core/posting';
import { DEFAULT_PRIORITY, type GrantSource } from './core/types';
import { expiryNotification, expiryWrite, grantFingerprint, markExpired, type BalancesBefore, type DueGrant } from './grant-rules';
import { lockWalletsCall } from './ledger.batch';
import type { TransactionWrite } from './ledger.store';
import { writeTransactions } from './ledger.write';

export interface BulkGrantInput {
  /** One grant per account, each with its own id: an account whose grant id exists already is skipped. */
  grants: readonly { accountId: string; grantId: string; amount: bigint; reason: string }[];
  source: GrantSource;
  expiresAt: Date;
  /** Every grant transaction's idempotency key (unique per account). */
  idempotencyKey: string;
  actor: string;
  correlationId: string | null;
  now: Date;
  /** Where `credits.expired` goes. */
  notificationsTopic: string;
}

export interface BulkGrantResult {
  granted: { accountId: string; grantId: string; amount: bigint }[];
  /** The grants that expired with credits left (each has its expiry transaction and `credits.expired`). */
  expired: DueGrant[];
  /** Accounts left out because their wallet is in debt: a new grant repays debt first, which only LedgerService.grant does. */
  inDebt: string[];
}

/**
 * Under the wallets' locks, per account not granted yet (its grant id absent), its balances and its
 * live grants: what is available, and the grants due to expire. One index scan of the account's
 * active grants gives both.
 */
const READ_SQL = `
SELECT r.account_id, w.version::text AS version, w.holds_balance::text AS held, w.debt::text AS debt, s.available, s.due
FROM unnest($1::text[], $2::text[]) AS r(account_id, grant_id)
JOIN wallets w ON w.account_id = r.account_id
CROSS JOIN LATERAL (
  SELECT coalesce(sum(g.remaining) FILTER (WHERE g.remaining > 0 AND (g.expires_at IS NULL OR g.expires_at > $3)), 0)::text AS available,
    coalesce(json_agg(json_build_object('id', g.id, 'source', g.source, 'remaining', g.remaining::text, 'expiresAt', g.expires_at)
      ORDER BY g.expires_at, g.id) FILTER (WHERE g.expires_at <= $3), '[]') AS due
  FROM grants g WHERE g.account_id = r.account_id AND g.status = 'active'
) s
WHERE NOT EXISTS (SELECT 1 FROM grants p WHERE p.id = r.grant_id)`;

interface ReadRow {
  account_id: string;
  version: string;
  held: string;
  debt: string;
  available: string;
  due: { id: string; source: string; remaining: string; expiresAt: string }[];
}

/**
 * The set-based grant of the monthly reset: one grant per account for thousands of accounts, in
 * the caller's transaction and a fixed number of statements whatever their number. For each
 * account not granted yet, what is due of its grants expires first (grant-rules.ts: the expiry
 * job's transactions), then the grant is written as LedgerService.grant writes it (same
 * fingerprint, entries and explanation), all through the ledger's one write statement; one
 * `credits.granted` audit row per account tells the balances before and after, the grant and what
 * expired. Wallets in debt are left out (`inDebt`).
 */
export async function grantInBulk(em: EntityManager, audit: AuditService, input: BulkGrantInput): Promise<BulkGrantResult> {
  const result: BulkGrantResult = { granted: [], expired: [], inDebt: [] };
  if (input.grants.length === 0) return result;
  const { now } = input;
  const accountIds = input.grants.map((g) => g.accountId);
  await em.query(
    `INSERT INTO wallets (account_id) SELECT a.id FROM accounts a WHERE a.id = ANY(ARRAY(SELECT unnest($1::text[])))
       AND NOT EXISTS (SELECT 1 FROM wallets w WHERE w.account_id = a.id)
     ON CONFLICT (account_id) DO NOTHING`,
    [accountIds],
  );
  const lock = lockWalletsCall(accountIds);
  await em.query(lock.statement.text, lock.values);
  const found = await rows<ReadRow>(em, READ_SQL, [accountIds, input.grants.map((g) => g.grantId), now]);

  const byAccount = new Map(input.grants.map((g) => [g.accountId, g]));
  const priority = DEFAULT_PRIORITY[input.source];
  const writes: TransactionWrite[] = [];
  const audits: AuditEntry[] = [];
  const dueIds: string[] = [];
  for (const r of found.sort((a, b) => (a.account_id < b.account_id ? -1 : 1))) {
    const grant = byAccount.get(r.account_id)!;
    const before: BalancesBefore = { available: BigInt(r.available), held: BigInt(r.held), debt: BigInt(r.debt) };
    if (before.debt < 0n) {
      result.inDebt.push(r.account_id);
      continue;
    }
    let version = BigInt(r.version);
    const expired: DueGrant[] = [];
    for (const d of r.due) {
      const due: DueGrant = { accountId: r.account_id, grantId: d.id, source: d.source, remaining: BigInt(d.remaining), expiresAt: new Date(d.expiresAt) };
      dueIds.push(due.grantId);
      if (due.remaining <= 0n) continue;
      writes.push(expiryWrite(due, before, version++, now));
      expired.push(due);
    }
    const after = { available: before.available + grant.amount, held: before.held, total: before.available + grant.amount + before.held + before.debt };
    const terms = { accountId: r.account_id, source: input.source, amount: grant.amount, expiresAt: input.expiresAt, priority, grantId: grant.grantId, reason: grant.reason, reference: null };
    writes.push({
      accountId: r.account_id,
      kind: 'grant',
      idempotencyKey: input.idempotencyKey,
      fingerprint: grantFingerprint(terms),
      amount: grant.amount,
      holdId: null,
      grantId: grant.grantId,
      reference: null,
      after,
      explanation: { source: input.source, reason: grant.reason, actor: input.actor, expiresAt: input.expiresAt, priority, repaid: 0n },
      at: now,
      entries: new Posting().move(Accounts.issued, Accounts.grant(grant.grantId), grant.amount).entries(),
      expectedVersion: version,
      newGrant: { id: grant.grantId, source: input.source, amount: grant.amount, remaining: grant.amount, priority, expiresAt: input.expiresAt, reason: grant.reason, reference: null },
    });
    const expiredMicros = expired.reduce((s, g) => s + g.remaining, 0n);
    audits.push({
      actor: input.actor,
      action: 'credits.granted',
      accountId: r.account_id,
      before: { available: formatCredits(before.available), held: formatCredits(before.held), total: formatCredits(before.available + before.held) },
      after: {
        available: formatCredits(after.available),
        expired: { credits: formatCredits(expiredMicros), grants: expired.map((g) => g.grantId) },
        grant: { amount: formatCredits(grant.amount), expiresAt: input.expiresAt.toISOString(), id: grant.grantId, source: input.source },
        held: formatCredits(after.held),
        total: formatCredits(after.total),
      },
      correlationId: input.correlationId,
      at: now,
    });
    result.granted.push({ accountId: r.account_id, grantId: grant.grantId, amount: grant.amount });
    result.expired.push(...expired);
  }
  await writeTransactions(em, writes);
  await markExpired(em, dueIds);
  await audit.recordBulk(em, audits);
  await enqueue(em, result.expired.map((g) => expiryNotification(input.notificationsTopic, g, now)));
  return result;
}
