import type { EntityManager } from 'typeorm';
import type { AuditBulkRow, AuditService } from 'src/audit/audit.service';
import type { SqlRelation } from 'src/common/database/sql-relation';
import { rows } from 'src/common/database/transaction';
import { enqueueNotificationsFrom, type NotificationRow } from 'src/messaging/notifications';
import { lineAfterWriteSql } from '../core/low-balance';
import { DEFAULT_PRIORITY, type GrantSource } from '../core/types';
import {
  expiryExplanationSql,
  expiryFingerprintSql,
  expiryInstantSql,
  expiryNotificationSql,
  grantAuditSql,
  grantFingerprintSql,
} from '../grant-rules';
import { lockWalletsCall } from '../persistence/ledger-batch';
import { reportLedgerFlows } from '../ledger-flows';

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
  /** The accounts granted now (in account-id order). */
  granted: string[];
  grantedMicros: bigint;
  /** The grants that expired with credits left (each has its expiry transaction and `credits.expired`). */
  expiredGrants: number;
  expiredMicros: bigint;
  /** Accounts left out because their wallet is in debt: a new grant repays debt first, which only LedgerService.grant does. */
  inDebt: string[];
}

/**
 * Under the wallets' locks, per account not granted yet (its grant id absent): its wallet, and in one
 * index scan of its active grants what is available and what is due to expire. Accounts in debt are
 * returned, the others go to `ledger_bulk_grant`, their due grants to `ledger_bulk_due`.
 */
const READ_SQL = `
WITH r AS MATERIALIZED (
  SELECT i.account_id, i.grant_id, i.amount, i.reason, w.version, w.holds_balance AS held, w.debt, s.available, s.expired, s.expiries
  FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) AS i(account_id, grant_id, amount, reason)
  JOIN wallets w ON w.account_id = i.account_id
  CROSS JOIN LATERAL (
    SELECT coalesce(sum(g.remaining) FILTER (WHERE g.remaining > 0 AND (g.expires_at IS NULL OR g.expires_at > $5)), 0)::bigint AS available,
      coalesce(sum(g.remaining) FILTER (WHERE g.remaining > 0 AND g.expires_at <= $5), 0)::bigint AS expired,
      count(*) FILTER (WHERE g.remaining > 0 AND g.expires_at <= $5)::int AS expiries
    FROM grants g WHERE g.account_id = i.account_id AND g.status = 'active'
  ) s
  WHERE NOT EXISTS (SELECT 1 FROM grants p WHERE p.id = i.grant_id)
), batch AS (
  INSERT INTO ledger_bulk_grant (account_id, grant_id, amount, reason, version, held, debt, available, expired, expiries)
  SELECT account_id, grant_id, amount, reason, version, held, debt, available, expired, expiries FROM r WHERE debt >= 0
), due AS (
  INSERT INTO ledger_bulk_due (grant_id, account_id, source, remaining, expires_at)
  SELECT g.id, g.account_id, g.source, g.remaining, g.expires_at
  FROM r JOIN grants g ON g.account_id = r.account_id
  WHERE r.debt >= 0 AND g.status = 'active' AND g.expires_at <= $5
)
SELECT ARRAY(SELECT account_id FROM r WHERE debt < 0 ORDER BY account_id) AS in_debt`;

/** The grant's terms, as the write statement's columns and parameters ($1 now, $2 expires at, $3 key, $4 source, $5 priority, $6 actor). */
const GRANT_FINGERPRINT = grantFingerprintSql({
  accountId: 'b.account_id',
  source: '$4::text',
  amount: 'b.amount',
  expiresAt: '$2::timestamptz',
  priority: '$5::int',
  grantId: 'b.grant_id',
  reason: 'b.reason',
  reference: 'NULL::text',
});

/**
 * The `credits.granted` audit rows (grantAudit's, as canonical JSON texts) of the accounts granted,
 * read from the batch's tables by the audit's statement (AuditService.recordBulk).
 */
function auditRows(source: string, expiresAt: Date): SqlRelation<AuditBulkRow> {
  return {
    select: (bind) => {
      const audit = grantAuditSql({
        available: 'b.available',
        held: 'b.held',
        debt: 'b.debt',
        amount: 'b.amount',
        grantId: 'b.grant_id',
        source: `${bind(source)}::text`,
        expiresAt: `${bind(expiresAt)}::timestamptz`,
        expiredCredits: 'b.expired',
        expiredIds: `'[' || coalesce(x.ids, '') || ']'`,
      });
      return `SELECT b.account_id, ${audit.before} AS before, ${audit.after} AS after
        FROM ledger_bulk_grant b
        LEFT JOIN (SELECT account_id, string_agg(to_json(grant_id)::text, ',' ORDER BY expires_at, grant_id) AS ids
                   FROM ledger_bulk_due WHERE remaining > 0 GROUP BY account_id) x ON x.account_id = b.account_id`;
    },
  };
}

/** The `credits.expired` notifications of the grants that expired with credits left, in expiry order per account. */
const EXPIRED_NOTIFICATIONS: SqlRelation<NotificationRow> = {
  select: () =>
    `SELECT ${expiryNotificationSql({
      accountId: 'd.account_id',
      grantId: 'd.grant_id',
      source: 'd.source',
      remaining: 'd.remaining',
      expiresAt: 'd.expires_at',
    })}
     FROM ledger_bulk_due d WHERE d.remaining > 0
     ORDER BY d.account_id COLLATE "C", d.expires_at, d.grant_id`,
};

/** The wallet's low-balance line after the grant (the available balance it leaves: what was available, plus the grant). */
const LOW_BALANCE = lineAfterWriteSql({ line: 'w.low_balance_line', rises: 'w.low_balance_rises', available: 'b.available + b.amount' });

/**
 * Writes, in one statement: per account, the expiry transaction of each due grant with credits left
 * (expiryWrite's: key `expire:<grant>`, grant → expired, dated by expiryInstant) then the grant's transaction (grantOperation's
 * for a wallet without debt: issued → grant, grantFingerprint), their entries, the new grants, the due
 * grants marked expired, each wallet once by the sum of its entries, checked at the version read
 * under its lock (its low-balance line re-armed by lineAfterWriteSql, as batch-write.ts does), and
 * the balance's change of each wallet's month (ledger_months). It returns the batch's sums; the
 * batch's tables stay for the audit rows (auditRows) and the `credits.expired` notifications
 * (EXPIRED_NOTIFICATIONS), which their owners' statements read.
 */
const WRITE_SQL = `
WITH due AS (
  SELECT d.*, b.available, b.held, b.debt FROM ledger_bulk_due d JOIN ledger_bulk_grant b ON b.account_id = d.account_id WHERE d.remaining > 0
), tx AS (
  INSERT INTO ledger_transactions (account_id, kind, idempotency_key, fingerprint, amount, grant_id, total_after, held_after,
    available_after, explanation, created_at)
  SELECT t.account_id, t.kind, t.key, t.fingerprint, t.amount, t.grant_id, t.total_after, t.held_after, t.available_after, t.explanation,
    CASE WHEN t.kind = 'expiry' THEN ${expiryInstantSql('t.expires_at')} ELSE $1 END
  FROM (
    SELECT e.account_id, 0 AS ord, e.expires_at, e.grant_id, 'expiry' AS kind, 'expire:' || e.grant_id AS key,
      ${expiryFingerprintSql('e.grant_id')} AS fingerprint, -e.remaining AS amount, e.available + e.held + e.debt AS total_after,
      e.held AS held_after, e.available AS available_after,
      ${expiryExplanationSql({ grantId: 'e.grant_id', source: 'e.source', expiresAt: 'e.expires_at', remaining: 'e.remaining' })} AS explanation
    FROM due e
    UNION ALL
    SELECT b.account_id, 1, NULL, b.grant_id, 'grant', $3::text, ${GRANT_FINGERPRINT}, b.amount,
      b.available + b.amount + b.held + b.debt, b.held, b.available + b.amount,
      jsonb_build_object('source', $4::text, 'reason', b.reason, 'actor', $6::text, 'expiresAt', $7::text, 'priority', $5::int, 'repaid', '0')
    FROM ledger_bulk_grant b
  ) t
  ORDER BY t.account_id COLLATE "C", t.ord, t.expires_at, t.grant_id
  RETURNING id, account_id, kind, grant_id, amount, created_at
), month AS (
  -- A grant's amount adds to the balance, an expiry's (−remaining) takes from it: each wallet's month moves
  -- by their sum, in the month each is dated in (an expiry at its grant's last millisecond: the month before the reset's).
  INSERT INTO ledger_months (account_id, month, balance_change)
  SELECT account_id, (date_trunc('month', created_at AT TIME ZONE 'UTC'))::date, sum(amount) FROM tx
  GROUP BY 1, 2 HAVING sum(amount) <> 0
  ON CONFLICT (account_id, month) DO UPDATE SET balance_change = ledger_months.balance_change + excluded.balance_change
), ent AS (
  INSERT INTO ledger_entries (transaction_id, line, ledger_account, amount)
  SELECT id, 1, CASE WHEN kind = 'grant' THEN 'issued' ELSE 'grant:' || grant_id END, CASE WHEN kind = 'grant' THEN -amount ELSE amount END
  FROM tx WHERE amount <> 0
  UNION ALL
  SELECT id, 2, CASE WHEN kind = 'grant' THEN 'grant:' || grant_id ELSE 'expired' END, CASE WHEN kind = 'grant' THEN amount ELSE -amount END
  FROM tx WHERE amount <> 0
), new_grant AS (
  INSERT INTO grants (id, account_id, source, amount, remaining, priority, expires_at, reason, reference, created_at)
  SELECT b.grant_id, b.account_id, $4::text, b.amount, b.amount, $5::int, $2::timestamptz, b.reason, NULL, $1 FROM ledger_bulk_grant b
), expired AS (
  UPDATE grants g SET status = 'expired', remaining = 0, version = g.version + 1
  WHERE g.id = ANY(ARRAY(SELECT grant_id FROM ledger_bulk_due))
), wallet AS (
  UPDATE wallets w SET grants_balance = w.grants_balance + b.amount - b.expired, issued = w.issued - b.amount,
    expired = w.expired + b.expired, version = w.version + 1 + b.expiries, updated_at = $1,
    low_balance_line = ${LOW_BALANCE.line},
    low_balance_rises = ${LOW_BALANCE.rises}
  FROM ledger_bulk_grant b
  WHERE w.account_id = b.account_id AND w.account_id = ANY(ARRAY(SELECT account_id FROM ledger_bulk_grant)) AND w.version = b.version
  RETURNING 1
)
SELECT ledger_assert((SELECT count(*) FROM wallet) = (SELECT count(*) FROM ledger_bulk_grant),
    'ledger write refused: a wallet is not at the version read under its lock') AS ok,
  ARRAY(SELECT account_id FROM ledger_bulk_grant ORDER BY account_id COLLATE "C") AS granted,
  (SELECT coalesce(sum(amount), 0)::text FROM ledger_bulk_grant) AS granted_micros,
  (SELECT count(*)::int FROM due) AS expired_grants,
  (SELECT coalesce(sum(remaining), 0)::text FROM due) AS expired_micros`;

interface WriteRow {
  granted: string[];
  granted_micros: string;
  expired_grants: number;
  expired_micros: string;
}

/**
 * The set-based grant of the monthly reset: one grant per account for thousands of accounts, in
 * the caller's transaction and a fixed number of statements whatever their number. For each
 * account not granted yet, what is due of its grants expires first (as the expiry job expires it,
 * grant-rules.ts), then the grant is written as LedgerService.grant writes it (same fingerprint,
 * entries and explanation); one `credits.granted` audit row per account (grantAudit) tells the
 * balances before and after, the grant and what expired. Every row, fingerprint, audit record and
 * notification is built by PostgreSQL from the SQL definitions in grant-rules.ts, each tested equal
 * to its TypeScript definition (test/integration/bulk-grant-sql.test.ts); the audit rows go through
 * AuditService.recordBulk, the notifications through messaging, each reading them from the batch's
 * temporary tables in its own statement (an SqlRelation: no JSON between the owners). Wallets in
 * debt are left out (`inDebt`).
 */
export async function grantInBulk(em: EntityManager, audit: AuditService, input: BulkGrantInput): Promise<BulkGrantResult> {
  const result: BulkGrantResult = { granted: [], grantedMicros: 0n, expiredGrants: 0, expiredMicros: 0n, inDebt: [] };
  if (input.grants.length === 0) return result;
  const accountIds = input.grants.map((g) => g.accountId);
  await em.query(
    `INSERT INTO wallets (account_id) SELECT a.id FROM accounts a WHERE a.id = ANY(ARRAY(SELECT unnest($1::text[])))
       AND NOT EXISTS (SELECT 1 FROM wallets w WHERE w.account_id = a.id)
     ON CONFLICT (account_id) DO NOTHING`,
    [accountIds],
  );
  const lock = lockWalletsCall(accountIds);
  await em.query(lock.statement.text, lock.values);

  await em.query(`DROP TABLE IF EXISTS ledger_bulk_grant, ledger_bulk_due`);
  await em.query(
    `CREATE TEMP TABLE ledger_bulk_grant (account_id text PRIMARY KEY, grant_id text NOT NULL, amount bigint NOT NULL, reason text NOT NULL,
       version bigint NOT NULL, held bigint NOT NULL, debt bigint NOT NULL, available bigint NOT NULL, expired bigint NOT NULL,
       expiries int NOT NULL) ON COMMIT DROP`,
  );
  await em.query(
    `CREATE TEMP TABLE ledger_bulk_due (grant_id text PRIMARY KEY, account_id text NOT NULL, source text NOT NULL, remaining bigint NOT NULL,
       expires_at timestamptz NOT NULL) ON COMMIT DROP`,
  );
  const [read] = await rows<{ in_debt: string[] }>(em, READ_SQL, [
    accountIds,
    input.grants.map((g) => g.grantId),
    // Numbers as an array literal: the driver would otherwise quote and escape each of thousands of elements.
    `{${input.grants.map((g) => g.amount).join(',')}}`,
    input.grants.map((g) => g.reason),
    input.now,
  ]);
  result.inDebt = read!.in_debt;
  await em.query(`ANALYZE ledger_bulk_grant, ledger_bulk_due`);

  const [written] = await rows<WriteRow>(em, WRITE_SQL, [
    input.now,
    input.expiresAt,
    input.idempotencyKey,
    input.source,
    DEFAULT_PRIORITY[input.source],
    input.actor,
    input.expiresAt.toISOString(),
  ]);
  const w = written!;
  result.granted = w.granted;
  result.grantedMicros = BigInt(w.granted_micros);
  result.expiredGrants = w.expired_grants;
  result.expiredMicros = BigInt(w.expired_micros);
  // The audit rows and the notifications are read from the batch's tables by their owners' statements: no JSON in between.
  if (result.granted.length > 0) {
    await audit.recordBulk(em, {
      actor: input.actor,
      action: 'credits.granted',
      at: input.now,
      correlationId: input.correlationId,
      rows: auditRows(input.source, input.expiresAt),
    });
  }
  if (result.expiredGrants > 0) await enqueueNotificationsFrom(em, input.notificationsTopic, input.now, EXPIRED_NOTIFICATIONS);
  await em.query(`DROP TABLE ledger_bulk_grant, ledger_bulk_due`);
  reportLedgerFlows(
    new Map([
      ['granted', result.grantedMicros],
      ['expired', result.expiredMicros],
    ]),
  );
  return result;
}
