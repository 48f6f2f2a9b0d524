import type { LoggerService, LogLevel } from '@nestjs/common';

const ORDER: Record<string, number> = { verbose: 0, debug: 1, log: 2, info: 2, warn: 3, error: 4, fatal: 5 };

/** Structured JSON logs, one object a line, for Nest's own logger. */
export class JsonLogger implements LoggerService {
  private readonly min: number;

  get isDebug(): boolean {
    return this.min <= 1;
  }

  constructor(level: 'debug' | 'info' | 'warn' | 'error' = 'info') {
    this.min = ORDER[level] ?? 2;
  }

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
    this.write('verbose', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }
  setLogLevels(_levels: LogLevel[]): void {
    // The level comes from LOG_LEVEL.
  }

  private write(level: string, message: unknown, rest: unknown[]): void {
    if ((ORDER[level] ?? 2) < this.min) return;
    // Nest passes the context as the last string argument.
    const context = typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    const line: Record<string, unknown> = { level, time: new Date().toISOString(), context };
    if (message instanceof Error) {
      line.msg = message.message;
      line.stack = message.stack;
    } else if (typeof message === 'object' && message !== null) {
      Object.assign(line, message);
    } else {
      line.msg = String(message);
    }
    if (rest.length > 0 && typeof rest[0] === 'string' && level === 'error') line.stack = rest[0];
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
}
