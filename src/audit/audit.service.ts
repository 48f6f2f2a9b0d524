import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { canonicalJson } from 'src/common/canonical-json';
import { canonicalJsonSql, jsonSql, type JsonSql } from 'src/common/canonical-json-sql';
import { correlationId } from 'src/common/context/correlation';
import { preparedRows } from 'src/common/database/prepared';
import type { Call, PreparedStatement } from 'src/common/database/pipelined-transaction';
import { withRelation, type SqlRelation } from 'src/common/database/sql-relation';
import { rows } from 'src/common/database/transaction';
import { Clock } from 'src/infra/clock/clock';
import { auditHash, GENESIS_HASH, GLOBAL_CHAIN, normalizeJson, type AuditRecord } from './audit-hash';
import { PLAN_CHANGES_SQL } from './entities/audit-log.entity';

export interface AuditEntry {
  /** Who: `key:<api key id>`, `system:<job>`, `cli`, `stripe`, … */
  actor: string;
  /** What, as `<subject>.<verb>`: `credits.granted`, `hold.settled`, `account.updated`, … */
  action: string;
  accountId?: string | null;
  before?: unknown;
  after?: unknown;
  /** The request, event or job run this row serves; defaults to the current correlation (common/context). */
  correlationId?: string | null;
  /** When (defaults to the clock's now). */
  at?: Date;
}

export interface AuditRef {
  id: string;
  chain: string;
  seq: number;
  hash: string;
}

/** A row as read: its hashed content, and its place in its chain. */
export interface AuditRow extends AuditRecord {
  id: string;
  seq: number;
  prevHash: string;
  hash: string;
}

export interface AuditQuery {
  accountId?: string;
  from?: Date;
  to?: Date;
  /** The id of the last row of the previous page (rows come newest first). */
  cursor?: string;
  limit: number;
}

export type VerifyProblem = {
  chain: string;
  seq: number;
  id: string | null;
  reason: 'hash mismatch' | 'broken link' | 'missing row' | 'chain head mismatch' | 'chain head missing';
  detail: string;
  /** The offending row as stored (for an edited or re-linked row). */
  row?: AuditRow;
};

export type VerifyResult = { ok: true; rows: number; chains: number } | { ok: false; rows: number; chains: number; problem: VerifyProblem };

interface DbRow {
  id: string;
  chain: string;
  seq: string;
  at: Date;
  actor: string;
  action: string;
  account_id: string | null;
  before: unknown;
  after: unknown;
  correlation_id: string | null;
  prev_hash: string;
  hash: string;
}

/** Appends rows and advances their chains' heads (locked by the upsert: take it last). */
const RECORD_STATEMENT: PreparedStatement = {
  name: 'audit_record_v1',
  text: `WITH input AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(ord int, chain text, record text, at timestamptz, actor text,
      action text, account_id text, before jsonb, after jsonb, correlation_id text)
  ), head AS (
    INSERT INTO audit_chains AS c (chain, seq, prev_hash, hash, updated_at)
    SELECT i.chain, 1, $2, audit_hash($2, 1, i.record), i.at FROM input i ORDER BY i.chain
    ON CONFLICT (chain) DO UPDATE SET
      seq = c.seq + 1,
      prev_hash = c.hash,
      hash = audit_hash(c.hash, c.seq + 1, (SELECT i.record FROM input i WHERE i.chain = c.chain)),
      updated_at = EXCLUDED.updated_at
    RETURNING c.chain, c.seq, c.prev_hash, c.hash
  ), ins AS (
    INSERT INTO audit_log (chain, seq, at, actor, action, account_id, before, after, correlation_id, prev_hash, hash)
    SELECT i.chain, h.seq, i.at, i.actor, i.action, i.account_id, i.before, i.after, i.correlation_id, h.prev_hash, h.hash
    FROM input i JOIN head h ON h.chain = i.chain
    RETURNING id, chain, seq, hash
  )
  SELECT i.ord, ins.id::text AS id, ins.chain, ins.seq::text AS seq, ins.hash FROM ins JOIN input i ON i.chain = ins.chain`,
};

/**
 * One row per chain for recordBulk, with what it says already as canonical JSON text: the writer's
 * own statement builds them (common/canonical-json-sql.ts), thousands at a time.
 */
export interface AuditBulkRow {
  /** The account (its chain), or null for the global chain. */
  account_id: string | null;
  /**
   * The canonical JSON text (RFC 8785, as canonicalJson writes normalizeJson's value) of what the
   * row says before and after, or null. Text that is not canonical is stored, but `audit verify`
   * reports its row.
   */
  before: string | null;
  after: string | null;
}

export interface AuditBulk {
  actor: string;
  action: string;
  at: Date;
  correlationId: string | null;
  /** The rows, one per chain, as a relation of the writer's (read in the statement that appends them). */
  rows: SqlRelation<AuditBulkRow>;
}

/** recordBulk's input row: its chain (as prepare() chooses it), and its hashed record as prepare() writes it (canonicalJson). */
const BULK_CHAIN = `coalesce(r.account_id, '${GLOBAL_CHAIN}')`;
const BULK_RECORD_TEXT = canonicalJsonSql(
  jsonSql.object({
    accountId: jsonSql.text('r.account_id'),
    action: jsonSql.text('$4::text'),
    actor: jsonSql.text('$3::text'),
    after: jsonSql.json('r.after'),
    at: jsonSql.text('$2::text'),
    before: jsonSql.json('r.before'),
    chain: jsonSql.text(BULK_CHAIN),
    correlationId: jsonSql.text('$5::text'),
  } satisfies Record<keyof AuditRecord, JsonSql>),
);

/**
 * recordBulk's statement ($1 genesis hash, $2 at, $3 actor, $4 action, $5 correlation id) over the
 * writer's rows: each row's chain and hashed record computed once (`input`), the heads advanced by a
 * join through the input's chains (index lookups, never a scan of every head), a missing head
 * inserted, and the rows appended.
 */
const bulkRecordSql = (select: string): string => `
  WITH r AS MATERIALIZED (${select}),
  input AS MATERIALIZED (
    SELECT ${BULK_CHAIN} AS chain, ${BULK_RECORD_TEXT} AS record, r.account_id, r.before, r.after FROM r
  ), updated AS (
    UPDATE audit_chains c SET seq = c.seq + 1, prev_hash = c.hash, hash = audit_hash(c.hash, c.seq + 1, i.record), updated_at = $2::text::timestamptz
    FROM input i WHERE c.chain = i.chain AND c.chain = ANY(ARRAY(SELECT chain FROM input))
    RETURNING c.chain, c.seq, c.prev_hash, c.hash
  ), inserted AS (
    INSERT INTO audit_chains (chain, seq, prev_hash, hash, updated_at)
    SELECT i.chain, 1, $1, audit_hash($1, 1, i.record), $2::text::timestamptz
    FROM input i LEFT JOIN updated u ON u.chain = i.chain WHERE u.chain IS NULL
    ORDER BY i.chain
    ON CONFLICT (chain) DO NOTHING
    RETURNING chain, seq, prev_hash, hash
  ), head AS (SELECT * FROM updated UNION ALL SELECT * FROM inserted),
  logged AS (
    INSERT INTO audit_log (chain, seq, at, actor, action, account_id, before, after, correlation_id, prev_hash, hash)
    SELECT i.chain, h.seq, $2::text::timestamptz, $3::text, $4::text, i.account_id, i.before::jsonb, i.after::jsonb, $5::text,
      h.prev_hash, h.hash
    FROM input i JOIN head h ON h.chain = i.chain
    RETURNING 1
  )
  SELECT ledger_assert((SELECT count(*) FROM logged) = (SELECT count(*) FROM input), 'audit chain head written concurrently: retry') AS ok`;

/**
 * Entries in rounds of one row per chain (a chain head advances once per statement), each chain's
 * rows in the given order: the first row of every chain, then the second, and so on.
 */
export function auditRounds<T extends { entry: AuditEntry }>(items: readonly T[]): T[][] {
  const rounds: T[][] = [];
  const seen = new Map<string, number>();
  for (const item of items) {
    const chain = item.entry.accountId ?? GLOBAL_CHAIN;
    const round = seen.get(chain) ?? 0;
    seen.set(chain, round + 1);
    (rounds[round] ??= []).push(item);
  }
  return rounds;
}

/**
 * The append-only, hash-chained audit log. `record` writes in the caller's transaction and takes
 * the chain head's row lock: call it LAST in a transaction (after every ledger lock), so the head
 * is held only until commit and no lock cycle can form. Each account has its own chain (the wallet
 * lock already orders its writers), so writers of different accounts never wait on each other.
 */
@Injectable()
export class AuditService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly clock: Clock,
  ) {}

  async record(em: EntityManager, entry: AuditEntry): Promise<AuditRef> {
    const [ref] = await this.recordMany(em, [entry]);
    return ref!;
  }

  /** Several rows in one statement per round; rows of the same chain are written in the given order. */
  async recordMany(em: EntityManager, entries: readonly AuditEntry[]): Promise<AuditRef[]> {
    const refs: AuditRef[] = new Array<AuditRef>(entries.length);
    for (const round of auditRounds(entries.map((entry, ord) => ({ ord, entry })))) {
      const call = this.recordCall(round.map((r) => r.entry));
      const written = await preparedRows<{ ord: number; id: string; chain: string; seq: string; hash: string }>(
        em,
        call.statement.name,
        call.statement.text,
        call.values,
      );
      for (const w of written) refs[round[w.ord]!.ord] = { id: w.id, chain: w.chain, seq: Number(w.seq), hash: w.hash };
    }
    return refs;
  }

  /**
   * The statement that appends `entries` (each of a different chain) and advances their chain
   * heads, for callers that batch it with other statements (the ledger's two-round-trip path).
   */
  recordCall(entries: readonly AuditEntry[]): Call {
    const input = this.inputOf(entries);
    if (new Set(input.map((i) => i.chain)).size !== input.length) throw new Error('one audit row per chain per statement');
    return { statement: RECORD_STATEMENT, values: [JSON.stringify(input), GENESIS_HASH] };
  }

  /**
   * Appends one row to each of thousands of chains (the monthly reset) in one statement whatever
   * their number, reading the rows from the writer's relation (its own tables: no row leaves
   * PostgreSQL): recordCall's upsert looks each row's record up in its input, quadratic over
   * thousands of rows; here the heads are advanced by a join through the input's chains (index
   * lookups, never a scan of every head). Each row's hashed record is built by PostgreSQL
   * (BULK_RECORD_TEXT, the same text as recordCall's canonicalJson). The chains' writers must hold their locks (an account's wallet lock
   * orders its chain's writers); a concurrent first row of a chain fails the statement as a
   * serialization failure, so the transaction is retried.
   */
  async recordBulk(em: EntityManager, bulk: AuditBulk): Promise<void> {
    const statement = withRelation(
      [GENESIS_HASH, bulk.at.toISOString(), bulk.actor, bulk.action, bulk.correlationId],
      bulk.rows,
      bulkRecordSql,
    );
    await em.query(statement.text, statement.values);
  }

  /** The rows to append: each entry's record and its canonical JSON text, which the hash is computed over. */
  private inputOf(entries: readonly AuditEntry[]) {
    return entries.map((e, ord) => {
      const { record, text } = this.prepare(e);
      return {
        ord,
        chain: record.chain,
        record: text,
        at: record.at,
        actor: record.actor,
        action: record.action,
        account_id: record.accountId,
        before: record.before,
        after: record.after,
        correlation_id: record.correlationId,
      };
    });
  }

  private prepare(e: AuditEntry): { record: AuditRecord; text: string } {
    const accountId = e.accountId ?? null;
    const record: AuditRecord = {
      chain: accountId ?? GLOBAL_CHAIN,
      at: (e.at ?? this.clock.now()).toISOString(),
      actor: e.actor,
      action: e.action,
      accountId,
      before: normalizeJson(e.before),
      after: normalizeJson(e.after),
      // The request, event or job being served, unless the caller carried its own (a batch of many).
      correlationId: e.correlationId ?? correlationId(),
    };
    return { record, text: canonicalJson(record) };
  }

  /**
   * An account's changes of its plan terms (PLAN_CHANGE_ACTIONS) dated `from` or later, newest first
   * (its chain's order), read in the caller's transaction: to know its terms at `from`. Read from their
   * own small index, not through the account's chain (every change of its money).
   */
  async planChangesSince(
    em: Pick<EntityManager, 'query'>,
    accountId: string,
    from: Date,
  ): Promise<{ at: Date; action: string; before: unknown; after: unknown }[]> {
    return rows<{ at: Date; action: string; before: unknown; after: unknown }>(
      em,
      `SELECT at, action, before, after FROM audit_log
       WHERE chain = $1 AND account_id = $1 AND ${PLAN_CHANGES_SQL} AND at >= $2
       ORDER BY seq DESC`,
      [accountId, from],
    );
  }

  /** Rows newest first, filtered by account and a half-open time range [from, to). */
  async list(q: AuditQuery): Promise<{ items: AuditRow[]; nextCursor: string | null }> {
    const values: unknown[] = [];
    const bind = (value: unknown, type: string) => `$${values.push(value)}::${type}`;
    const where: string[] = [];
    // One account's rows are read from its own index (account, id), newest first, only as far as the
    // page: ordered by id alone (the account a constant), the planner may walk the whole log backwards
    // by id instead, reading every newer row of every other account (the console's account page).
    // `= ANY` keeps the account out of the constants, so only that index gives the order asked.
    if (q.accountId !== undefined) where.push(`account_id = ANY(ARRAY[${bind(q.accountId, 'text')}])`);
    // A time range is read from the index by time (its rows only, then sorted by id): a row's `at` is
    // the date of what it records, days out of id order at times (a webhook retried for days, a job
    // run late), so no walk by id can stop early and stay exact. Ordered by `id + 0`, which no index
    // gives: walking by id, filtering on time, is what the planner would otherwise pick for a range of
    // more than a few hours, reading every newer row of the log (a day of 300,000 rows read 114,743).
    if (q.from !== undefined) where.push(`at >= ${bind(q.from, 'timestamptz')}`);
    if (q.to !== undefined) where.push(`at < ${bind(q.to, 'timestamptz')}`);
    if (q.cursor !== undefined) where.push(`id < ${bind(q.cursor, 'bigint')}`);
    const order =
      q.from !== undefined || q.to !== undefined
        ? '(audit_log.id + 0) DESC'
        : q.accountId !== undefined
          ? 'audit_log.account_id DESC, audit_log.id DESC'
          : 'audit_log.id DESC';
    const found = await rows<DbRow>(
      this.ds,
      `SELECT id::text AS id, chain, seq::text AS seq, at, actor, action, account_id, before, after, correlation_id, prev_hash, hash
       FROM audit_log
       ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY ${order}
       LIMIT ${bind(q.limit + 1, 'int')}`,
      values,
    );
    const page = found.slice(0, q.limit).map(toAuditRow);
    return { items: page, nextCursor: found.length > q.limit ? (page[page.length - 1]?.id ?? null) : null };
  }

  /**
   * Walks every chain in order and recomputes every hash: returns the first row that was edited
   * (hash mismatch), re-linked (broken link) or is missing (a gap in seq, or fewer rows than the
   * chain head says).
   */
  async verify(batchSize = 5000): Promise<VerifyResult> {
    const heads = new Map(
      (await this.ds.query<{ chain: string; seq: string; hash: string }[]>(`SELECT chain, seq::text AS seq, hash FROM audit_chains`)).map(
        (h) => [h.chain, { seq: Number(h.seq), hash: h.hash }],
      ),
    );
    let checked = 0;
    let chains = 0;
    let current = null as { chain: string; seq: number; hash: string } | null;
    const fail = (problem: VerifyProblem): VerifyResult => ({ ok: false, rows: checked, chains, problem });
    const endOfChain = (c: { chain: string; seq: number; hash: string }): VerifyProblem | null => {
      const head = heads.get(c.chain);
      heads.delete(c.chain);
      if (!head) {
        return { chain: c.chain, seq: c.seq, id: null, reason: 'chain head missing', detail: 'no audit_chains row for this chain' };
      }
      if (head.seq > c.seq) {
        return {
          chain: c.chain,
          seq: c.seq + 1,
          id: null,
          reason: 'missing row',
          detail: `the chain head is at seq ${head.seq}, the last row is seq ${c.seq}`,
        };
      }
      if (head.seq !== c.seq || head.hash !== c.hash) {
        return { chain: c.chain, seq: c.seq, id: null, reason: 'chain head mismatch', detail: `head seq ${head.seq} hash ${head.hash}` };
      }
      return null;
    };
    let after: [string, number] = ['', 0];
    for (;;) {
      const batch = await rows<DbRow>(
        this.ds,
        `SELECT id::text AS id, chain, seq::text AS seq, at, actor, action, account_id, before, after, correlation_id, prev_hash, hash
         FROM audit_log WHERE (chain, seq) > ($1, $2) ORDER BY audit_log.chain, audit_log.seq LIMIT $3`,
        [after[0], after[1], batchSize],
      );
      for (const db of batch) {
        const row = toAuditRow(db);
        if (current && current.chain !== row.chain) {
          const problem = endOfChain(current);
          if (problem) return fail(problem);
          current = null;
        }
        if (!current) chains++;
        const expectedSeq: number = current ? current.seq + 1 : 1;
        const expectedPrev: string = current ? current.hash : GENESIS_HASH;
        if (row.seq !== expectedSeq) {
          return fail({
            chain: row.chain,
            seq: expectedSeq,
            id: null,
            reason: 'missing row',
            detail: `seq ${expectedSeq} is missing before row ${row.id} (seq ${row.seq})`,
          });
        }
        if (row.prevHash !== expectedPrev) {
          return fail({
            chain: row.chain,
            seq: row.seq,
            id: row.id,
            reason: 'broken link',
            detail: `prev_hash ${row.prevHash} does not match the previous row's hash ${expectedPrev}`,
            row,
          });
        }
        const recomputed = auditHash(row.prevHash, row.seq, recordOf(row));
        if (recomputed !== row.hash) {
          return fail({
            chain: row.chain,
            seq: row.seq,
            id: row.id,
            reason: 'hash mismatch',
            detail: `stored ${row.hash}, recomputed ${recomputed}: the row was changed`,
            row,
          });
        }
        checked++;
        current = { chain: row.chain, seq: row.seq, hash: row.hash };
        after = [row.chain, row.seq];
      }
      if (batch.length < batchSize) break;
    }
    if (current) {
      const problem = endOfChain(current);
      if (problem) return fail(problem);
    }
    for (const [chain, head] of heads) {
      return fail({
        chain,
        seq: 1,
        id: null,
        reason: 'missing row',
        detail: `the chain head is at seq ${head.seq} but the chain has no rows`,
      });
    }
    return { ok: true, rows: checked, chains };
  }
}

function toAuditRow(r: DbRow): AuditRow {
  return {
    id: r.id,
    chain: r.chain,
    seq: Number(r.seq),
    at: r.at.toISOString(),
    actor: r.actor,
    action: r.action,
    accountId: r.account_id,
    before: r.before ?? null,
    after: r.after ?? null,
    correlationId: r.correlation_id,
    prevHash: r.prev_hash,
    hash: r.hash,
  };
}

function recordOf(row: AuditRow): AuditRecord {
  return {
    chain: row.chain,
    at: row.at,
    actor: row.actor,
    action: row.action,
    accountId: row.accountId,
    before: row.before,
    after: row.after,
    correlationId: row.correlationId,
  };
}
