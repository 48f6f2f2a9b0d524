import { Logger } from '@nestjs/common';
import type { Logger as TypeOrmLogger } from 'typeorm';

const log = new Logger('Database');

/**
 * What TypeORM says of the service's queries, as the service's own log lines (one JSON object a
 * line): a failed query at `warn`, with its error and the start of its text (never its parameters);
 * the caller decides what the failure means (a 503, a retry). TypeORM's own console logger wrote
 * these as plain text on stdout (`query failed: …`).
 */
export const QUERY_LOG: TypeOrmLogger = {
  logQuery: () => undefined,
  logQueryError: (error, query) =>
    log.warn(`query failed: ${error instanceof Error ? error.message : String(error)} (${query.slice(0, 160)})`),
  logQuerySlow: () => undefined,
  logSchemaBuild: () => undefined,
  logMigration: (message) => log.log(message),
  log: (level, message) => (level === 'warn' ? log.warn(String(message)) : undefined),
};
