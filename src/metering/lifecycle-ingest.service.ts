import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { inTransaction, rows } from 'src/common/database/transaction';
import type { Finding } from 'src/common/errors/billing.exception';
import type { LifecycleEvent } from './lifecycle-event';
import { MeteringService } from './metering.service';
import { firstOfEachId } from 'src/messaging/inbox';
import { insertUnreservedRuntimes } from './runtime-writes';

export interface IngestResult {
  accepted: number;
  duplicates: number;
  /** Events refused by what the database knows (neither stored nor applied), with their findings. */
  refused: RefusedEvent[];
}

export interface RefusedEvent {
  event: LifecycleEvent;
  findings: Finding[];
}

/** Thrown by an all-or-nothing ingest that refused some of its events: none was stored. */
export class EventsRefused extends Error {
  constructor(readonly refused: RefusedEvent[]) {
    super(
      `${refused.length} event(s) refused: ${refused.map((r) => r.findings.map((f) => `${f.field}: ${f.message}`).join('; ')).join(' | ')}`,
    );
  }
}

/**
 * The one handler of lifecycle events, for Kafka and HTTP alike. A batch is one transaction:
 * the events are inserted by id (the inbox: a known id is skipped), and only the new ones take effect;
 * heartbeats are not stored (see MeteringService.apply).
 */
@Injectable()
export class LifecycleIngestService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly metering: MeteringService,
  ) {}

  /**
   * `allOrNothing`: refused events make the whole call throw EventsRefused with nothing stored (the
   * HTTP answer); otherwise they are returned, and the others applied (the consumer parks them).
   */
  async ingest(events: LifecycleEvent[], opts: { allOrNothing?: boolean } = {}): Promise<IngestResult> {
    if (events.length === 0) return { accepted: 0, duplicates: 0, refused: [] };
    // All or nothing is one transaction; otherwise one per part of a bounded number of settlements.
    const parts = opts.allOrNothing ? [events] : bySettlements(events, SETTLEMENTS_PER_TRANSACTION);
    let fresh = 0;
    const refused: RefusedEvent[] = [];
    for (const part of parts) {
      const applied = await this.ingestPart(part, opts);
      fresh += applied.fresh;
      refused.push(...applied.refused);
    }
    return { accepted: fresh, duplicates: events.length - fresh - refused.length, refused };
  }

  /** One transaction: the inbox insert and the events applied. */
  private ingestPart(events: LifecycleEvent[], opts: { allOrNothing?: boolean }): Promise<{ fresh: number; refused: RefusedEvent[] }> {
    return inTransaction(this.ds, async (em) => {
      // Each copy is checked as it would be in a batch of its own (one naming another account is refused),
      // then the first accepted copy of an id is kept, as a copy in a later batch is a duplicate.
      const checked = await resolveRuntimes(em, events);
      if (checked.refused.length > 0 && opts.allOrNothing) throw new EventsRefused(checked.refused);
      // Heartbeats carry no money and are most of the stream: not stored, deduplicated by seq
      // (MeteringService), not by id, here as across batches.
      const ok = firstOfEachId(checked.ok, (e) => e.type !== 'runtime.heartbeat');
      const heartbeats = ok.filter((e) => e.type === 'runtime.heartbeat');
      const inserted = await insertEvents(
        em,
        ok.filter((e) => e.type !== 'runtime.heartbeat'),
        checked.months,
      );
      const counted = await this.metering.apply(em, inserted, heartbeats, checked.months);
      return { fresh: inserted.length + counted, refused: checked.refused };
    });
  }
}

/**
 * Settlements (terminations and launch failures) per transaction of a Kafka chunk. A chunk's ledger
 * batch holds the wallet locks it takes until it commits, and reservations of those accounts wait
 * for them: bounded, a transaction holds them for milliseconds (its batch's two round trips and
 * its commit), whatever the size of the chunk.
 */
export const SETTLEMENTS_PER_TRANSACTION = 256;

/**
 * Splits events, in their order, into parts of at most `limit` terminations and launch failures
 * each (heartbeats and other events ride along). A runtime's events in different parts are still
 * applied correctly: each part rebuilds its runtimes from the set of their stored events.
 */
export function bySettlements(events: LifecycleEvent[], limit: number): LifecycleEvent[][] {
  const parts: LifecycleEvent[][] = [[]];
  let settlements = 0;
  for (const e of events) {
    const settles = e.type === 'runtime.terminated' || e.type === 'runtime.launch_failed';
    if (settles && settlements === limit) {
      parts.push([]);
      settlements = 0;
    }
    if (settles) settlements++;
    parts[parts.length - 1]!.push(e);
  }
  return parts;
}

/**
 * A runtime belongs to one account: the account of its reservation, or of its first event. An event
 * that names another account is refused (the contract keys the topic by account; applied, it would
 * move one account's charges with another's runtime). A runtime first seen in this batch belongs to
 * the account of its first event in it: its row is created here, before its events are stored,
 * because they are stored in the partition of its month (a heartbeat-only runtime, whose events are
 * not stored, gets its row when metering rebuilds it). The events of a runtime whose month is archived
 * are refused too. Returns each known runtime's month.
 */
async function resolveRuntimes(
  em: EntityManager,
  events: LifecycleEvent[],
): Promise<{ ok: LifecycleEvent[]; refused: RefusedEvent[]; months: Map<string, string> }> {
  const first = new Map<string, string>();
  for (const e of events) if (!first.has(e.runtimeId)) first.set(e.runtimeId, e.accountId);
  const known = await readRuntimes(em, [...first.keys()]);
  const stored = new Set(events.filter((e) => e.type !== 'runtime.heartbeat').map((e) => e.runtimeId));
  const found = new Set(known.map((r) => r.runtime_id));
  const unknown = [...stored].filter((id) => !found.has(id)).sort();
  if (unknown.length > 0) {
    const created = await insertUnreservedRuntimes(
      em,
      unknown.map((id) => ({ id, account: first.get(id)! })),
    );
    const done = new Set(created.map((r) => r.runtime_id));
    const meanwhile = unknown.filter((id) => !done.has(id));
    known.push(...created, ...(meanwhile.length > 0 ? await readRuntimes(em, meanwhile) : []));
  }
  const archived = new Map(known.filter((r) => r.archived).map((r) => [r.runtime_id, r.month.slice(0, 7)]));
  const owner = new Map(known.map((r) => [r.runtime_id, r.account_id]));
  const ok: LifecycleEvent[] = [];
  const refused: RefusedEvent[] = [];
  for (const e of events) {
    const account = owner.get(e.runtimeId) ?? e.accountId;
    owner.set(e.runtimeId, account);
    const month = archived.get(e.runtimeId);
    if (account !== e.accountId) {
      refused.push({ event: e, findings: [{ field: 'accountId', message: `runtime ${e.runtimeId} belongs to another account` }] });
    } else if (month !== undefined) {
      const message = `runtime ${e.runtimeId} is of ${month}, whose events are archived: it was settled for good`;
      refused.push({ event: e, findings: [{ field: 'runtimeId', message }] });
    } else {
      ok.push(e);
    }
  }
  return { ok, refused, months: new Map(known.map((r) => [r.runtime_id, r.month])) };
}

interface RuntimeMonthRow {
  runtime_id: string;
  account_id: string;
  month: string;
  archived?: boolean;
}

/** The runtimes' owners and months, and whether their month is archived. */
function readRuntimes(em: EntityManager, ids: string[]): Promise<RuntimeMonthRow[]> {
  return rows<RuntimeMonthRow>(
    em,
    `SELECT r.runtime_id, r.account_id, runtime_month(r.created_at)::text AS month, a.month IS NOT NULL AS archived
     FROM runtimes r LEFT JOIN event_month_archives a ON a.month = runtime_month(r.created_at) WHERE r.runtime_id = ANY($1)`,
    [ids],
  );
}

/**
 * Multi-row insert of events into the partition of their runtime's month, from one JSON array of
 * rows (instants as epoch milliseconds: exact, as events carry millisecond precision); returns those
 * whose id was not seen before for their runtime's month, and of a month not archived meanwhile (an
 * archive that committed after resolveRuntimes read the list). (Seven array parameters, each quoted
 * element by element by the driver, cost more to build.)
 */
async function insertEvents(em: EntityManager, events: LifecycleEvent[], months: Map<string, string>): Promise<LifecycleEvent[]> {
  if (events.length === 0) return [];
  const rows: { id: string }[] = await em.query(
    `INSERT INTO runtime_events (id, type, account_id, runtime_id, occurred_at, seq, data, runtime_month)
     SELECT e.id, e.type, e.account_id, e.runtime_id, to_timestamp(e.at_ms / 1000), e.seq, e.data, e.month FROM json_to_recordset($1::json)
       AS e(id text, type text, account_id text, runtime_id text, at_ms float8, seq bigint, data jsonb, month date)
     WHERE NOT EXISTS (SELECT 1 FROM event_month_archives a WHERE a.month = e.month)
     ON CONFLICT (id, runtime_month) DO NOTHING
     RETURNING id`,
    [
      JSON.stringify(
        events.map((e) => ({
          id: e.id,
          type: e.type,
          account_id: e.accountId,
          runtime_id: e.runtimeId,
          at_ms: e.occurredAt.getTime(),
          seq: e.seq,
          data: e.data,
          month: monthOf(months, e.runtimeId),
        })),
      ),
    ],
  );
  const inserted = new Set(rows.map((r) => r.id));
  return events.filter((e) => inserted.has(e.id));
}

function monthOf(months: Map<string, string>, runtimeId: string): string {
  const month = months.get(runtimeId);
  if (month === undefined) throw new Error(`runtime ${runtimeId} has no row: its events have no partition`);
  return month;
}
