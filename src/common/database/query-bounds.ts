import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * How long a query of the service's pool may go unanswered before it fails (and its connection is
 * dropped): a request, a Kafka batch or the outbox relay must answer in bounded time when the
 * database freezes (a network partition, a stopped server), not hold its connection for ever.
 * Work that is long by nature runs under a bound of its own (`withQueryBound`).
 */
export interface QueryBounds {
  /** Each query of a request, a consumer batch, the relay (DATABASE_QUERY_TIMEOUT_MS); 0: none. */
  queryTimeoutMs: number;
  /** Each query of the jobs, the reports and the CLI (DATABASE_LONG_QUERY_TIMEOUT_MS); 0: none. */
  longQueryTimeoutMs: number;
}

/** No bound at all: what the pool did until 2026-12-06, and what migrations and the TypeORM CLI keep. */
export const UNBOUNDED: QueryBounds = { queryTimeoutMs: 0, longQueryTimeoutMs: 0 };

/** `long`: DATABASE_LONG_QUERY_TIMEOUT_MS; `none`: no bound (migrations); a number: that many ms. */
export type QueryBound = 'long' | 'none' | number;

const current = new AsyncLocalStorage<QueryBound>();

/**
 * What pg fails a query with when the database did not answer in time: the query's bound
 * (`query_timeout`) or the wait for a connection (the pool's `connectionTimeoutMillis`).
 */
export const DATABASE_TIMEOUT_MESSAGE = /Query read timeout|timeout exceeded when trying to connect/;

/** Whether `error` says the database did not answer within its bound (it may be frozen: trying again at once waits as long). */
export function isDatabaseTimeout(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && DATABASE_TIMEOUT_MESSAGE.test(message);
}

/** Runs `work` with every query it makes (awaited from it, on the service's pool) under `bound`. */
export function withQueryBound<T>(bound: QueryBound, work: () => T): T {
  return current.run(bound, work);
}

/** The bound of a query made now, in ms (0: none). */
export function queryTimeoutNow(bounds: QueryBounds): number {
  const bound = current.getStore();
  if (bound === undefined) return bounds.queryTimeoutMs;
  if (bound === 'long') return bounds.longQueryTimeoutMs;
  if (bound === 'none') return 0;
  return bound;
}

/** A method whose queries (all of them, awaited from it) have DATABASE_LONG_QUERY_TIMEOUT_MS: a report's, say. */
export function LongQueries(): MethodDecorator {
  return (_target, _key, descriptor: PropertyDescriptor) => {
    const method = descriptor.value as (...args: unknown[]) => unknown;
    descriptor.value = function (this: unknown, ...args: unknown[]): unknown {
      return withQueryBound('long', () => method.apply(this, args));
    };
  };
}
