import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { inTransaction } from '../common/database/transaction';
import type { LifecycleEvent } from './lifecycle-event';
import { MeteringService } from './metering.service';

export interface IngestResult {
  accepted: number;
  duplicates: number;
}

/**
 * The one handler of lifecycle events, for Kafka and HTTP alike. A batch is one transaction:
 * the events are inserted by id (the inbox: a known id is skipped), and only the new ones take effect.
 */
@Injectable()
export class LifecycleIngestService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly metering: MeteringService,
  ) {}

  async ingest(events: LifecycleEvent[]): Promise<IngestResult> {
    const unique = [...new Map(events.map((e) => [e.id, e])).values()];
    if (unique.length === 0) return { accepted: 0, duplicates: events.length };
    const fresh = await inTransaction(this.ds, async (em) => {
      const inserted = await insertEvents(em, unique);
      await this.metering.apply(em, inserted);
      return inserted;
    });
    return { accepted: fresh.length, duplicates: events.length - fresh.length };
  }
}

/** Multi-row insert of events; returns those whose id was not seen before. */
async function insertEvents(em: EntityManager, events: LifecycleEvent[]): Promise<LifecycleEvent[]> {
  const rows: { id: string }[] = await em.query(
    `INSERT INTO runtime_events (id, type, account_id, runtime_id, occurred_at, seq, data)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::bigint[], $7::jsonb[])
     ON CONFLICT (id) DO NOTHING
     RETURNING id`,
    [
      events.map((e) => e.id),
      events.map((e) => e.type),
      events.map((e) => e.accountId),
      events.map((e) => e.runtimeId),
      events.map((e) => e.occurredAt.toISOString()),
      events.map((e) => e.seq),
      events.map((e) => JSON.stringify(e.data)),
    ],
  );
  const inserted = new Set(rows.map((r) => r.id));
  return events.filter((e) => inserted.has(e.id));
}
