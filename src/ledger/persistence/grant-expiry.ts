import { inOneRoundTrip } from '../../common/database/pipelined-transaction';
import { rows } from '../../common/database/transaction';
import type { EntityManager } from 'typeorm';
import { lockWalletsCall } from './ledger-batch';

/** An active grant past its expiry, with its wallet's balances (read under the wallet's lock). */
export interface DueGrant {
  id: string;
  account_id: string;
  source: string;
  remaining: string;
  expires_at: Date;
  holds_balance: string;
  debt: string;
  spendable: string;
}

/** The expiry transaction of one grant, as the write statement takes it. */
export interface GrantExpiry {
  account_id: string;
  grant_id: string;
  amount: string;
  key: string;
  fingerprint: string;
  total_after: string;
  held_after: string;
  available_after: string;
  explanation: { grantId: string; source: string; expiresAt: string; expired: string };
}

/**
 * Up to `batchSize` wallets with grants past their expiry, locked in account-id order, and those
 * grants; no wallet: an empty list.
 */
export async function lockDueGrants(em: EntityManager, now: Date, batchSize: number): Promise<{ accounts: string[]; due: DueGrant[] }> {
  const accounts = (
    await rows<{ account_id: string }>(
      em,
      `SELECT DISTINCT account_id COLLATE "C" AS account_id FROM grants WHERE status = 'active' AND expires_at <= $1 ORDER BY 1 LIMIT $2`,
      [now, batchSize],
    )
  ).map((r) => r.account_id);
  if (accounts.length === 0) return { accounts, due: [] };
  await inOneRoundTrip(em, [lockWalletsCall(accounts)]);
  const due = await rows<DueGrant>(
    em,
    `SELECT g.id, g.account_id, g.source, g.remaining::text AS remaining, g.expires_at,
       w.holds_balance::text AS holds_balance, w.debt::text AS debt,
       (SELECT coalesce(sum(x.remaining), 0)::text FROM grants x WHERE x.account_id = g.account_id AND x.status = 'active'
          AND x.remaining > 0 AND (x.expires_at IS NULL OR x.expires_at > $2)) AS spendable
     FROM grants g JOIN wallets w ON w.account_id = g.account_id
     WHERE g.account_id = ANY($1) AND g.status = 'active' AND g.expires_at <= $2
     ORDER BY g.account_id, g.expires_at, g.id`,
    [accounts, now],
  );
  return { accounts, due };
}

/**
 * Writes the expiries in one statement: their transactions and entries, the grants expired (held
 * parts expire when their hold releases them), and each locked wallet's balances.
 */
export async function writeGrantExpiries(em: EntityManager, input: GrantExpiry[], expiredGrantIds: string[], now: Date, accounts: string[]): Promise<void> {
  await em.query(
    `WITH input AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(account_id text, grant_id text, amount bigint, key text, fingerprint text,
         total_after bigint, held_after bigint, available_after bigint, explanation jsonb)
     ), tx AS (
       INSERT INTO ledger_transactions (account_id, kind, idempotency_key, fingerprint, amount, grant_id, total_after, held_after,
         available_after, explanation, created_at)
       SELECT account_id, 'expiry', key, fingerprint, -amount, grant_id, total_after, held_after, available_after, explanation, $3
       FROM input
       RETURNING id, grant_id, amount
     ), ent AS (
       INSERT INTO ledger_entries (transaction_id, line, ledger_account, amount)
       SELECT id, 1, 'grant:' || grant_id, amount FROM tx
       UNION ALL SELECT id, 2, 'expired', -amount FROM tx
     ), expired_grants AS (
       UPDATE grants SET status = 'expired', remaining = 0, version = version + 1 WHERE id = ANY($2::text[])
     )
     UPDATE wallets w SET grants_balance = w.grants_balance - coalesce(s.total, 0), expired = w.expired + coalesce(s.total, 0),
       version = w.version + 1, updated_at = $3
     FROM unnest($4::text[]) AS a(account_id)
     LEFT JOIN (SELECT account_id, sum(amount) AS total FROM input GROUP BY account_id) s ON s.account_id = a.account_id
     WHERE w.account_id = a.account_id`,
    [JSON.stringify(input), expiredGrantIds, now, accounts],
  );
}
