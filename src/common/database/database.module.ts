import { Logger, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { withAdvisoryLock } from './advisory-lock';
import { dataSourceOptions } from './data-source';
import { EmbeddedPostgres } from './embedded-postgres';
import { withQueryBound } from './query-bounds';

/**
 * Opens the database. With `migrate` (the service), migrates it under an advisory lock; without (the
 * CLI), it only reads which of the build's migrations are applied, and refuses a database that is
 * not at this build's schema (an empty one, another application's, a restore gone wrong): a check
 * run there would pass on nothing, and migrating it would change the database being checked.
 */
export async function openDataSource(options: DataSourceOptions, migrate = true): Promise<DataSource> {
  // Never TypeORM's own run at initialize: the migrations run here, under the lock.
  const ds = new DataSource({ ...options, migrationsRun: false });
  await ds.initialize();
  if (!migrate) {
    const { pending, unknown } = await schemaDifference(ds);
    if (pending.length > 0 || unknown.length > 0) {
      await ds.destroy();
      throw new SchemaNotCurrent(pending, ds.migrations.length, unknown);
    }
    return ds;
  }
  const applied = await underMigrationsLock(ds, () => ds.runMigrations({ transaction: 'each' }));
  if (applied.length > 0) {
    new Logger('Database').log(`applied migrations: ${applied.map((m) => m.name).join(', ')}`);
  }
  return ds;
}

/**
 * Reverts the last migration the database has applied (`npm run migration:revert`), under the same
 * advisory lock an instance migrates under, so it waits for an instance that is migrating (and an
 * instance starting meanwhile waits for it). Returns the reverted migration's name, or null when none
 * was applied.
 */
export async function revertLastMigration(options: DataSourceOptions): Promise<string | null> {
  const ds = new DataSource({ ...options, migrationsRun: false });
  await ds.initialize();
  try {
    return await underMigrationsLock(ds, async () => {
      const before = await appliedMigrations(ds);
      await ds.undoLastMigration({ transaction: 'each' });
      const after = new Set(await appliedMigrations(ds));
      return before.find((name) => !after.has(name)) ?? null;
    });
  } finally {
    await ds.destroy();
  }
}

/**
 * Runs `work` under the migrations' advisory lock, waiting for it, with no bound on its queries: a
 * migration may build an index over a large table, and the lock is waited for while another instance
 * migrates.
 */
function underMigrationsLock<T>(ds: DataSource, work: () => Promise<T>): Promise<T> {
  return withQueryBound('none', () => withAdvisoryLock(ds, 'migrations', work));
}

/** A database that lacks some of the build's migrations, opened by a caller that does not migrate. */
export class SchemaNotCurrent extends Error {
  constructor(
    readonly pending: string[],
    total: number,
    /** Migrations the database has applied that this build does not know: a newer build migrated it. */
    readonly unknown: string[] = [],
  ) {
    super(
      pending.length === total
        ? `the database has no billing schema (none of this build's ${total} migrations is applied): is it the service's database?`
        : pending.length > 0
          ? `the database is not at this build's schema: ${pending.length} of ${total} migrations not applied (first: ${pending[0]}); ` +
            'start the service of this build once (it migrates), or use the CLI of the build that runs there'
          : `the database is at a newer schema than this build: ${unknown.length} migration(s) this build does not know (first: ${unknown[0]}); ` +
            'use the CLI of the build that runs there',
    );
  }
}

/** The build's migrations the database has not applied, and those it has that the build does not know (read only). */
async function schemaDifference(ds: DataSource): Promise<{ pending: string[]; unknown: string[] }> {
  const applied = await appliedMigrations(ds);
  const known = ds.migrations.map((m) => m.name ?? m.constructor.name);
  const done = new Set(applied);
  const ours = new Set(known);
  return { pending: known.filter((name) => !done.has(name)), unknown: applied.filter((name) => !ours.has(name)) };
}

/** The names of the migrations the database has applied, in the order it applied them (none without the table). */
async function appliedMigrations(ds: DataSource): Promise<string[]> {
  const table = ds.options.migrationsTableName ?? 'migrations';
  const [found] = (await ds.query(`SELECT to_regclass($1) IS NOT NULL AS present`, [table])) as { present: boolean }[];
  if (!found?.present) return [];
  return ((await ds.query(`SELECT name FROM ${table} ORDER BY id`)) as { name: string }[]).map((r) => r.name);
}

export async function resolveDatabaseUrl(config: AppConfig): Promise<string> {
  if (config.database.url) return config.database.url;
  return EmbeddedPostgres.shared(config.database.embeddedDir, config.database.embeddedPort).start();
}

/** The wait between two attempts to reach the database at start (TypeORM's module default). */
const START_RETRY_DELAY_MS = 3_000;

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      // migrationsRun: the service migrates at start; the CLI (database.migrate false) only checks.
      useFactory: async (config: AppConfig) => ({
        ...dataSourceOptions(await resolveDatabaseUrl(config), config.database.poolSize, {
          queryTimeoutMs: config.database.queryTimeoutMs,
          longQueryTimeoutMs: config.database.longQueryTimeoutMs,
          acquireTimeoutMs: config.database.acquireTimeoutMs,
          idleInTransactionTimeoutMs: config.database.idleInTransactionTimeoutMs,
        }),
        migrationsRun: config.database.migrate !== false,
        // A database that answers but is not at this build's schema will not become so by waiting.
        toRetry: (error: unknown) => !(error instanceof SchemaNotCurrent),
        // Attempts in all, the first included (@nestjs/typeorm's `retryAttempts`).
        retryAttempts: config.database.startAttempts,
        retryDelay: START_RETRY_DELAY_MS,
      }),
      dataSourceFactory: async (options) => openDataSource(options as DataSourceOptions, options?.migrationsRun !== false),
    }),
  ],
})
export class DatabaseModule {}
