import { KafkaJSNonRetriableError } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { KafkajsBus } from '../../src/infra/kafka/kafkajs-bus';
import type { InboundMessage } from '../../src/infra/kafka/message-bus';
import { uid } from '../support/app';
import { busConfig, eventually, produce } from '../support/kafka';

describe('a consumer kafkajs gives up on', () => {
  const tag = uid('restart');
  const topic = `test.restart.${tag}`;
  const bus = new KafkajsBus(busConfig(tag, topic), { restartAfterMs: 500 });
  afterAll(async () => {
    await bus.onApplicationShutdown();
  });

  it('is started again after a non-retriable error, and the batch it failed on is handled then', async () => {
    const handled: string[] = [];
    let failures = 0;
    bus.subscribe({
      topic,
      handle: (batch: InboundMessage[]) => {
        // The first two deliveries fail as kafkajs does not retry (e.g. a send the broker refuses).
        if (failures < 2) {
          failures += 1;
          return Promise.reject(new KafkaJSNonRetriableError('refused for the test'));
        }
        handled.push(...batch.map((m) => m.value!.toString()));
        return Promise.resolve();
      },
    });
    await bus.onApplicationBootstrap();
    await produce(topic, [{ key: 'k', value: 'first' }]);
    await eventually(() => Promise.resolve(failures === 2 && bus.health().ok === false), 30_000, 'the consumer to crash twice');
    expect(bus.health().detail).toContain(`consumer crashed: ${topic}`);
    await eventually(() => Promise.resolve(handled.includes('first')), 60_000, 'the message after the restart');
    await produce(topic, [{ key: 'k', value: 'second' }]);
    await eventually(() => Promise.resolve(handled.includes('second')), 30_000, 'the next message');
    expect(handled).toEqual(['first', 'second']);
    expect(bus.health()).toMatchObject({ ok: true });
  });
});
