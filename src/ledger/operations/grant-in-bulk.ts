import type { EntityManager } from 'typeorm';
import type { AuditEntry, AuditService } from 'src/audit/audit.service';
import { rows } from 'src/common/database/transaction';
import { formatCredits } from 'src/common/money';
import { enqueue } from 'src/messaging/outbox';
import { Accounts, Posting, walletDelta } from '../core/posting';
import { DEFAULT_PRIORITY, type GrantSource } from '../core/types';
import { expiryNotification, expiryWrite, grantFingerprint, markExpired, type BalancesBefore, type DueGrant } from '../grant-rules';
import { lockWalletsCall } from '../persistence/ledger-batch';
import type { TransactionWrite } from '../persistence/wallet-store';
import { reportLedgerWrites } from '../ledger-flows';
import { bigintAsString } from '../persistence/batch-write';

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
 * fingerprint, entries and explanation); one `credits.granted` audit row per account tells the
 * balances before and after, the grant and what expired. Wallets in debt are left out (`inDebt`).
 */
export async function grantInBulk(em: EntityManager, audit: AuditService, input: BulkGrantInput): Promise<BulkGrantResult> {
  const result: BulkGrantResult = { granted: [], expired: [], inDebt: [] };
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
  const found = await rows<ReadRow>(em, READ_SQL, [accountIds, input.grants.map((g) => g.grantId), input.now]);

  const byAccount = new Map(input.grants.map((g) => [g.accountId, g]));
  const writes: TransactionWrite[] = [];
  const audits: AuditEntry[] = [];
  const dueIds: string[] = [];
  for (const r of found.sort((a, b) => (a.account_id < b.account_id ? -1 : 1))) {
    const before: BalancesBefore = { available: BigInt(r.available), held: BigInt(r.held), debt: BigInt(r.debt) };
    if (before.debt < 0n) {
      result.inDebt.push(r.account_id);
      continue;
    }
    const grant = byAccount.get(r.account_id)!;
    let version = BigInt(r.version);
    const expired: DueGrant[] = [];
    for (const d of r.due) {
      const due: DueGrant = {
        accountId: r.account_id,
        grantId: d.id,
        source: d.source,
        remaining: BigInt(d.remaining),
        expiresAt: new Date(d.expiresAt),
      };
      dueIds.push(due.grantId);
      if (due.remaining <= 0n) continue;
      writes.push(expiryWrite(due, before, version++, input.now));
      expired.push(due);
    }
    const write = grantWrite(input, r.account_id, grant, before, version);
    writes.push(write);
    audits.push(grantAudit(input, write, before, expired));
    result.granted.push({ accountId: r.account_id, grantId: grant.grantId, amount: grant.amount });
    result.expired.push(...expired);
  }
  await writeInBulk(em, writes);
  await markExpired(em, dueIds);
  await audit.recordBulk(em, audits);
  await enqueue(
    em,
    result.expired.map((g) => expiryNotification(input.notificationsTopic, g, input.now)),
  );
  return result;
}

/** The grant's transaction, as grantOperation writes it for a wallet without debt. */
function grantWrite(
  input: BulkGrantInput,
  accountId: string,
  grant: BulkGrantInput['grants'][number],
  before: BalancesBefore,
  version: bigint,
): TransactionWrite {
  const { source, expiresAt } = input;
  const priority = DEFAULT_PRIORITY[source];
  const available = before.available + grant.amount;
  return {
    accountId,
    kind: 'grant',
    idempotencyKey: input.idempotencyKey,
    fingerprint: grantFingerprint({
      accountId,
      source,
      amount: grant.amount,
      expiresAt,
      priority,
      grantId: grant.grantId,
      reason: grant.reason,
      reference: null,
    }),
    amount: grant.amount,
    holdId: null,
    grantId: grant.grantId,
    reference: null,
    after: { available, held: before.held, total: available + before.held + before.debt },
    explanation: { source, reason: grant.reason, actor: input.actor, expiresAt, priority, repaid: 0n },
    at: input.now,
    entries: new Posting().move(Accounts.issued, Accounts.grant(grant.grantId), grant.amount).entries(),
    expectedVersion: version,
    newGrant: {
      id: grant.grantId,
      source,
      amount: grant.amount,
      remaining: grant.amount,
      priority,
      expiresAt,
      reason: grant.reason,
      reference: null,
    },
  };
}

/** The account's `credits.granted` row: balances before and after, the grant, and what of its grants expired. */
function grantAudit(input: BulkGrantInput, write: TransactionWrite, before: BalancesBefore, expired: readonly DueGrant[]): AuditEntry {
  const { after } = write;
  return {
    actor: input.actor,
    action: 'credits.granted',
    accountId: write.accountId,
    before: {
      available: formatCredits(before.available),
      held: formatCredits(before.held),
      total: formatCredits(before.available + before.held),
    },
    after: {
      available: formatCredits(after.available),
      expired: { credits: formatCredits(expired.reduce((s, g) => s + g.remaining, 0n)), grants: expired.map((g) => g.grantId) },
      grant: { amount: formatCredits(write.amount), expiresAt: input.expiresAt.toISOString(), id: write.grantId, source: input.source },
      held: formatCredits(after.held),
      total: formatCredits(after.total),
    },
    correlationId: input.correlationId,
    at: input.now,
  };
}

/**
 * Writes thousands of grant and expiry transactions (no holds) in one statement: the transactions in
 * the given order, their entries, the new grants, and each wallet once by the sum of its entries,
 * checked at the version they were decided on. The ledger's general write statement (ledger.write.ts)
 * does the same for any transaction, but from JSON objects per row: over thousands of rows, arrays
 * cost a fraction of it. An expired grant's remainder is left to markExpired.
 */
const BULK_WRITE_SQL = `
WITH tx AS (
  INSERT INTO ledger_transactions (account_id, kind, idempotency_key, fingerprint, amount, grant_id, total_after, held_after,
    available_after, explanation, created_at)
  SELECT t.account_id, t.kind, t.key, t.fingerprint, t.amount, t.grant_id, t.total_after, t.held_after, t.available_after,
    $10::jsonb -> (t.ord::int - 1), $11
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::bigint[], $8::bigint[], $9::bigint[])
    WITH ORDINALITY AS t(account_id, kind, key, fingerprint, amount, grant_id, total_after, held_after, available_after, ord)
  ORDER BY t.ord
  RETURNING id, account_id, idempotency_key
), ent AS (
  INSERT INTO ledger_entries (transaction_id, line, ledger_account, amount)
  SELECT tx.id, e.line, e.account, e.amount
  FROM unnest($12::text[], $13::text[], $14::smallint[], $15::text[], $16::bigint[]) AS e(account_id, key, line, account, amount)
  JOIN tx ON tx.account_id = e.account_id AND tx.idempotency_key = e.key
), new_grant AS (
  INSERT INTO grants (id, account_id, source, amount, remaining, priority, expires_at, reason, reference, created_at)
  SELECT g.id, g.account_id, g.source, g.amount, g.amount, g.priority, g.expires_at, g.reason, NULL, $11
  FROM unnest($17::text[], $18::text[], $19::text[], $20::bigint[], $21::int[], $22::timestamptz[], $23::text[])
    AS g(id, account_id, source, amount, priority, expires_at, reason)
), wallet AS (
  UPDATE wallets w SET grants_balance = w.grants_balance + d.grants, issued = w.issued + d.issued, expired = w.expired + d.expired,
    version = w.version + d.writes, updated_at = $11
  FROM unnest($24::text[], $25::bigint[], $26::bigint[], $27::bigint[], $28::bigint[], $29::bigint[])
    AS d(account_id, grants, issued, expired, writes, expected)
  WHERE w.account_id = d.account_id AND w.account_id = ANY($24::text[]) AND w.version = d.expected
  RETURNING 1
)
SELECT ledger_assert((SELECT count(*) FROM wallet) = cardinality($24::text[]),
  'ledger write refused: a wallet is not at the version read under its lock') AS ok`;

async function writeInBulk(em: EntityManager, writes: readonly TransactionWrite[]): Promise<void> {
  if (writes.length === 0) return;
  const entries = writes.flatMap((w) => w.entries.map((e, i) => ({ w, line: i + 1, e })));
  const grants = writes.flatMap((w) => (w.newGrant ? [{ ...w.newGrant, accountId: w.accountId }] : []));
  const wallets = new Map<string, { grants: bigint; issued: bigint; expired: bigint; writes: bigint; expected: bigint }>();
  for (const w of writes) {
    const d = walletDelta(w.entries);
    if (d.holds !== 0n || d.consumed !== 0n || d.debt !== 0n) {
      throw new Error(`a bulk write moves grants only (transaction ${w.idempotencyKey})`);
    }
    const s = wallets.get(w.accountId) ?? { grants: 0n, issued: 0n, expired: 0n, writes: 0n, expected: w.expectedVersion };
    if (w.expectedVersion !== s.expected + s.writes) {
      throw new Error(`a write of wallet ${w.accountId} was decided on version ${w.expectedVersion}`);
    }
    wallets.set(w.accountId, {
      grants: s.grants + d.grants,
      issued: s.issued + d.issued,
      expired: s.expired + d.expired,
      writes: s.writes + 1n,
      expected: s.expected,
    });
  }
  const at = writes[0]!.at;
  if (writes.some((w) => w.at.getTime() !== at.getTime())) throw new Error('a bulk write is written at one time');
  // Numbers as array literals: the driver would otherwise quote and escape each of thousands of elements.
  const big = (values: readonly (bigint | number)[]): string => `{${values.join(',')}}`;
  const ws = [...wallets.values()];
  await em.query(BULK_WRITE_SQL, [
    writes.map((w) => w.accountId),
    writes.map((w) => w.kind),
    writes.map((w) => w.idempotencyKey),
    writes.map((w) => w.fingerprint),
    big(writes.map((w) => w.amount)),
    writes.map((w) => w.grantId),
    big(writes.map((w) => w.after.total)),
    big(writes.map((w) => w.after.held)),
    big(writes.map((w) => w.after.available)),
    JSON.stringify(
      writes.map((w) => w.explanation),
      bigintAsString,
    ),
    at,
    entries.map((x) => x.w.accountId),
    entries.map((x) => x.w.idempotencyKey),
    big(entries.map((x) => x.line)),
    entries.map((x) => x.e.account),
    big(entries.map((x) => x.e.amount)),
    grants.map((g) => g.id),
    grants.map((g) => g.accountId),
    grants.map((g) => g.source),
    big(grants.map((g) => g.amount)),
    big(grants.map((g) => g.priority)),
    grants.map((g) => g.expiresAt?.toISOString() ?? null),
    grants.map((g) => g.reason),
    [...wallets.keys()],
    big(ws.map((w) => w.grants)),
    big(ws.map((w) => w.issued)),
    big(ws.map((w) => w.expired)),
    big(ws.map((w) => w.writes)),
    big(ws.map((w) => w.expected)),
  ]);
  reportLedgerWrites(writes);
}
