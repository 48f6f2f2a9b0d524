import type { DataSource } from 'typeorm';
import type { AuditService } from 'src/audit/audit.service';
import { inTransaction, rows } from 'src/common/database/transaction';

/** Calendar months that must have passed after a runtime month ends before it can be archived. */
export const ARCHIVE_AFTER_MONTHS = 2;

/** Why a month cannot be archived (the CLI prints it and exits 1). */
export class ArchiveRefused extends Error {}

export interface ArchivedMonth {
  month: string;
  /** The detached partition: a table of its own, to dump (`pg_dump --table`) and then drop. */
  partition: string;
  runtimes: number;
}

/**
 * Archives a runtime month of `runtime_events` (`cli events archive YYYY-MM`): its partition is
 * detached and the month recorded in `event_month_archives`; from then on the events of its runtimes
 * are refused by the ingest. Refused while the month is recent (it ended less than
 * ARCHIVE_AFTER_MONTHS calendar months ago: late events and corrections may still come) or while any
 * of its runtimes is not settled or voided. The runtimes are counted before any lock (a past month
 * gets no new runtime); the detach then holds `runtime_events` for a few statements: the ingest's
 * inserts wait for it, and skip the archived month's events after it (the insert checks the archive
 * list itself, so an ingest that read the list just before is covered too).
 */
export async function archiveEventMonth(ds: DataSource, audit: AuditService, month: string, now: Date): Promise<ArchivedMonth> {
  const parsed = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(month);
  if (!parsed) throw new ArchiveRefused(`month must be YYYY-MM, got ${JSON.stringify(month)}`);
  const from = new Date(Date.UTC(Number(parsed[1]), Number(parsed[2]) + ARCHIVE_AFTER_MONTHS, 1));
  if (now < from) throw new ArchiveRefused(`month ${month} can be archived from ${from.toISOString()}`);
  const first = `${month}-01`;
  const [counted] = await rows<{ runtimes: number; unsettled: number }>(
    ds,
    `SELECT count(*)::int AS runtimes, count(*) FILTER (WHERE status NOT IN ('settled', 'voided'))::int AS unsettled
     FROM runtimes WHERE runtime_month(created_at) = $1::date`,
    [first],
  );
  if ((counted?.unsettled ?? 0) > 0) throw new ArchiveRefused(`month ${month} has ${counted!.unsettled} runtime(s) not settled`);
  return inTransaction(ds, async (em) => {
    await em.query(`LOCK TABLE runtime_events IN ACCESS EXCLUSIVE MODE`);
    const [partition] = await rows<{ name: string }>(
      em,
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = 'runtime_events'::regclass AND c.relname = 'runtime_events_' || to_char($1::date, 'YYYY_MM')`,
      [first],
    );
    if (!partition) throw new ArchiveRefused(`month ${month} has no partition attached (archived already, or never made)`);
    const [stray] = await rows<{ n: number }>(em, `SELECT count(*)::int AS n FROM runtime_events_default WHERE runtime_month = $1::date`, [
      first,
    ]);
    if ((stray?.n ?? 0) > 0) throw new ArchiveRefused(`month ${month} has ${stray!.n} event(s) in the default partition`);
    const archived: ArchivedMonth = { month, partition: partition.name, runtimes: counted?.runtimes ?? 0 };
    await em.query(`SELECT detach_runtime_events_partition($1::date)`, [first]);
    await em.query(`INSERT INTO event_month_archives (month, partition, runtimes) VALUES ($1::date, $2, $3)`, [
      first,
      archived.partition,
      archived.runtimes,
    ]);
    await audit.record(em, { actor: 'cli', action: 'events.month_archived', after: archived, at: now });
    return archived;
  });
}
