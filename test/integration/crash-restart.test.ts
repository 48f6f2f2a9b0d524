import { afterAll, describe, expect, it } from 'vitest';
import { serviceTestEnv } from '../support/app';
import { eventually } from '../support/kafka';
import { startService, type ServiceProcess } from '../support/service-process';

/**
 * An instance started again after a crash: its consumers can rejoin their group only once the dead
 * instance's session ends (30 s by default, 20 s here), and reservations must not wait for that.
 */
describe('an instance restarted after a crash', () => {
  const running: ServiceProcess[] = [];
  afterAll(() => Promise.all(running.map((s) => s.stop())));

  const kafkaOf = async (s: ServiceProcess): Promise<{ ok: boolean; detail: string }> =>
    ((await (await fetch(`http://127.0.0.1:${s.port}/health/ready`)).json()) as { checks: { kafka: { ok: boolean; detail: string } } })
      .checks.kafka;

  it('serves within seconds, and its consumers join once the dead instance has left the group', async () => {
    // A session of 20 s (30 s by default): longer than the 15 s the start used to wait for the join.
    const env = serviceTestEnv({ KAFKA_SESSION_TIMEOUT_MS: '20000' });
    const first = await startService(env);
    running.push(first);
    await eventually(async () => (await kafkaOf(first)).ok, 60_000, 'the first instance to consume');
    first.child.kill('SIGKILL');
    await first.exited;

    const started = Date.now();
    const second = await startService(env);
    running.push(second);
    // Before: the start waited 15 s for the consumers to join, with the port closed.
    expect(Date.now() - started).toBeLessThan(12_000);
    expect(await kafkaOf(second)).toEqual({ ok: false, detail: expect.stringContaining('consumers joining their groups') });
    await eventually(async () => (await kafkaOf(second)).ok, 60_000, 'the consumers to join');
  });
});
