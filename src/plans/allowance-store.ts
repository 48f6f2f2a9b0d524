import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { GENESIS_HASH } from '../audit/audit-hash';
import { rows } from '../common/database/transaction';
import type { Period } from './periods';

/** A plan's allowance terms as the SQL reads them (overrides in `accounts.plan_overrides` win). */
export interface AllowanceDefault {
  plan: string;
  /** Plan name, for the grant's reason. */
  name: string;
  /** Micro-credits per period. */
  amount: bigint;
  period: string;
}

export interface GrantAllowancesInput {
  /** Accounts to grant (those already granted for this period, or with nothing included, are skipped). */
  accountIds: string[];
  /** The period every one of these accounts is in (the caller chose them by period). */
  period: Period;
  now: Date;
  /** Plans whose allowance is granted this way (Team's comes with its paid invoice). */
  defaults: AllowanceDefault[];
  actor: string;
  notificationsTopic: string;
  /** The request, event or job run the grants serve (their audit rows carry it). */
  correlationId: string | null;
}

export interface GrantAllowancesResult {
  granted: number;
  grantedMicros: bigint;
  expiredGrants: number;
  expiredMicros: bigint;
  /** Accounts whose wallet is in debt: a new grant repays debt first, which only LedgerService.grant does. */
  inDebt: string[];
}

/** Idempotency key of a period's allowance grant (unique per account in ledger_transactions). */
export function allowanceKey(period: Period): string {
  return `allowance:${period.start.toISOString()}`;
}

/**
 * The grant id of an account's allowance for a period (the SQL here computes the same). Deterministic,
 * so the grant's primary key is the idempotency key per account and period: the allowance of a period
 * was granted exactly when this grant exists.
 */
export function allowanceGrantId(accountId: string, period: Period): string {
  return `alw_${createHash('md5').update(`${accountId}|${period.start.toISOString()}`).digest('hex')}`;
}

export function allowanceReason(planName: string, period: Period): string {
  return `${planName} plan allowance for ${period.start.toISOString()} to ${period.end.toISOString()}`;
}

/** Credits text ("50.000000") of a non-negative bigint column, in SQL. */
const credits = (col: string): string => `((${col}) / 1000000)::text || '.' || lpad(((${col}) % 1000000)::text, 6, '0')`;
const iso = (col: string): string => `to_char((${col}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const json = (col: string): string => `to_json((${col})::text)::text`;

/**
 * Canonical JSON (RFC 8785, as src/common/canonical-json.ts writes it) of an audit record, built in
 * SQL, so that `audit verify` recomputes the same hash. `before` and `after` must already be
 * canonical JSON text with string values only.
 */
const auditRecord = (account: string, action: string, actorParam: string, before: string, after: string, atIsoParam: string, correlationParam: string): string =>
  `'{"accountId":' || ${json(account)} || ',"action":"${action}","actor":' || to_json(${actorParam}::text)::text || ',"after":' || ${after} ||
   ',"at":"' || ${atIsoParam} || '","before":' || ${before} || ',"chain":' || ${json(account)} ||
   ',"correlationId":' || coalesce(to_json(${correlationParam}::text)::text, 'null') || '}'`;

/**
 * Appends one audit row per row of the temporary table `plan_allowance_audit` (one per account chain)
 * and advances the chain heads, as AuditService does, fed by SQL. The heads are updated with a join
 * rather than AuditService's ON CONFLICT with a per-row subquery (quadratic over thousands of rows),
 * found through the input's chains (an index scan: never a hash of every account's head), joined to
 * the input by its primary key; a chain without a head yet gets one inserted. Every input row must
 * have moved its chain (asserted: a concurrent first write of a chain makes the batch retry).
 */
const auditInsert = `
  WITH input AS (SELECT * FROM plan_allowance_audit),
  updated AS (
    UPDATE audit_chains c SET seq = c.seq + 1, prev_hash = c.hash, hash = audit_hash(c.hash, c.seq + 1, i.record), updated_at = i.at
    FROM plan_allowance_audit i WHERE c.chain = i.chain AND c.chain = ANY(ARRAY(SELECT chain FROM plan_allowance_audit))
    RETURNING c.chain, c.seq, c.prev_hash, c.hash
  ),
  inserted AS (
    INSERT INTO audit_chains (chain, seq, prev_hash, hash, updated_at)
    SELECT i.chain, 1, '${GENESIS_HASH}', audit_hash('${GENESIS_HASH}', 1, i.record), i.at
    FROM input i LEFT JOIN updated u ON u.chain = i.chain WHERE u.chain IS NULL
    ORDER BY i.chain
    ON CONFLICT (chain) DO NOTHING
    RETURNING chain, seq, prev_hash, hash
  ),
  head AS (SELECT * FROM updated UNION ALL SELECT * FROM inserted),
  logged AS (
    INSERT INTO audit_log (chain, seq, at, actor, action, account_id, before, after, correlation_id, prev_hash, hash)
    SELECT i.chain, h.seq, i.at, i.actor, i.action, i.chain, nullif(i.before, 'null')::jsonb, i.after::jsonb, i.correlation_id, h.prev_hash, h.hash
    FROM input i JOIN head h ON h.chain = i.chain
    RETURNING 1
  )
  SELECT ledger_assert((SELECT count(*) FROM logged) = (SELECT count(*) FROM input), 'audit chain head written concurrently: retry') AS ok`;

/**
 * The set-based allowance grant of the monthly reset, also used for one account at reservation time
 * (the lazy grant): for every given account not yet granted this period, in the caller's transaction
 * and a fixed number of statements whatever the number of accounts:
 *
 * 1. locks the wallets in account-id order (the ledger's lock order: wallet first);
 * 2. selects, under the locks, the accounts whose period grant does not exist yet: the grant's id is
 *    deterministic (`alw_<md5(account|period start)>`, see allowanceGrantId), so its primary key is
 *    the idempotency key per account and period (a second run, or a concurrent one, grants nothing);
 * 3. expires the unheld remainder of every grant of theirs that is due, exactly as
 *    LedgerService.expireGrants does (same idempotency key `expire:<grant>`, same entries
 *    grant → expired; the held parts expire when their hold releases them);
 * 4. grants the period's allowance (`plan_allowance`, expiring at the period end, idempotency key
 *    `allowance:<period start>`, fingerprint as LedgerService.grant computes it); the expiry and grant
 *    transactions and their balanced entries are written by one statement;
 * 5. updates the wallets' stored balances by the entries' sums, so the ledger reconciles;
 * 6. audits one `credits.granted` row per account (balances before and after, the grant, what
 *    expired; hash-chained per account as AuditService does);
 * 7. notifies `credits.expired` and `credits.granted` through the outbox (once per cause: only the
 *    transaction that writes the expiry or the grant writes its notification).
 *
 * Every statement finds the rows of existing tables through the batch's account ids or grant ids
 * (index lookups), so a batch costs the same whatever the size of the tables.
 *
 * Wallets in debt are left out (returned in `inDebt`): a grant must repay debt first.
 */
export async function grantAllowances(em: EntityManager, input: GrantAllowancesInput): Promise<GrantAllowancesResult> {
  const { accountIds, period, now } = input;
  const empty: GrantAllowancesResult = { granted: 0, grantedMicros: 0n, expiredGrants: 0, expiredMicros: 0n, inDebt: [] };
  if (accountIds.length === 0 || input.defaults.length === 0) return empty;
  const startIso = period.start.toISOString();
  const endIso = period.end.toISOString();
  const nowIso = now.toISOString();
  const defaults = JSON.stringify(input.defaults.map((d) => ({ plan: d.plan, name: d.name, amount: d.amount.toString() })));

  // The batch's ids as an array computed at run time: an array constant of thousands of ids costs more
  // to plan (a selectivity estimate per element) than the statement does to run.
  const ids = `ARRAY(SELECT unnest($1::text[]))`;
  await em.query(
    `INSERT INTO wallets (account_id) SELECT a.id FROM accounts a WHERE a.id = ANY(${ids})
       AND NOT EXISTS (SELECT 1 FROM wallets w WHERE w.account_id = a.id)
     ON CONFLICT (account_id) DO NOTHING`,
    [accountIds],
  );
  // Account-id order in bytes (COLLATE "C"), the order every multi-wallet locker of the ledger uses.
  await em.query(`SELECT 1 FROM wallets WHERE account_id = ANY(${ids}) ORDER BY account_id COLLATE "C" FOR UPDATE`, [accountIds]);

  // Under the locks: who still needs this period's allowance, their balances before it, and what expires.
  await em.query(`DROP TABLE IF EXISTS plan_allowance_batch, plan_allowance_expiring, plan_allowance_audit`);
  await em.query(
    `CREATE TEMP TABLE plan_allowance_batch (account_id text PRIMARY KEY, amount bigint NOT NULL, plan_name text NOT NULL,
       debt bigint NOT NULL, grant_id text NOT NULL, held bigint NOT NULL, available_before bigint NOT NULL,
       expired bigint NOT NULL) ON COMMIT DROP`,
  );
  await em.query(
    `CREATE TEMP TABLE plan_allowance_expiring (grant_id text PRIMARY KEY, account_id text NOT NULL, source text NOT NULL,
       remaining bigint NOT NULL, expires_at timestamptz NOT NULL) ON COMMIT DROP`,
  );
  // Per account, one index scan of its live grants gives its available balance and what expires; the
  // period's grant is looked up by its id (the idempotency key, checked under the wallet lock).
  await em.query(
    `INSERT INTO plan_allowance_batch (account_id, amount, plan_name, debt, grant_id, held, available_before, expired)
     WITH d AS (SELECT * FROM jsonb_to_recordset($2::jsonb) AS d(plan text, name text, amount bigint))
     SELECT a.id, x.amount, d.name, w.debt, x.grant_id, w.holds_balance, s.available, s.expired
     FROM accounts a
     JOIN wallets w ON w.account_id = a.id
     JOIN d ON d.plan = a.plan
     CROSS JOIN LATERAL (SELECT CASE WHEN a.plan_overrides ? 'includedCredits'
                                     THEN replace(a.plan_overrides->>'includedCredits', '.', '')::bigint
                                     ELSE d.amount END AS amount,
                                'alw_' || md5(a.id || '|' || $3::text) AS grant_id) x
     CROSS JOIN LATERAL (
       SELECT coalesce(sum(g.remaining) FILTER (WHERE g.remaining > 0 AND (g.expires_at IS NULL OR g.expires_at > $4)), 0)::bigint AS available,
         coalesce(sum(g.remaining) FILTER (WHERE g.expires_at <= $4), 0)::bigint AS expired
       FROM grants g WHERE g.account_id = a.id AND g.status = 'active'
     ) s
     WHERE a.id = ANY(${ids}) AND x.amount > 0 AND NOT EXISTS (SELECT 1 FROM grants p WHERE p.id = x.grant_id)`,
    [accountIds, defaults, startIso, now],
  );
  const inDebt = (await rows<{ account_id: string }>(em, `DELETE FROM plan_allowance_batch WHERE debt < 0 RETURNING account_id`)).map((r) => r.account_id);
  await em.query(
    `INSERT INTO plan_allowance_expiring (grant_id, account_id, source, remaining, expires_at)
     SELECT g.id, g.account_id, g.source, g.remaining, g.expires_at FROM grants g
     WHERE g.account_id = ANY(ARRAY(SELECT account_id FROM plan_allowance_batch))
       AND g.status = 'active' AND g.expires_at <= $1`,
    [now],
  );
  await em.query(`ANALYZE plan_allowance_batch`);
  await em.query(`ANALYZE plan_allowance_expiring`);

  // The grant rows, the expiry transactions (the unheld remainder of each due grant goes to `expired`)
  // and the grant transactions (issued → grant), with their entries: one statement, one balance check.
  const reason = `b.plan_name || ' plan allowance for ${startIso} to ${endIso}'`;
  await em.query(
    `WITH g AS (
       INSERT INTO grants (id, account_id, source, amount, remaining, priority, expires_at, reason, reference, created_at)
       SELECT b.grant_id, b.account_id, 'plan_allowance', b.amount, b.amount, 0, $2, ${reason}, NULL, $1 FROM plan_allowance_batch b
     ), tx AS (
       INSERT INTO ledger_transactions (account_id, kind, idempotency_key, fingerprint, amount, grant_id, total_after, held_after,
         available_after, explanation, created_at)
       SELECT t.account_id, t.kind, t.key, t.fingerprint, t.amount, t.grant_id, t.total_after, t.held_after, t.available_after, t.explanation, $1
       FROM (
         SELECT e.account_id, 0 AS ord, e.expires_at, e.grant_id, 'expiry' AS kind, 'expire:' || e.grant_id AS key,
           encode(sha256(convert_to('{"grantId":' || to_json(e.grant_id)::text || ',"op":"expire"}', 'UTF8')), 'hex') AS fingerprint,
           -e.remaining AS amount, b.available_before + b.held AS total_after, b.held AS held_after, b.available_before AS available_after,
           jsonb_build_object('grantId', e.grant_id, 'source', e.source, 'expiresAt', ${iso('e.expires_at')}, 'expired', e.remaining::text) AS explanation
         FROM plan_allowance_expiring e JOIN plan_allowance_batch b ON b.account_id = e.account_id
         WHERE e.remaining > 0
         UNION ALL
         SELECT b.account_id, 1, NULL, b.grant_id, 'grant', $3, encode(sha256(convert_to(
             '{"accountId":' || to_json(b.account_id)::text || ',"amount":' || b.amount::text || ',"expiresAt":"' || $4 ||
             '","grantId":' || to_json(b.grant_id)::text || ',"op":"grant","priority":0,"reason":' || to_json(${reason})::text ||
             ',"reference":null,"source":"plan_allowance"}', 'UTF8')), 'hex'),
           b.amount, b.available_before + b.amount + b.held, b.held, b.available_before + b.amount,
           jsonb_build_object('source', 'plan_allowance', 'reason', ${reason}, 'actor', $5::text, 'expiresAt', $4::text, 'priority', 0, 'repaid', '0')
         FROM plan_allowance_batch b
       ) t
       ORDER BY t.account_id, t.ord, t.expires_at, t.grant_id
       RETURNING id, kind, grant_id, amount
     )
     INSERT INTO ledger_entries (transaction_id, line, ledger_account, amount)
     SELECT id, 1, CASE WHEN kind = 'grant' THEN 'issued' ELSE 'grant:' || grant_id END, CASE WHEN kind = 'grant' THEN -amount ELSE amount END FROM tx
     UNION ALL
     SELECT id, 2, CASE WHEN kind = 'grant' THEN 'grant:' || grant_id ELSE 'expired' END, CASE WHEN kind = 'grant' THEN amount ELSE -amount END FROM tx`,
    [now, period.end, allowanceKey(period), endIso, input.actor],
  );
  await em.query(
    `UPDATE grants g SET status = 'expired', remaining = 0, version = g.version + 1
     WHERE g.id = ANY(ARRAY(SELECT grant_id FROM plan_allowance_expiring))`,
  );
  await em.query(
    `UPDATE wallets w SET grants_balance = w.grants_balance + b.amount - b.expired, expired = w.expired + b.expired,
       issued = w.issued - b.amount, version = w.version + 1, updated_at = $1
     FROM plan_allowance_batch b WHERE w.account_id = b.account_id AND w.account_id = ANY(ARRAY(SELECT account_id FROM plan_allowance_batch))`,
    [now],
  );

  // Audit: one `credits.granted` row per account: balances before and after, the grant, and what of the
  // previous allowance expired (the ledger has the rest: the transactions are found by grant id).
  const before = `'{"available":"' || ${credits('b.available_before')} || '","held":"' || ${credits('b.held')} || '","total":"' || ${credits('b.available_before + b.held')} || '"}'`;
  const after = `'{"available":"' || ${credits('b.available_before + b.amount')} || '","expired":{"credits":"' || ${credits('b.expired')} ||
    '","grants":[' || coalesce(x.ids, '') || ']},"grant":{"amount":"' || ${credits('b.amount')} || '","expiresAt":"' || $4 ||
    '","id":' || ${json('b.grant_id')} || ',"source":"plan_allowance"},"held":"' || ${credits('b.held')} ||
    '","total":"' || ${credits('b.available_before + b.amount + b.held')} || '"}'`;
  await em.query(
    `CREATE TEMP TABLE plan_allowance_audit (chain text PRIMARY KEY, at timestamptz NOT NULL, actor text NOT NULL, action text NOT NULL,
       before text NOT NULL, after text NOT NULL, record text NOT NULL, correlation_id text) ON COMMIT DROP`,
  );
  await em.query(
    `INSERT INTO plan_allowance_audit (chain, at, actor, action, before, after, record, correlation_id)
     SELECT b.account_id, $1::timestamptz, $2::text, 'credits.granted', y.before, y.after,
       ${auditRecord('b.account_id', 'credits.granted', '$2', 'y.before', 'y.after', '$3', '$5')}, $5::text
     FROM plan_allowance_batch b
     LEFT JOIN (SELECT account_id, string_agg(${json('grant_id')}, ',' ORDER BY expires_at, grant_id) AS ids
                FROM plan_allowance_expiring WHERE remaining > 0 GROUP BY account_id) x ON x.account_id = b.account_id
     CROSS JOIN LATERAL (SELECT ${before} AS before, ${after} AS after) y`,
    [now, input.actor, nowIso, endIso, input.correlationId],
  );
  await em.query(`ANALYZE plan_allowance_audit`);
  await em.query(auditInsert);

  // Notifications: each expired grant, each period's grant. Once per cause by construction: they are
  // written only by the transaction that writes the expiry or the grant, whose keys are unique.
  await em.query(
    `INSERT INTO outbox (topic, key, payload)
     SELECT $3, n.account_id, jsonb_build_object('id', 'ntf_' || md5(n.cause), 'type', n.type, 'accountId', n.account_id,
       'occurredAt', $4::text, 'data', n.data)
     FROM (
       SELECT 'credits.expired:' || e.grant_id AS cause, e.account_id, 'credits.expired' AS type, 0 AS ord,
         jsonb_build_object('grantId', e.grant_id, 'source', e.source, 'credits', ${credits('e.remaining')}, 'expiredAt', ${iso('e.expires_at')}) AS data
       FROM plan_allowance_expiring e WHERE e.remaining > 0
       UNION ALL
       SELECT 'credits.granted:' || b.account_id || ':' || $1, b.account_id, 'credits.granted', 1,
         jsonb_build_object('grantId', b.grant_id, 'source', 'plan_allowance', 'credits', ${credits('b.amount')}, 'expiresAt', $2::text,
           'period', jsonb_build_object('from', $1::text, 'to', $2::text))
       FROM plan_allowance_batch b
     ) n
     ORDER BY n.account_id, n.ord`,
    [startIso, endIso, input.notificationsTopic, nowIso],
  );

  const [sums] = await rows<{ granted: number; granted_micros: string; expired_grants: number; expired_micros: string }>(
    em,
    `SELECT (SELECT count(*)::int FROM plan_allowance_batch) AS granted,
       (SELECT coalesce(sum(amount), 0)::text FROM plan_allowance_batch) AS granted_micros,
       (SELECT count(*)::int FROM plan_allowance_expiring WHERE remaining > 0) AS expired_grants,
       (SELECT coalesce(sum(remaining), 0)::text FROM plan_allowance_expiring) AS expired_micros`,
  );
  await em.query(`DROP TABLE plan_allowance_batch, plan_allowance_expiring, plan_allowance_audit`);
  return {
    granted: sums?.granted ?? 0,
    grantedMicros: BigInt(sums?.granted_micros ?? '0'),
    expiredGrants: sums?.expired_grants ?? 0,
    expiredMicros: BigInt(sums?.expired_micros ?? '0'),
    inDebt,
  };
}
