import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp } from './app';
import { ConfigError, loadConfig, type AppConfig } from './common/config/config';
import { EmbeddedPostgres } from './common/database/embedded-postgres';

async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const app = await createApp(config);
  await app.listen({ port: config.port, host: config.host });
  new Logger('Main').log(`billing service listening on http://${config.host}:${config.port}`);
  const stop = async (): Promise<void> => {
    if (!config.database.url) {
      await EmbeddedPostgres.shared(config.database.embeddedDir, config.database.embeddedPort).stop();
    }
  };
  process.once('beforeExit', () => void stop());
  app.getHttpServer().once('close', () => void stop());
}

main().catch((error: unknown) => {
  process.stderr.write(`startup failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
