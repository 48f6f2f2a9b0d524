import { afterAll, describe, expect, it } from 'vitest';
import { advisoryKey } from '../../src/common/database/advisory-lock';
import { testConfig, uid, type Harness } from '../support/app';
import { startApp } from '../support/app';
import { eventually, produce } from '../support/kafka';

describe('two instances in one consumer group on one database', () => {
  const apps: Harness[] = [];
  afterAll(async () => {
    for (const a of apps) await a.close().catch(() => undefined);
  });

  it('share the partitions, take over when one dies, apply every event once, and run a job once at a time', async () => {
    const config = testConfig({}, { kafka: true });
    const shared = { groupId: config.kafka!.groupId, topics: config.topics };
    const env = {
      KAFKA_GROUP_ID: shared.groupId,
      KAFKA_TOPIC_LIFECYCLE: shared.topics.lifecycle,
      KAFKA_TOPIC_LIFECYCLE_DLQ: shared.topics.lifecycleDlq,
      KAFKA_TOPIC_MEMBERSHIP: shared.topics.membership,
      KAFKA_TOPIC_COMMANDS: shared.topics.commands,
      KAFKA_TOPIC_NOTIFICATIONS: shared.topics.notifications,
      KAFKA_SESSION_TIMEOUT_MS: '6000',
    };
    const a = await startApp({ kafka: true, env });
    const b = await startApp({ kafka: true, env });
    apps.push(a, b);
    const admin = await a.key('admin');

    // While one instance runs a job (its advisory lock held), neither instance starts it again.
    const holder = a.ds.createQueryRunner();
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock($1)', [advisoryKey('job:expiry-sweep')]);
    const blocked = await Promise.all([a, b].map((x) => x.request('POST', '/v1/admin/jobs/expiry-sweep/run', { key: admin })));
    expect(blocked.map((r) => r.body)).toEqual([
      { job: 'expiry-sweep', runId: expect.stringMatching(/^job_/), ran: false, reason: 'another instance is running it' },
      { job: 'expiry-sweep', runId: expect.stringMatching(/^job_/), ran: false, reason: 'another instance is running it' },
    ]);
    await holder.query('SELECT pg_advisory_unlock($1)', [advisoryKey('job:expiry-sweep')]);
    await holder.release();
    expect((await b.request('POST', '/v1/admin/jobs/expiry-sweep/run', { key: admin })).body.ran).toBe(true);

    const accounts = Array.from({ length: 8 }, () => uid('acc'));
    const send = async (round: number) =>
      produce(
        shared.topics.lifecycle,
        accounts.flatMap((accountId) =>
          Array.from({ length: 50 }, (_, i) => ({
            key: accountId,
            value: {
              id: `${accountId}_${round}_${i}`,
              type: 'runtime.heartbeat',
              occurredAt: new Date().toISOString(),
              accountId,
              runtimeId: `${accountId}_rt`,
              seq: round * 100 + i,
              data: {},
            },
          })),
        ),
      );
    const total = async () =>
      (
        await a.ds.query(`SELECT coalesce(sum(events_count), 0)::int AS n FROM runtimes WHERE runtime_id = ANY($1)`, [
          accounts.map((x) => `${x}_rt`),
        ])
      )[0].n as number;
    await send(1);
    await eventually(async () => (await total()) === 400, 60_000, 'the first round');

    // One instance dies; the other takes over its partitions.
    await b.close();
    apps.pop();
    await send(2);
    await eventually(async () => (await total()) === 800, 60_000, 'the second round after the rebalance');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await total()).toBe(800);
    // Heartbeats are counted by their runtime, each seq once, and not stored.
    const counted = await a.ds.query(`SELECT coalesce(sum(heartbeats), 0)::int AS n FROM runtimes WHERE runtime_id = ANY($1)`, [
      accounts.map((x) => `${x}_rt`),
    ]);
    expect(counted[0].n).toBe(800);
  });
});
