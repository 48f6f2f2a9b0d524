import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { inTransaction, rows } from 'src/common/database/transaction';
import type { Finding } from 'src/common/errors/billing.exception';
import type { LifecycleEvent } from './lifecycle-event';
import { MeteringService } from './metering.service';

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
    const unique = [...new Map(events.map((e) => [e.id, e])).values()];
    if (unique.length === 0) return { accepted: 0, duplicates: events.length, refused: [] };
    // All or nothing is one transaction; otherwise one per part of a bounded number of settlements.
    const parts = opts.allOrNothing ? [unique] : bySettlements(unique, SETTLEMENTS_PER_TRANSACTION);
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
  private ingestPart(unique: LifecycleEvent[], opts: { allOrNothing?: boolean }): Promise<{ fresh: number; refused: RefusedEvent[] }> {
    return inTransaction(this.ds, async (em) => {
      const checked = await refuseForeign(em, unique);
      if (checked.refused.length > 0 && opts.allOrNothing) throw new EventsRefused(checked.refused);
      // Heartbeats carry no money and are most of the stream: not stored, deduplicated by seq (MeteringService).
      const heartbeats = checked.ok.filter((e) => e.type === 'runtime.heartbeat');
      const inserted = await insertEvents(
        em,
        checked.ok.filter((e) => e.type !== 'runtime.heartbeat'),
      );
      const counted = await this.metering.apply(em, inserted, heartbeats);
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
 * the account of its first event in it.
 */
async function refuseForeign(em: EntityManager, events: LifecycleEvent[]): Promise<{ ok: LifecycleEvent[]; refused: RefusedEvent[] }> {
  const known = await rows<{ runtime_id: string; account_id: string }>(
    em,
    `SELECT runtime_id, account_id FROM runtimes WHERE runtime_id = ANY($1)`,
    [[...new Set(events.map((e) => e.runtimeId))]],
  );
  const owner = new Map(known.map((r) => [r.runtime_id, r.account_id]));
  const ok: LifecycleEvent[] = [];
  const refused: RefusedEvent[] = [];
  for (const e of events) {
    const account = owner.get(e.runtimeId) ?? e.accountId;
    owner.set(e.runtimeId, account);
    if (account === e.accountId) ok.push(e);
    else refused.push({ event: e, findings: [{ field: 'accountId', message: `runtime ${e.runtimeId} belongs to another account` }] });
  }
  return { ok, refused };
}

/**
 * Multi-row insert of events, from one JSON array of rows (instants as epoch milliseconds: exact, as
 * events carry millisecond precision); returns those whose id was not seen before. (Seven array
 * parameters, each quoted element by element by the driver, cost more to build.)
 */
async function insertEvents(em: EntityManager, events: LifecycleEvent[]): Promise<LifecycleEvent[]> {
  if (events.length === 0) return [];
  const rows: { id: string }[] = await em.query(
    `INSERT INTO runtime_events (id, type, account_id, runtime_id, occurred_at, seq, data)
     SELECT e.id, e.type, e.account_id, e.runtime_id, to_timestamp(e.at_ms / 1000), e.seq, e.data FROM json_to_recordset($1::json)
       AS e(id text, type text, account_id text, runtime_id text, at_ms float8, seq bigint, data jsonb)
     ON CONFLICT (id) DO NOTHING
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
        })),
      ),
    ],
  );
  const inserted = new Set(rows.map((r) => r.id));
  return events.filter((e) => inserted.has(e.id));
}
