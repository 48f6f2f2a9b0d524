import { Logger, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { withAdvisoryLock } from './advisory-lock';
import { dataSourceOptions } from './data-source';
import { EmbeddedPostgres } from './embedded-postgres';

/** Resolves the database (embedded when DATABASE_URL is unset) and migrates it under an advisory lock. */
export async function openDataSource(options: DataSourceOptions): Promise<DataSource> {
  const ds = new DataSource(options);
  await ds.initialize();
  const applied = await withAdvisoryLock(ds, 'migrations', () => ds.runMigrations({ transaction: 'each' }));
  if (applied.length > 0) {
    new Logger('Database').log(`applied migrations: ${applied.map((m) => m.name).join(', ')}`);
  }
  return ds;
}

export async function resolveDatabaseUrl(config: AppConfig): Promise<string> {
  if (config.database.url) return config.database.url;
  return EmbeddedPostgres.shared(config.database.embeddedDir, config.database.embeddedPort).start();
}

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: async (config: AppConfig) => dataSourceOptions(await resolveDatabaseUrl(config), config.database.poolSize),
      dataSourceFactory: async (options) => openDataSource(options as DataSourceOptions),
    }),
  ],
})
export class DatabaseModule {}
