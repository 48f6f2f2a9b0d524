import type { DataSource, EntityManager } from 'typeorm';

/** PostgreSQL errors that mean "try the whole transaction again". */
const RETRYABLE = new Set(['40001', '40P01']); // serialization_failure, deadlock_detected

export function isRetryable(error: unknown): boolean {
  const code =
    (error as { code?: unknown; driverError?: { code?: unknown } } | null)?.code ??
    (error as { driverError?: { code?: unknown } } | null)?.driverError?.code;
  return typeof code === 'string' && RETRYABLE.has(code);
}

/**
 * A change another transaction made meanwhile that this one did not lock: thrown to run the whole
 * transaction again (it carries serialization_failure's code, so inTransaction retries it).
 */
export class ConcurrentChange extends Error {
  readonly code = '40001';
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
  const code = e.code ?? e.driverError?.code;
  const name = e.constraint ?? e.driverError?.constraint;
  return code === '23505' && (constraint === undefined || name === constraint);
}

/** Runs `work` in one transaction, retrying it on deadlock or serialization failure. */
export function inTransaction<T>(ds: DataSource, work: (em: EntityManager) => Promise<T>, attempts = 8): Promise<T> {
  return retrying(() => ds.transaction(work), attempts);
}

/** Runs `work` (a whole transaction) again on deadlock or serialization failure, after a short random pause. */
export async function retrying<T>(work: () => Promise<T>, attempts = 8): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isRetryable(error) || attempt >= attempts) throw error;
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 5 * attempt)));
    }
  }
}

/**
 * Awaits `call` (a request to another service) inside the transaction of `em`, letting the
 * transaction sit idle up to `ms` meanwhile, where DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS would have
 * the server end it sooner (a longer bound, or none, is left as it is); the session's bound is back
 * once the call has returned. For a transaction that holds no row lock while it waits.
 */
export async function awaitingOutside<T>(em: Pick<EntityManager, 'query'>, ms: number, call: () => Promise<T>): Promise<T> {
  await em.query(
    `SELECT set_config(name, greatest(setting::bigint, $1)::text, true) FROM pg_settings
     WHERE name = 'idle_in_transaction_session_timeout' AND setting <> '0'`,
    [ms],
  );
  const answer = await call();
  await em.query(`SET LOCAL idle_in_transaction_session_timeout TO DEFAULT`);
  return answer;
}

/** Runs SQL and returns its rows: TypeORM answers UPDATE/DELETE … RETURNING with [rows, count]. */
export async function rows<T>(em: Pick<EntityManager, 'query'>, sql: string, params: unknown[] = []): Promise<T[]> {
  const result: unknown = await em.query(sql, params);
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
    return result[0] as T[];
  }
  return result as T[];
}
