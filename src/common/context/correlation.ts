import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What the work in progress is serving: an HTTP request (its request id), a Kafka event (its event
 * id) or a job run (its run id). Audit rows and log lines read it from here, so it needs no
 * parameter through every call.
 *
 * Work that is handed to another asynchronous context (a group-commit lane, a batch run for many
 * callers) must capture `correlationId()` when it is handed over and carry it itself: the lane's
 * context is the context of whoever started the batch.
 */
export interface Correlation {
  /** `x-request-id` (taken from the caller or generated), the event id, or the job run id. */
  id: string;
  kind: 'request' | 'event' | 'job';
}

const storage = new AsyncLocalStorage<Correlation>();

/** Runs `work` with `correlation` as the current correlation. */
export function withCorrelation<T>(correlation: Correlation, work: () => T): T {
  return storage.run(correlation, work);
}

/**
 * Runs `work` with `correlation` as the current correlation, or outside any when it is undefined (a
 * group-commit lane's batch: it serves many callers, each of which carries its own).
 */
export function withCorrelationOf<T>(correlation: Correlation | undefined, work: () => T): T {
  return correlation ? storage.run(correlation, work) : storage.exit(work);
}

/** The current correlation, if the work serves one. */
export function currentCorrelation(): Correlation | undefined {
  return storage.getStore();
}

/** The current correlation id, or null outside a request, an event or a job. */
export function correlationId(): string | null {
  return storage.getStore()?.id ?? null;
}
