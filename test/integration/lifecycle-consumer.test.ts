import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, uid, type Harness } from '../support/app';
import { eventually, produce, readTopic } from '../support/kafka';

function event(runtimeId: string, type = 'runtime.heartbeat', seq = 1) {
  return {
    id: uid('evt'),
    type,
    occurredAt: new Date().toISOString(),
    accountId: 'acc_consumer',
    runtimeId,
    seq,
    data: {},
  };
}

async function eventsCount(h: Harness, runtimeId: string): Promise<number> {
  const rows: { events_count: number }[] = await h.ds.query('SELECT events_count FROM runtimes WHERE runtime_id = $1', [runtimeId]);
  return rows[0]?.events_count ?? 0;
}

describe('lifecycle consumer on the real broker', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startApp({ kafka: true });
  });
  afterAll(() => h.close());

  it('parks poison messages in the dead-letter topic with their reason and applies the good ones after them', async () => {
    const runtimeId = uid('rt');
    const good = event(runtimeId);
    const topics = h.config.kafka!.topics;
    await produce(topics.lifecycle, [
      { key: 'acc_consumer', value: 'this is not JSON' },
      { key: 'acc_consumer', value: { ...event(runtimeId), type: 'runtime.exploded' } },
      { key: 'acc_consumer', value: { id: uid('evt'), type: 'runtime.started' } },
      { key: 'acc_consumer', value: { ...event(runtimeId), seq: -1 } },
      { key: 'acc_consumer', value: { ...event(runtimeId), occurredAt: '9999-01-01T00:00:00.000Z' } },
      { key: 'acc_consumer', value: good },
    ]);

    await eventually(async () => (await eventsCount(h, runtimeId)) === 1, 30_000, 'the good event');
    const dlq = await readTopic(topics.lifecycleDlq, 5);
    expect(dlq).toHaveLength(5);
    const reasons = dlq.map((m) => m.headers['x-dlq-reason']);
    expect(reasons[0]).toMatch(/not JSON/);
    expect(reasons[1]).toMatch(/type/);
    expect(reasons[2]).toMatch(/occurredAt.*accountId.*runtimeId.*seq|accountId/);
    expect(reasons[3]).toMatch(/seq: must not be negative/);
    expect(reasons[4]).toMatch(/occurredAt/);
    expect(dlq.every((m) => m.headers['x-dlq-code'] === 'DL_BILLING_REQUEST_INVALID')).toBe(true);
    expect(dlq[0]?.value).toBe('this is not JSON');
    const stored = await h.ds.query('SELECT id FROM runtime_events WHERE runtime_id = $1', [runtimeId]);
    expect(stored).toEqual([{ id: good.id }]);
  });

  it('applies a duplicated event id once, whether it comes twice from Kafka or again over HTTP', async () => {
    const runtimeId = uid('rt');
    const first = event(runtimeId, 'runtime.heartbeat', 1);
    const second = event(runtimeId, 'runtime.heartbeat', 2);
    await produce(h.config.kafka!.topics.lifecycle, [
      { key: 'acc_consumer', value: first },
      { key: 'acc_consumer', value: first },
      { key: 'acc_consumer', value: second },
    ]);
    await eventually(async () => (await eventsCount(h, runtimeId)) >= 2, 30_000, 'both events');
    const key = await h.key('control-plane');
    const again = await h.request('POST', '/v1/events', { key, body: first });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ accepted: 0, duplicates: 1 });
    await new Promise((r) => setTimeout(r, 500));
    expect(await eventsCount(h, runtimeId)).toBe(2);
  });
});
