import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp } from './app';
import { ConfigError, loadConfig, type AppConfig } from './common/config/config';
import { readConfigFiles, type ConfigFiles } from './config-files';
import { EmbeddedPostgres } from './common/database/embedded-postgres';
import { createLogger } from './common/logging/logger';

/** How long a graceful shutdown may take before the process exits anyway. */
const SHUTDOWN_DEADLINE_MS = 15_000;

async function main(): Promise<void> {
  let config: AppConfig;
  let files: ConfigFiles;
  try {
    config = loadConfig();
    // Read once, here: a bad file is named with every other before anything starts.
    files = readConfigFiles(config.files);
  } catch (error) {
    if (error instanceof ConfigError) {
      createLogger('info', process.stderr).fatal({ context: 'Main' }, `startup failed: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }
  const app = await createApp(config, files);
  await app.listen({ port: config.port, host: config.host });
  const logger = new Logger('Main');
  logger.log(`billing service listening on http://${config.host}:${config.port}`);

  /**
   * SIGTERM/SIGINT, in this order: the HTTP server stops accepting and answers the requests in
   * flight (they still have the database); then the Kafka consumers finish their batches and leave
   * their group, the outbox relay and schedules stop, the database pool closes (Nest's shutdown
   * hooks); then the embedded PostgreSQL, if this process runs one. Should that hang — a request
   * that never ends, a broker that does not answer — the process still ends: nothing is lost by it
   * (open transactions roll back, uncommitted Kafka offsets are delivered again).
   */
  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    const started = Date.now();
    setTimeout(() => {
      logger.error({ msg: 'shutdown did not finish in time: exiting', signal, deadlineMs: SHUTDOWN_DEADLINE_MS });
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    let failed: unknown;
    try {
      await app.close();
      if (!config.database.url) await EmbeddedPostgres.shared(config.database.embeddedDir, config.database.embeddedPort).stop();
    } catch (error) {
      failed = error;
    }
    const ms = Date.now() - started;
    if (failed) logger.error({ msg: 'shutdown failed', signal, ms, error: String(failed) });
    else logger.log({ msg: 'stopped', signal, ms, embeddedDatabase: !config.database.url });
    process.exit(failed ? 1 : 0);
  };
  // A second signal while shutting down ends the process at once, and says so.
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, (s) => {
      if (!stopping) {
        stopping = true;
        void shutdown(s);
        return;
      }
      logger.error({ msg: 'second signal during shutdown: exiting now', signal: s });
      process.exit(1);
    });
  }
}

// Before the service's logger exists, or after it failed: one JSON line on stderr all the same.
main().catch((error: unknown) => {
  const err = error instanceof Error ? { type: error.name, message: error.message, stack: error.stack } : { message: String(error) };
  createLogger('info', process.stderr).fatal({ context: 'Main', err }, `startup failed: ${err.message}`);
  process.exit(1);
});
