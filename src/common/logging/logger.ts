import type { LoggerService, LogLevel } from '@nestjs/common';
import pino, { type DestinationStream, type Logger } from 'pino';
import { currentCorrelation } from '../context/correlation';

/**
 * Where secrets could appear in a logged object. The API key itself is never logged (the access
 * line carries its id); these paths are the net under that rule.
 */
export const REDACTED_PATHS = [
  'authorization',
  'key',
  'apiKey',
  'password',
  'secret',
  'token',
  'databaseUrl',
  'headers.authorization',
  'headers.cookie',
  'headers["stripe-signature"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["stripe-signature"]',
  '*.authorization',
  '*.apiKey',
  '*.password',
  '*.secret',
  '*.secretKey',
  '*.webhookSecret',
  '*.token',
];

/** Nest's start-up chatter (a line per module and per route): debug, not info. */
const CHATTY_CONTEXTS = new Set(['RouterExplorer', 'RoutesResolver', 'InstanceLoader', 'NestFactory']);

/**
 * One JSON object a line (pino): level, ISO time, pid, hostname, and the correlation of the work in
 * progress — `reqId` during an HTTP request, `correlationId` (with its kind) for a Kafka event or a
 * job run — on every line written while serving it.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      messageKey: 'msg',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      mixin() {
        const c = currentCorrelation();
        if (!c) return {};
        return c.kind === 'request' ? { reqId: c.id } : { correlationId: c.id, correlationKind: c.kind };
      },
    },
    destination ?? process.stdout,
  );
}

/** Nest's LoggerService on pino, so framework, service and access lines share one format. */
export class PinoLogger implements LoggerService {
  constructor(
    readonly pino: Logger,
    /**
     * For an app started with `abortOnError: false`, whose caller reports a failure to start in a
     * line of its own (main's `startup failed`, the CLI's `could not run`): Nest's ExceptionHandler
     * line about the same failure, written before it rethrows, is dropped.
     */
    private readonly callerReportsFailures = false,
  ) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }
  setLogLevels(_levels: LogLevel[]): void {
    // The level comes from LOG_LEVEL.
  }

  private write(level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal', message: unknown, rest: unknown[]): void {
    // Nest passes the context as the last string argument, and an error's stack before it.
    const context = typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    if (this.callerReportsFailures && context === 'ExceptionHandler') return;
    if (level === 'info' && context && CHATTY_CONTEXTS.has(context)) level = 'debug';
    if (!this.pino.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = { context };
    if (message instanceof Error) {
      fields.err = { type: message.name, message: message.message, stack: message.stack };
      this.pino[level](fields, message.message);
      return;
    }
    if (level === 'error' && typeof rest[0] === 'string') fields.stack = rest[0];
    if (typeof message === 'object' && message !== null) {
      const { msg, ...others } = message as Record<string, unknown>;
      this.pino[level]({ ...fields, ...others }, typeof msg === 'string' ? msg : undefined);
    } else {
      this.pino[level](fields, String(message));
    }
  }
}
