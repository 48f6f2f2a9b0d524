import { inOneRoundTrip } from 'src/common/database/pipelined-transaction';
import { rows } from 'src/common/database/transaction';
import type { EntityManager } from 'typeorm';
import { lockWalletsCall } from './ledger-batch';

/** An active grant past its expiry, with its wallet's balances (read under the wallet's lock). */
export interface DueGrantRow {
  id: string;
  account_id: string;
  source: string;
  remaining: string;
  expires_at: Date;
  /** The wallet's version before this batch. */
  version: string;
  holds_balance: string;
  debt: string;
  spendable: string;
}

/**
 * Up to `batchSize` wallets with grants past their expiry, locked in account-id order, and those
 * grants; no wallet: an empty list.
 */
export async function lockDueGrants(em: EntityManager, now: Date, batchSize: number): Promise<{ accounts: string[]; due: DueGrantRow[] }> {
  const accounts = (
    await rows<{ account_id: string }>(
      em,
      `SELECT DISTINCT account_id COLLATE "C" AS account_id FROM grants WHERE status = 'active' AND expires_at <= $1 ORDER BY 1 LIMIT $2`,
      [now, batchSize],
    )
  ).map((r) => r.account_id);
  if (accounts.length === 0) return { accounts, due: [] };
  await inOneRoundTrip(em, [lockWalletsCall(accounts)]);
  const due = await rows<DueGrantRow>(
    em,
    `SELECT g.id, g.account_id, g.source, g.remaining::text AS remaining, g.expires_at, w.version::text AS version,
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
