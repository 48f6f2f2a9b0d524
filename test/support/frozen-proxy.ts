import net from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that can stop passing bytes, as a frozen server or a network
 * partition does: connections stay open, nothing is answered. What was sent meanwhile waits in the
 * sockets' buffers and goes on when it thaws (a connection the client closed meanwhile then closes).
 */
export class FrozenProxy {
  private frozen = false;
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
    private readonly target: URL,
  ) {}

  /** Listens on 127.0.0.1:`port` (0: any free port) and passes connections on to the database of `url`. */
  static async start(url: string, port = 0): Promise<FrozenProxy> {
    const target = new URL(url);
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    const proxy = new FrozenProxy(server, (server.address() as net.AddressInfo).port, target);
    server.on('connection', (client) => proxy.accept(client));
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  url(): string {
    const via = new URL(this.target);
    via.host = `127.0.0.1:${this.port}`;
    return via.toString();
  }

  freeze(): void {
    this.frozen = true;
    for (const s of this.sockets) s.pause();
  }

  thaw(): void {
    this.frozen = false;
    for (const s of this.sockets) s.resume();
  }

  async close(): Promise<void> {
    this.thaw();
    const closed = new Promise((resolve) => this.server.close(resolve));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  private accept(client: net.Socket): void {
    const upstream = net.connect(Number(this.target.port || 5432), this.target.hostname);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => this.sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
    if (this.frozen) [client, upstream].forEach((s) => s.pause());
  }
}
