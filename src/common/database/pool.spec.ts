import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoalescingSocket } from './pool';

describe('CoalescingSocket', () => {
  const received: Buffer[] = [];
  const server = createServer((peer: Socket) => peer.on('data', (chunk: Buffer) => received.push(chunk)));
  beforeAll(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });
  afterAll(() => {
    server.close();
  });

  /** A connected socket whose writes to the system (stream `_write`/`_writev` calls) are counted. */
  async function counted(): Promise<{ socket: CoalescingSocket; writes: () => number }> {
    const socket = new CoalescingSocket();
    socket.connect((server.address() as AddressInfo).port, '127.0.0.1');
    await once(socket, 'connect');
    let writes = 0;
    const write = socket._write.bind(socket);
    const writev = socket._writev!.bind(socket);
    socket._write = (...args) => (writes++, write(...args));
    socket._writev = (...args) => (writes++, writev(...args));
    return { socket, writes: () => writes };
  }

  it('sends the queries pg writes corked in one turn of the event loop (a pipelined round trip) in one write', async () => {
    received.length = 0;
    const { socket, writes } = await counted();
    socket.cork();
    socket.write('BEGIN;');
    socket.uncork();
    socket.cork();
    socket.write('parse;');
    socket.write('bind;');
    socket.uncork();
    socket.cork();
    socket.write('sync;');
    socket.uncork();
    await new Promise((resolve) => setImmediate(resolve));
    const afterTheTurn = writes();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(Buffer.concat(received).toString()).toBe('BEGIN;parse;bind;sync;');
    expect(afterTheTurn).toBe(1);
    socket.destroy();
  });

  it('still sends a write made alone, at the end of its turn', async () => {
    received.length = 0;
    const { socket, writes } = await counted();
    socket.write('SELECT 1;');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(writes()).toBe(1);
    expect(Buffer.concat(received).toString()).toBe('SELECT 1;');
    socket.destroy();
  });
});
