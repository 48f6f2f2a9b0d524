import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/common/database/transaction';
import { ManualClock } from '../../src/infra/clock/clock';
import { runtimeMonthOf, sessionHistory } from '../../src/metering/session-history';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { pricedRateCardFile } from '../support/ancillary';
import { startAppOnFreshDatabase, uid, type FreshHarness } from '../support/app';
import { runCli } from '../support/cli';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';
import { ok } from '../support/requests';

const MIN = 60_000;
const t = (iso: string) => new Date(iso);

describe('runtime_events partitioned by the runtime month', () => {
  let db: FreshDatabase;
  let h: FreshHarness;
  let admin: string;
  let cp: string;
  const clock = new ManualClock(t('2031-01-31T23:30:00.000Z'));

  beforeAll(async () => {
    // Rates from January 2026: the archive's test runs in months before the shipped card's.
    h = await startAppOnFreshDatabase('partitions', { clock, env: { RATE_CARD_FILE: pricedRateCardFile('2026-01-01T00:00:00.000Z') } });
    db = h.db;
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(() => h?.close());

  const reserve = (accountId: string, runtimeId: string) =>
    ok(h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes: 120 } }), 201);
  const post = (body: unknown) => ok(h.request('POST', '/v1/events', { key: cp, body }));
  /** Where each stored event of a runtime is: its partition and its runtime month. */
  const placed = async (runtimeId: string) =>
    (await db.ds.query(
      `SELECT tableoid::regclass::text AS partition, runtime_month::text AS month FROM runtime_events WHERE runtime_id = $1 ORDER BY seq`,
      [runtimeId],
    )) as { partition: string; month: string }[];

  it('keeps a runtime in its month across the month end, moves a month out of the default partition, and still deduplicates', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    // Reserved on 31 January, no partition for January 2031 yet: its events go to the default partition.
    const january = uid('rt');
    await reserve(accountId, january);
    const started = lifecycle(accountId, january, 'runtime.started', t('2031-01-31T23:40:00.000Z'), 1);
    const terminated = lifecycle(accountId, january, 'runtime.terminated', t('2031-02-01T00:40:00.000Z'), 2, { reason: 'user' });
    expect(await post([started, terminated])).toMatchObject({ accepted: 2, duplicates: 0 });
    expect(await placed(january)).toEqual([
      { partition: 'runtime_events_default', month: '2031-01-01' },
      { partition: 'runtime_events_default', month: '2031-01-01' },
    ]);

    // The job creates this month's partition and the next two, taking January's rows out of the default.
    const run = await ok(h.request('POST', '/v1/admin/jobs/event-partitions/run', { key: admin }));
    expect(run.result.created).toEqual([
      { month: '2031-01', moved: 2 },
      { month: '2031-02', moved: 0 },
      { month: '2031-03', moved: 0 },
    ]);
    expect(run.result.inDefault).toBe(0);
    expect(await placed(january)).toEqual([
      { partition: 'runtime_events_2031_01', month: '2031-01-01' },
      { partition: 'runtime_events_2031_01', month: '2031-01-01' },
    ]);
    // The session read: by the month the ingest knows, or through the runtime's row when it is not given.
    const read = (runtimes: { id: string; month?: string }[]) =>
      inTransaction(db.ds, async (em) =>
        [...(await sessionHistory(em, runtimes)).entries()].map(([id, es]) => [id, es.map((e) => e.id).sort()]),
      );
    expect(await read([{ id: january, month: '2031-01-01' }])).toEqual([[january, [started.id, terminated.id].sort()]]);
    expect(await read([{ id: january }])).toEqual([[january, [started.id, terminated.id].sort()]]);
    expect(await read([{ id: january, month: '2031-02-01' }])).toEqual([]);
    // A second run has nothing to do.
    expect((await ok(h.request('POST', '/v1/admin/jobs/event-partitions/run', { key: admin }))).result.created).toEqual([]);

    // Redelivered after the move: still duplicates, the charge (one hour of small, 1.000000) stands once.
    expect(await post([started, terminated])).toMatchObject({ accepted: 0, duplicates: 2 });
    expect(await ok(h.request('GET', `/v1/reservations/${january}`, { key: cp }))).toMatchObject({
      status: 'settled',
      charged: '1.000000',
      runningSeconds: 3600,
      intervals: [{ from: started.occurredAt, to: terminated.occurredAt }],
    });

    // Reserved on 1 February: its own month's partition. An event id reused by it (a runtime of
    // another month) is its own event there: stored and applied (docs/contract-changes.md).
    clock.set(t('2031-02-01T00:50:00.000Z'));
    const february = uid('rt');
    await reserve(accountId, february);
    const reused = { ...lifecycle(accountId, february, 'runtime.started', t('2031-02-01T00:55:00.000Z'), 1), id: started.id };
    const end = lifecycle(accountId, february, 'runtime.terminated', t('2031-02-01T01:25:00.000Z'), 2, { reason: 'user' });
    expect(await post([reused, end])).toMatchObject({ accepted: 2, duplicates: 0 });
    expect(await placed(february)).toEqual([
      { partition: 'runtime_events_2031_02', month: '2031-02-01' },
      { partition: 'runtime_events_2031_02', month: '2031-02-01' },
    ]);
    expect(await ok(h.request('GET', `/v1/reservations/${february}`, { key: cp }))).toMatchObject({
      status: 'settled',
      charged: '0.500000',
    });
    // 10 - 1 - 0.5, nothing held.
    expect(await ok(h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin }))).toMatchObject({
      total: '8.500000',
      held: '0.000000',
    });
  });

  it('gives a runtime first seen through its events a row before storing them, in the month of that row', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const runtimeId = uid('rt');
    const at = clock.now();
    const paused = lifecycle(accountId, runtimeId, 'runtime.paused', new Date(at.getTime() + MIN), 2);
    expect(await post([paused])).toMatchObject({ accepted: 1 });
    const [row] = await db.ds.query(`SELECT account_id, runtime_month(created_at)::text AS month FROM runtimes WHERE runtime_id = $1`, [
      runtimeId,
    ]);
    expect(row.account_id).toBe(accountId);
    expect(await placed(runtimeId)).toEqual([{ partition: `runtime_events_${row.month.slice(0, 7).replace('-', '_')}`, month: row.month }]);
    // Another account's event for that runtime is refused: the row's account owns it.
    const other = await fundedAccount(h, admin, { credits: '1.000000' });
    const foreign = await h.request('POST', '/v1/events', { key: cp, body: [lifecycle(other, runtimeId, 'runtime.resumed', at, 3)] });
    expect(foreign.status).toBe(400);
    expect(await placed(runtimeId)).toHaveLength(1);
  });

  it('archives a settled month: its partition detached and kept, the events of its runtimes refused; a recent or unsettled month is refused', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const archive = (month: string) => runCli(resolve('dist'), ['events', 'archive', month], { DATABASE_URL: db.url });
    // September 2026: a runtime runs half an hour and is settled; its events wait in the default partition.
    clock.set(t('2026-09-10T10:00:00.000Z'));
    const september = uid('rt');
    await reserve(accountId, september);
    const events = [
      lifecycle(accountId, september, 'runtime.started', t('2026-09-10T10:05:00.000Z'), 1),
      lifecycle(accountId, september, 'runtime.terminated', t('2026-09-10T10:35:00.000Z'), 2, { reason: 'user' }),
    ];
    await post(events);
    const made = await ok(h.request('POST', '/v1/admin/jobs/event-partitions/run', { key: admin }));
    expect(made.result.created).toEqual([
      { month: '2026-09', moved: 2 },
      { month: '2026-10', moved: 0 },
      { month: '2026-11', moved: 0 },
    ]);
    // Another September runtime, still running: the month cannot be archived yet.
    const running = uid('rt');
    await reserve(accountId, running);
    await post([lifecycle(accountId, running, 'runtime.started', t('2026-09-10T10:01:00.000Z'), 1)]);
    const unsettled = await archive('2026-09');
    expect(unsettled.code, unsettled.stderr).toBe(1);
    expect(unsettled.stderr).toContain('month 2026-09 has 1 runtime(s) not settled');
    await post([lifecycle(accountId, running, 'runtime.terminated', t('2026-09-10T11:01:00.000Z'), 2, { reason: 'user' })]);
    // October ended on 1 November: archived from 1 January, two calendar months later.
    const recent = await archive('2026-10');
    expect(recent.code).toBe(1);
    expect(recent.stderr).toContain('month 2026-10 can be archived from 2027-01-01T00:00:00.000Z');
    expect((await archive('September')).code).toBe(2);

    const done = await archive('2026-09');
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toEqual({ month: '2026-09', partition: 'runtime_events_2026_09', runtimes: 2 });
    // The detached table keeps the month's events, to dump and drop; the service no longer sees them.
    expect((await db.ds.query(`SELECT count(*)::int AS n FROM runtime_events_2026_09`))[0].n).toBe(4);
    expect(await placed(september)).toEqual([]);
    expect(await db.ds.query(`SELECT after FROM audit_log WHERE action = 'events.month_archived'`)).toEqual([
      { after: { month: '2026-09', partition: 'runtime_events_2026_09', runtimes: 2 } },
    ]);
    // A late copy of its events is refused, naming the runtime; its charge stands.
    const late = await h.request('POST', '/v1/events', { key: cp, body: events });
    expect(late.status).toBe(400);
    expect(JSON.stringify(late.body)).toContain(`runtime ${september} is of 2026-09, whose events are archived`);
    expect(await ok(h.request('GET', `/v1/reservations/${september}`, { key: cp }))).toMatchObject({
      status: 'settled',
      charged: '0.500000',
    });
    const again = await archive('2026-09');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('month 2026-09 has no partition attached');
  });
});

describe('the runtime month', () => {
  it('is the same in the service (the sweeper reads by it) as runtime_month() in the database, at month ends too', async () => {
    const db = await freshDatabase('runtime_month');
    try {
      const instants = ['2026-11-30T23:59:59.999Z', '2026-12-01T00:00:00.000Z', '2028-02-29T12:00:00.000Z', '2030-12-31T23:59:59.999Z'];
      for (let i = 0; i < 200; i++) {
        instants.push(new Date(Date.UTC(2026, 0, 1) + Math.floor(Math.random() * 5 * 365 * 86_400_000)).toISOString());
      }
      const found = await db.ds.query(
        `SELECT runtime_month(at)::text AS month FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(at, n) ORDER BY n`,
        [instants],
      );
      expect(found.map((r: { month: string }) => r.month)).toEqual(instants.map((at) => runtimeMonthOf(new Date(at))));
    } finally {
      await db.drop();
    }
  });
});

describe('the migration to partitions', () => {
  /** Reverts the migrations applied after `name`, then `name` itself. */
  const undoThrough = async (db: FreshDatabase, name: string): Promise<void> => {
    for (;;) {
      const [last] = (await db.ds.query(`SELECT name FROM schema_migrations ORDER BY id DESC LIMIT 1`)) as { name: string }[];
      await db.ds.undoLastMigration();
      if (last?.name === name) return;
    }
  };
  const PARTITIONS = 'RuntimeEventsByRuntimeMonth1796469101118';

  it('copies every stored event with its runtime month, and back', async () => {
    const db = await freshDatabase('partition_migration');
    try {
      await undoThrough(db, PARTITIONS);
      await db.ds.query(
        `INSERT INTO runtimes (runtime_id, account_id, status, created_at) VALUES
           ('rt_nov', 'acc_1', 'settled', '2026-11-30T23:59:59.999Z'), ('rt_dec', 'acc_1', 'running', '2026-12-01T00:00:00Z')`,
      );
      await db.ds.query(
        `INSERT INTO runtime_events (id, type, account_id, runtime_id, occurred_at, seq) VALUES
           ('e1', 'runtime.started', 'acc_1', 'rt_nov', '2026-12-01T00:00:01Z', 1),
           ('e2', 'runtime.terminated', 'acc_1', 'rt_nov', '2026-12-02T00:00:00Z', 2),
           ('e3', 'runtime.started', 'acc_1', 'rt_dec', '2026-12-01T00:00:02Z', 1),
           ('e4', 'runtime.started', 'acc_1', 'rt_gone', '2026-10-15T00:00:00Z', 1)`,
      );
      await db.ds.runMigrations();
      expect(
        await db.ds.query(`SELECT id, runtime_month::text AS month, tableoid::regclass::text AS partition FROM runtime_events ORDER BY id`),
      ).toEqual([
        { id: 'e1', month: '2026-11-01', partition: 'runtime_events_2026_11' },
        { id: 'e2', month: '2026-11-01', partition: 'runtime_events_2026_11' },
        { id: 'e3', month: '2026-12-01', partition: 'runtime_events_2026_12' },
        // No runtime row (none is ever deleted): the month of the event itself.
        { id: 'e4', month: '2026-10-01', partition: 'runtime_events_2026_10' },
      ]);
      await undoThrough(db, PARTITIONS);
      expect(await db.ds.query(`SELECT id, runtime_id FROM runtime_events ORDER BY id`)).toEqual([
        { id: 'e1', runtime_id: 'rt_nov' },
        { id: 'e2', runtime_id: 'rt_nov' },
        { id: 'e3', runtime_id: 'rt_dec' },
        { id: 'e4', runtime_id: 'rt_gone' },
      ]);
    } finally {
      await db.drop();
    }
  });
});
