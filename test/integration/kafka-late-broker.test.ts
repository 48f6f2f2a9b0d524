import net from 'node:net';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { KafkajsBus } from '../../src/infra/kafka/kafkajs-bus';
import type { InboundMessage } from '../../src/infra/kafka/message-bus';
import { uid } from '../support/app';
import { busConfig, eventually, produce } from '../support/kafka';

/**
 * A broker unreachable when the service starts: the start does not wait for it (a broker outage must
 * not keep instances from serving reservations), and the bus connects once the broker is there. The
 * broker is reached through a port that refuses connections until a proxy opens on it.
 */
describe('a broker unreachable at start', () => {
  const [host, port] = inject('kafkaBrokers').split(',')[0]!.split(':') as [string, string];
  const tag = uid('late');
  const topic = `test.late.${tag}`;
  let proxy: net.Server | undefined;
  const sockets = new Set<net.Socket>();
  let bus: KafkajsBus | undefined;

  afterAll(async () => {
    await bus?.onApplicationShutdown();
    for (const s of sockets) s.destroy();
    if (proxy) await new Promise((resolve) => proxy!.close(resolve));
  });

  it('starts without it, says so in its health, and consumes once the broker answers', async () => {
    // A free port, closed again: nothing listens on it until the proxy opens.
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const bootstrap = (probe.address() as net.AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));

    bus = new KafkajsBus(busConfig(tag, topic, [`127.0.0.1:${bootstrap}`]), { startWaitMs: 1_000 });
    const handled: string[] = [];
    bus.subscribe({
      topic,
      handle: (batch: InboundMessage[]) => {
        handled.push(...batch.map((m) => m.value!.toString()));
        return Promise.resolve();
      },
    });
    const started = Date.now();
    await bus.onApplicationBootstrap();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(bus.health()).toMatchObject({ ok: false, detail: expect.stringContaining(`not connected to 127.0.0.1:${bootstrap}`) });
    await expect(bus.publish([{ topic, key: 'k', value: 'lost?' }])).rejects.toThrow();

    // The broker becomes reachable on the bootstrap address.
    proxy = net.createServer((client) => {
      const upstream = net.connect(Number(port), host);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => proxy!.listen(bootstrap, '127.0.0.1', resolve));
    await eventually(() => Promise.resolve(bus!.health().ok), 90_000, 'the bus to connect').catch((e: unknown) => {
      throw new Error(`${String(e)}: ${bus!.health().detail}`);
    });
    await produce(topic, [{ key: 'k', value: 'after' }]);
    await eventually(() => Promise.resolve(handled.includes('after')), 30_000, 'the message');
  });

  it('says in its health when the broker stops answering while nothing is sent, and when it answers again', async () => {
    // The bus's probe asks the bootstrap address; the connections it already has (straight to the
    // broker) stay up, so only the probe can tell. The proxy going away is the broker going away.
    const address = (proxy!.address() as net.AddressInfo).port;
    await bus!.onApplicationShutdown();
    bus = new KafkajsBus(busConfig(`${tag}b`, `${topic}.b`, [`127.0.0.1:${address}`]), { brokerProbeEveryMs: 300 });
    await bus.onApplicationBootstrap();
    await eventually(() => Promise.resolve(bus!.health().ok), 60_000, 'the bus to connect');
    const closed = new Promise((resolve) => proxy!.close(resolve));
    for (const s of sockets) s.destroy();
    await closed;
    await eventually(() => Promise.resolve(!bus!.health().ok), 10_000, 'the health to tell the outage');
    expect(bus.health().detail).toMatch(/^broker unreachable since \d{4}-/);
    await new Promise<void>((resolve) => proxy!.listen(address, '127.0.0.1', resolve));
    await eventually(() => Promise.resolve(bus!.health().ok), 10_000, 'the health to tell the broker is back');
  });
});
