import net from 'node:net';
import type { ISocketFactory } from 'kafkajs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { KafkajsBus } from '../../src/infra/kafka/kafkajs-bus';
import { uid } from '../support/app';
import { busConfig, eventually, readTopic } from '../support/kafka';

/**
 * The broker goes away while the bus is connected (docs/operations.md, "Running it" and
 * DlBillingOutboxStale): health says so within about 5 s even when nothing is sent, and a send gives
 * up within seconds (the outbox keeps the message for the relay's next try) instead of holding the
 * relay's transaction for minutes. The bus's connections go through a proxy the test closes.
 */
describe('a broker lost while the bus is connected', () => {
  const tag = uid('lost');
  const topic = `test.lost.${tag}`;
  let bus: KafkajsBus | undefined;
  let proxy: net.Server | undefined;

  afterAll(async () => {
    await bus?.onApplicationShutdown();
    await new Promise((resolve) => (proxy?.listening ? proxy.close(resolve) : resolve(undefined)));
  });

  it('is told by health within seconds, a send gives up within seconds, and both recover once it answers', async () => {
    // A proxy in front of the broker that every connection of the bus goes through, whatever address
    // it dials: closing it drops them all (each ends as when a broker stops) and refuses new ones.
    const [host, port] = inject('kafkaBrokers').split(',')[0]!.split(':') as [string, string];
    const sides = new Set<net.Socket>();
    proxy = net.createServer((client) => {
      const upstream = net.connect(Number(port), host);
      for (const s of [client, upstream]) {
        sides.add(s);
        s.on('error', () => undefined);
        s.on('close', () => sides.delete(s));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => proxy!.listen(0, '127.0.0.1', resolve));
    const address = (proxy.address() as net.AddressInfo).port;
    const socketFactory: ISocketFactory = ({ onConnect }) => net.connect({ host: '127.0.0.1', port: address }, onConnect);
    bus = new KafkajsBus(busConfig(tag, topic), { socketFactory });
    await bus.onApplicationBootstrap();
    await eventually(() => Promise.resolve(bus!.health().ok), 60_000, 'the bus to connect');
    await bus.publish([{ topic, key: 'k', value: 'before' }]);

    const stopped = new Promise((resolve) => proxy!.close(resolve));
    for (const s of sides) s.destroy();
    await stopped;
    const lost = Date.now();
    await eventually(() => Promise.resolve(bus!.health().detail.startsWith('broker unreachable since')), 20_000, 'the health to tell');
    // The probe asks every 5 s, and fails at once.
    expect(Date.now() - lost).toBeLessThan(8_000);

    const sending = Date.now();
    await expect(bus.publish([{ topic, key: 'k', value: 'during' }])).rejects.toThrow();
    expect(Date.now() - sending).toBeLessThan(10_000);
    expect(bus.health().detail).toMatch(/^publishing fails since \d{4}-/);

    await new Promise<void>((resolve) => proxy!.listen(address, '127.0.0.1', resolve));
    await bus.publish([{ topic, key: 'k', value: 'after' }]);
    await eventually(() => Promise.resolve(bus!.health().ok), 20_000, 'the health to tell the broker is back');
    const values = (await readTopic(topic, 2)).map((m) => m.value);
    expect(values).toEqual(['before', 'after']);
  }, 120_000);
});
