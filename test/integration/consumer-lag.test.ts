import { afterAll, describe, expect, it } from 'vitest';
import { KafkajsBus } from '../../src/infra/kafka/kafkajs-bus';
import type { ConsumerLag, InboundMessage } from '../../src/infra/kafka/message-bus';
import { uid } from '../support/app';
import { busConfig, eventually, produce } from '../support/kafka';

/** A consumer stuck on a batch reports no batch: its lag is read from the broker meanwhile. */
describe("a stuck consumer's lag", () => {
  const tag = uid('lag');
  const topic = `test.lag.${tag}`;
  let release: () => void = () => undefined;
  const seen: ConsumerLag[][] = [];
  const bus = new KafkajsBus(busConfig(tag, topic), { observeBrokerLag: (lags) => seen.push(lags), brokerLagEveryMs: 500 });
  afterAll(async () => {
    release();
    await bus.onApplicationShutdown();
  });

  it('rises to the messages waiting while the handler does not return, and falls to 0 once it does', async () => {
    const stuck = new Promise<void>((resolve) => (release = resolve));
    bus.subscribe({ topic, handle: (_batch: InboundMessage[]) => stuck });
    await bus.onApplicationBootstrap();
    await produce(
      topic,
      Array.from({ length: 50 }, (_, i) => ({ key: 'k', value: `m${i}` })),
    );
    const lagOf = (lags: ConsumerLag[] | undefined) => (lags ?? []).filter((l) => l.topic === topic).reduce((n, l) => n + l.lag, 0);
    await eventually(() => Promise.resolve(lagOf(seen.at(-1)) === 50), 30_000, 'the broker to show 50 messages behind');
    release();
    await eventually(() => Promise.resolve(seen.length > 0 && lagOf(seen.at(-1)) === 0), 30_000, 'the lag to fall to 0');
    expect(lagOf(seen.at(-1))).toBe(0);
  });
});
