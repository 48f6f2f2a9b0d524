import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { serviceTestEnv, uid } from '../support/app';
import { eventually, produce } from '../support/kafka';
import { startService, type ServiceProcess } from '../support/service-process';

describe('a crash between the database commit and the offset commit', () => {
  const running: ServiceProcess[] = [];
  const db = new pg.Client({ connectionString: inject('databaseUrl') });

  afterAll(async () => {
    await Promise.all(running.map((s) => s.stop()));
    await db.end();
  });

  it('leaves no double effect after restart', async () => {
    await db.connect();
    const env = serviceTestEnv({});
    const topics = { lifecycle: env.KAFKA_TOPIC_LIFECYCLE! };
    const runtimes = Array.from({ length: 20 }, () => uid('rt'));
    const events = runtimes.flatMap((runtimeId) =>
      Array.from({ length: 25 }, (_, i) => ({
        key: 'acc_crash',
        value: {
          id: uid('evt'),
          type: 'runtime.heartbeat',
          occurredAt: new Date().toISOString(),
          accountId: 'acc_crash',
          runtimeId,
          seq: i,
        },
      })),
    );
    await produce(topics.lifecycle, events);

    // The first instance commits its first batch to the database, then is SIGKILLed before its offsets move.
    const doomed = await startService({ ...env, BILLING_FAULT_KILL_AFTER_BATCH: '1' }, 60_000, false);
    running.push(doomed);
    const exit = await doomed.exited;
    expect(exit.signal).toBe('SIGKILL');
    const committed = await db.query('SELECT coalesce(sum(events_count), 0)::int AS n FROM runtimes WHERE runtime_id = ANY($1)', [
      runtimes,
    ]);
    expect(committed.rows[0].n).toBeGreaterThan(0);

    // The restarted instance gets the same messages again: the inbox makes them a no-op.
    const restarted = await startService(env);
    running.push(restarted);
    await eventually(
      async () =>
        (await db.query('SELECT coalesce(sum(events_count), 0)::int AS n FROM runtimes WHERE runtime_id = ANY($1)', [runtimes])).rows[0]
          .n === events.length,
      60_000,
      'all events applied',
    );
    await new Promise((r) => setTimeout(r, 1_000));
    const counts = await db.query(
      'SELECT sum(events_count)::int AS n, count(*)::int AS runtimes FROM runtimes WHERE runtime_id = ANY($1)',
      [runtimes],
    );
    expect(counts.rows[0]).toEqual({ n: events.length, runtimes: runtimes.length });
  });
});
