import type { DataSource } from 'typeorm';
import { sha256Hex } from '../canonical-json';

/** A stable 63-bit advisory lock key for a name, so every instance agrees on it. */
export function advisoryKey(name: string): string {
  return BigInt.asIntN(64, BigInt(`0x${sha256Hex(`dl-billing:${name}`).slice(0, 16)}`)).toString();
}

/** How often an instance that waits for the lock asks again. */
const LOCK_POLL_MS = 250;

/**
 * Runs `work` while holding a session advisory lock on one dedicated connection, waiting for it.
 * Used for migrations at boot. The wait asks again and again (`pg_try_advisory_lock`) instead of
 * sitting in `pg_advisory_lock`: a statement that waits keeps its snapshot open, and a
 * `CREATE INDEX CONCURRENTLY` of the holder's migrations waits for every older snapshot in the
 * database to go, so the holder would wait for the waiter and the waiter for the holder, for ever.
 * Between two tries the connection is idle, outside any transaction, with no snapshot.
 */
export async function withAdvisoryLock<T>(ds: DataSource, name: string, work: () => Promise<T>): Promise<T> {
  const runner = ds.createQueryRunner();
  await runner.connect();
  try {
    for (;;) {
      const rows: { locked: boolean }[] = await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [advisoryKey(name)]);
      if (rows[0]?.locked) break;
      await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
    }
    try {
      return await work();
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [advisoryKey(name)]);
    }
  } finally {
    await runner.release();
  }
}

/**
 * Runs `work` only if no other instance holds the lock; returns `{ran: false}` otherwise.
 * Used by scheduled jobs so that one instance runs each.
 */
export async function tryAdvisoryLock<T>(
  ds: DataSource,
  name: string,
  work: () => Promise<T>,
): Promise<{ ran: true; result: T } | { ran: false }> {
  const runner = ds.createQueryRunner();
  await runner.connect();
  try {
    const rows: { locked: boolean }[] = await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [advisoryKey(name)]);
    if (!rows[0]?.locked) return { ran: false };
    try {
      return { ran: true, result: await work() };
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [advisoryKey(name)]);
    }
  } finally {
    await runner.release();
  }
}
