import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { serviceTestEnv, uid } from '../support/app';
import { eventually, kafka, produce } from '../support/kafka';
import { startService, type ServiceProcess } from '../support/service-process';

/**
 * SIGTERM while the Kafka consumer is in the middle of a batch (held on a database lock): the batch
 * is finished on the database, its offsets committed, the consumer leaves its group, and only then
 * does the database pool close (docs/operations.md, Shutdown). Were the pool closed first, the batch
 * would fail and its messages be delivered again to the next instance.
 */
describe('shutdown with a Kafka batch in flight', () => {
  let service: ServiceProcess | undefined;
  const db = new pg.Client({ connectionString: inject('databaseUrl') });
  const blocker = new pg.Client({ connectionString: inject('databaseUrl') });

  afterAll(async () => {
    await blocker.end().catch(() => undefined);
    await service?.stop();
    await db.end();
  });

  it('finishes and commits the batch in hand, then stops the consumer, then the database, and exits 0', async () => {
    await db.connect();
    await blocker.connect();
    // No schedules: the only statement waiting on the lock is the consumer's.
    const env = serviceTestEnv({ LOG_LEVEL: 'info', CRON_ENABLED: 'false' });
    const topic = env.KAFKA_TOPIC_LIFECYCLE!;
    const accountId = uid('acc');
    const runtimes = Array.from({ length: 10 }, () => uid('rt'));
    let seq = 0;
    const heartbeats = (ids: string[], each: number) =>
      ids.flatMap((runtimeId) =>
        Array.from({ length: each }, () => ({
          key: accountId,
          value: { id: uid('evt'), type: 'runtime.heartbeat', occurredAt: new Date().toISOString(), accountId, runtimeId, seq: seq++ },
        })),
      );
    const applied = async (): Promise<number> =>
      (await db.query('SELECT coalesce(sum(events_count), 0)::int AS n FROM runtimes WHERE runtime_id = ANY($1)', [runtimes])).rows[0]
        .n as number;

    service = await startService(env);
    // The consumer has joined and handles events: one goes through first.
    await produce(topic, heartbeats(runtimes.slice(0, 1), 1));
    await eventually(async () => (await applied()) === 1, 60_000, 'the first event applied');

    // The next batch waits on a lock held from outside, so it is surely in flight at SIGTERM.
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE runtimes IN EXCLUSIVE MODE');
    const batch = heartbeats(runtimes, 5);
    await produce(topic, batch);
    await eventually(
      async () =>
        (
          await db.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`,
            [(await blocker.query('SELECT pg_backend_pid() AS pid')).rows[0].pid],
          )
        ).rows[0].n > 0,
      30_000,
      'the batch waiting on the lock',
    );
    const sigterm = new Date().toISOString();
    service.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1_500));
    // Still draining: the process waits for the batch, which waits for the lock.
    expect(service.child.exitCode).toBeNull();
    await blocker.query('COMMIT');

    expect(await service.exited, service.output().slice(-3000)).toEqual({ code: 0, signal: null });
    // Every event of the batch applied, once.
    expect(await applied(), service.output().slice(-6000)).toBe(1 + batch.length);
    // Its offsets were committed before the consumer left: nothing is left for the next instance.
    const admin = kafka().admin();
    await admin.connect();
    try {
      const ends = new Map((await admin.fetchTopicOffsets(topic)).map((o) => [o.partition, o.high]));
      const [committed] = await admin.fetchOffsets({ groupId: env.KAFKA_GROUP_ID!, topics: [topic] });
      const written = committed!.partitions.filter((p) => ends.get(p.partition) !== '0');
      expect(written).toHaveLength(1);
      for (const p of written) expect([p.partition, p.offset]).toEqual([p.partition, ends.get(p.partition)]);
    } finally {
      await admin.disconnect();
    }
    const lines = service
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: string; msg: string; time: string });
    // Nothing went wrong while stopping (kafkajs may log a retried error while a new topic gets its leader at start).
    expect(lines.filter((l) => l.time >= sigterm && (l.level === 'error' || l.level === 'fatal'))).toEqual([]);
    expect(lines.filter((l) => l.msg === 'stopped')).toHaveLength(1);
  });
});

/**
 * An idle instance with Kafka: its consumers sit in a fetch the broker holds until messages come or
 * the fetch's wait ends, and a stop waits for that fetch. The wait is 1 s (kafkajs' default, 5 s, made
 * every idle stop take about 4.7 s here: docs/benchmarks.md, 2026-12-07).
 */
describe('shutdown of an idle instance with Kafka', () => {
  let service: ServiceProcess | undefined;
  const db = new pg.Client({ connectionString: inject('databaseUrl') });

  afterAll(async () => {
    await service?.stop();
    await db.end();
  });

  it('stops within 3 s of SIGTERM while its consumers wait for messages, exit 0', async () => {
    await db.connect();
    const env = serviceTestEnv({ LOG_LEVEL: 'info', CRON_ENABLED: 'false' });
    const accountId = uid('acc');
    const runtimeId = uid('rt');
    service = await startService(env);
    // The consumer has joined and handles events: one goes through, then nothing more comes.
    await produce(env.KAFKA_TOPIC_LIFECYCLE!, [
      {
        key: accountId,
        value: { id: uid('evt'), type: 'runtime.heartbeat', occurredAt: new Date().toISOString(), accountId, runtimeId, seq: 1 },
      },
    ]);
    await eventually(
      async () => (await db.query('SELECT 1 FROM runtimes WHERE runtime_id = $1', [runtimeId])).rowCount === 1,
      60_000,
      'the event applied',
    );
    // Once the event is applied the consumer asks for more, and the broker holds that fetch for its
    // whole wait: half a second in, about 4.5 s of a 5-s wait would be left, at most 0.5 s of 1 s.
    await new Promise((r) => setTimeout(r, 500));

    service.child.kill('SIGTERM');
    expect(await service.exited, service.output().slice(-3000)).toEqual({ code: 0, signal: null });
    const stopped = service
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; ms?: number })
      .find((l) => l.msg === 'stopped');
    expect(stopped?.ms).toBeLessThan(3_000);
  });
});
