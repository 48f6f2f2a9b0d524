import type { DataSource } from 'typeorm';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditService } from '../../src/audit/audit.service';
import { dataSourceOptions } from '../../src/common/database/data-source';
import { openDataSource } from '../../src/common/database/database.module';
import { SystemClock } from '../../src/infra/clock/clock';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';

const MIGRATION = 'AuditTimeRange1796593348210';
/** How long a hold may take here, on a loaded machine; one queued behind the build waits for ever. */
const HOLD_MS = 10_000;

/** The index's state, or null when there is none. */
async function timeIndex(ds: DataSource): Promise<{ valid: boolean; definition: string } | null> {
  const [row] = (await ds.query(
    `SELECT indisvalid AS valid, pg_get_indexdef(indexrelid) AS definition FROM pg_index WHERE indexrelid = to_regclass('public.audit_log_at_idx')`,
  )) as { valid: boolean; definition: string }[];
  return row ?? null;
}

/** Resolves with `work`'s result, or with 'still waiting' after `ms`. */
async function within<T>(ms: number, work: Promise<T>): Promise<T | 'still waiting'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still waiting'>((resolve) => (timer = setTimeout(() => resolve('still waiting'), ms)));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Fails unless `work` ends within 60 s (a start that waits for ever would not). */
async function expectEnds(what: string, work: Promise<unknown>): Promise<void> {
  expect(
    await within(
      60_000,
      work.then(() => `${what} ended`),
    ),
  ).toBe(`${what} ended`);
}

async function until(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The migration that builds the audit log's index by time (`audit_log_at_idx`), run as an instance
 * runs it at start (openDataSource: under the migrations' advisory lock), on a database where it has
 * not run yet: the index dropped and the migration's record removed.
 */
describe('the migration of the audit index by time', () => {
  let db: FreshDatabase | undefined;
  /** The instances started, and the starts (one that waits for ever ends with the database). */
  const started: DataSource[] = [];
  const starts: Promise<unknown>[] = [];

  afterEach(async () => {
    for (const ds of started.splice(0)) await ds.destroy();
    await db?.drop();
    db = undefined;
    await Promise.all(starts.splice(0));
  });

  async function unapplied(prefix: string): Promise<{ db: FreshDatabase; audit: AuditService }> {
    db = await freshDatabase(prefix, 4);
    await db.ds.query(`DROP INDEX "public"."audit_log_at_idx"`);
    await db.ds.query(`DELETE FROM schema_migrations WHERE name = $1`, [MIGRATION]);
    return { db, audit: new AuditService(db.ds, new SystemClock()) };
  }

  /** An instance starting on the database: it migrates, as the service does. */
  function start(on: FreshDatabase): Promise<DataSource> {
    const ds = openDataSource(dataSourceOptions(on.url, 2));
    starts.push(ds.then((opened) => started.push(opened)).catch(() => undefined));
    return ds;
  }

  /** A hold's audit row, in a transaction of its own, committed. */
  async function hold(ds: DataSource, audit: AuditService, accountId: string): Promise<'written'> {
    await ds.transaction((em) => audit.record(em, { actor: 'key:test', action: 'hold.placed', accountId }));
    return 'written';
  }

  /** A writer's transaction, open, with an audit row written: the build must wait for it. */
  async function openWriter(ds: DataSource, audit: AuditService) {
    const writer = ds.createQueryRunner();
    await writer.connect();
    await writer.startTransaction();
    await audit.record(writer.manager, { actor: 'key:test', action: 'hold.placed', accountId: 'acc_open' });
    return writer;
  }

  /**
   * Runs `work` while a writer's transaction is open (`openWriter`), then commits it, whatever `work`
   * did. What `work` returns is handed back after the commit: a start it began (a promise inside the
   * object it returns, not awaited here) goes on after it.
   */
  async function whileWriterOpen<T extends object>(on: FreshDatabase, audit: AuditService, work: () => Promise<T>): Promise<T> {
    const writer = await openWriter(on.ds, audit);
    try {
      return await work();
    } finally {
      await writer.commitTransaction();
      await writer.release();
    }
  }

  /** Whether a backend of the database is waiting on a lock in a statement about the index. */
  const buildWaits = (on: FreshDatabase) => async () =>
    (
      (await on.ds.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND query LIKE '%audit_log_at_idx%'`,
      )) as { n: number }[]
    )[0]!.n > 0;

  it('lets holds write their audit rows while the index is built, and ends with a valid index', async () => {
    const { db, audit } = await unapplied('audit_index_holds');
    const { migrating } = await whileWriterOpen(db, audit, async () => {
      const migrating = start(db);
      await until('the build to wait for the open writer', buildWaits(db));

      // A new hold meanwhile: a plain CREATE INDEX would have queued it behind its ShareLock.
      expect(await within(HOLD_MS, hold(db.ds, audit, 'acc_new'))).toBe('written');
      expect(await timeIndex(db.ds)).toMatchObject({ valid: false });
      return { migrating };
    });
    await expectEnds('the migration', migrating);
    expect(await timeIndex(db.ds)).toEqual({ valid: true, definition: expect.stringContaining('USING btree (at, id)') as string });
    expect(await db.ds.query(`SELECT name FROM schema_migrations WHERE name = $1`, [MIGRATION])).toHaveLength(1);
    expect(await db.ds.query(`SELECT account_id FROM audit_log ORDER BY at, id`)).toEqual([
      { account_id: 'acc_open' },
      { account_id: 'acc_new' },
    ]);
  });

  it('finishes while a second instance starts and waits for the migrations', async () => {
    const { db, audit } = await unapplied('audit_index_two_starts');
    const { both } = await whileWriterOpen(db, audit, async () => {
      const first = start(db);
      await until('the build to wait for the open writer', buildWaits(db));
      const second = start(db);
      // Both instances have asked for the migrations' lock (the first holds it).
      await until('the second instance to ask for the lock', async () => {
        const [row] = (await db.ds.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '%advisory_lock(%'`,
        )) as { n: number }[];
        return row!.n >= 2;
      });
      return { both: Promise.all([first, second]) };
    });
    // The build then waits for every older snapshot: a start that waits inside a statement would
    // keep one open, waiting for the lock the first instance releases only after the build.
    await expectEnds('both starts', both);
    expect(await timeIndex(db.ds)).toMatchObject({ valid: true });
  });

  it('replaces the invalid index a failed concurrent build left', async () => {
    const { db, audit } = await unapplied('audit_index_leftover');
    // A build cancelled while it waited for a writer (a deploy stopped, a statement timeout).
    const writer = await openWriter(db.ds, audit);
    const builder = db.ds.createQueryRunner();
    try {
      await builder.query(`SET statement_timeout = 500`);
      await expect(builder.query(`CREATE INDEX CONCURRENTLY "audit_log_at_idx" ON "audit_log" ("at", "id")`)).rejects.toThrow(
        /statement timeout/,
      );
    } finally {
      await builder.query(`RESET statement_timeout`);
      await builder.release();
      await writer.rollbackTransaction();
      await writer.release();
    }
    expect(await timeIndex(db.ds)).toMatchObject({ valid: false });

    await start(db);
    expect(await timeIndex(db.ds)).toMatchObject({ valid: true });
    expect(await db.ds.query(`SELECT name FROM schema_migrations WHERE name = $1`, [MIGRATION])).toHaveLength(1);
  });

  it('keeps a valid index built by a run that stopped before recording the migration', async () => {
    const { db } = await unapplied('audit_index_recorded');
    await db.ds.query(`CREATE INDEX "audit_log_at_idx" ON "audit_log" ("at", "id")`);
    const before = (await db.ds.query(`SELECT to_regclass('public.audit_log_at_idx')::oid::text AS oid`)) as { oid: string }[];

    await start(db);
    expect(await db.ds.query(`SELECT to_regclass('public.audit_log_at_idx')::oid::text AS oid`)).toEqual(before);
    expect(await timeIndex(db.ds)).toMatchObject({ valid: true });
    expect(await db.ds.query(`SELECT name FROM schema_migrations WHERE name = $1`, [MIGRATION])).toHaveLength(1);
  });
});
