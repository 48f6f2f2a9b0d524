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
  // Nest closes the application on SIGTERM/SIGINT (enableShutdownHooks). Should that hang — an HTTP
  // request that never ends, a broker that does not answer — the process still ends: nothing is
  // lost by it (open transactions roll back, uncommitted Kafka offsets are delivered again).
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      setTimeout(() => {
        process.stderr.write(`shutdown did not finish within ${SHUTDOWN_DEADLINE_MS} ms: exiting\n`);
        process.exit(1);
      }, SHUTDOWN_DEADLINE_MS).unref();
    });
  }
}

/** How long a graceful shutdown may take before the process exits anyway. */
const SHUTDOWN_DEADLINE_MS = 15_000;

main().catch((error: unknown) => {
  process.stderr.write(`startup failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
