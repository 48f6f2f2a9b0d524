import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../support/service-process';

const run = promisify(execFile);
const SCRIPT = resolve('scripts/kafka/kafka.sh');

/**
 * A Kafka broker of the suite's own (the project's script on free ports, data in a temporary
 * directory): the shared one must not be restarted under other tests. The script runs
 * asynchronously, so the load keeps flowing while the broker stops and starts.
 */
export class PrivateKafka {
  private constructor(
    private readonly env: NodeJS.ProcessEnv,
    readonly dataDir: string,
    readonly port: number,
  ) {}

  static async start(): Promise<PrivateKafka> {
    // The controller listens on port + 1: look for a pair that is free.
    let port = await freePort();
    for (let i = 0; i < 20 && !(await isFree(port + 1)); i++) port = await freePort();
    const dataDir = await mkdtemp(join(tmpdir(), 'billing-faults-kafka-'));
    const env = {
      ...process.env,
      KAFKA_PORT: String(port),
      KAFKA_CONTROLLER_PORT: String(port + 1),
      KAFKA_DATA_DIR: dataDir,
      KAFKA_PARTITIONS: '4',
      KAFKA_HEAP_OPTS: '-Xmx384m -Xms128m',
    };
    const broker = new PrivateKafka(env, dataDir, port);
    await broker.script('start');
    return broker;
  }

  get brokers(): string {
    return `127.0.0.1:${this.port}`;
  }

  /**
   * Kills the broker (SIGKILL: no controlled shutdown, so the next start recovers its logs), keeps it
   * down for `downMs`, and starts it again on the same data.
   */
  async crashAndRestart(downMs: number): Promise<void> {
    await this.kill();
    await new Promise((r) => setTimeout(r, downMs));
    await this.start();
  }

  /** SIGKILL: no controlled shutdown. */
  async kill(): Promise<void> {
    const pid = Number((await readFile(join(this.dataDir, 'kafka.pid'), 'utf8')).trim());
    if (!Number.isInteger(pid) || pid <= 0) throw new Error('the private broker has no pid file');
    process.kill(pid, 'SIGKILL');
    while (alive(pid)) await new Promise((r) => setTimeout(r, 100));
  }

  /** Starts it again on the same data. */
  start(): Promise<void> {
    return this.script('start');
  }

  async stop(): Promise<void> {
    await this.script('stop').catch(() => undefined);
    await rm(this.dataDir, { recursive: true, force: true });
  }

  private async script(command: 'start' | 'stop'): Promise<void> {
    await run('bash', [SCRIPT, command], { env: this.env, timeout: 180_000 });
  }
}

async function isFree(port: number): Promise<boolean> {
  const { createServer } = await import('node:net');
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
