import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** A client's failures in its current window. */
export interface FailureWindow {
  start: number;
  failures: number;
}

/**
 * Owns the auth_failures table: failed authentications per client, shared by every instance. A
 * window opens with a client's first failure and lasts `windowMs`; a failure after it opens the next.
 */
@Injectable()
export class FailureStore {
  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  /**
   * Records one failure for each client (distinct clients) at its time, in one statement, and
   * returns each client's window with it. Rows are written in client order, so that two instances
   * writing the same clients at once never deadlock.
   */
  async fail(scope: string, failures: { client: string; at: number }[], windowMs: number): Promise<Map<string, FailureWindow>> {
    const sorted = [...failures].sort((x, y) => (x.client < y.client ? -1 : x.client > y.client ? 1 : 0));
    const rows = (await this.ds.query(
      `INSERT INTO auth_failures AS f (scope, client, window_start, failures)
       SELECT $1, u.client, u.at, 1 FROM unnest($2::text[], $3::timestamptz[]) WITH ORDINALITY AS u(client, at, n) ORDER BY u.n
       ON CONFLICT (scope, client) DO UPDATE SET
         window_start = CASE WHEN f.window_start <= EXCLUDED.window_start - $4::interval THEN EXCLUDED.window_start ELSE f.window_start END,
         failures = CASE WHEN f.window_start <= EXCLUDED.window_start - $4::interval THEN 1 ELSE f.failures + 1 END
       RETURNING client, window_start, failures`,
      [scope, sorted.map((f) => f.client), sorted.map((f) => new Date(f.at)), `${windowMs} milliseconds`],
    )) as { client: string; window_start: Date; failures: number }[];
    return new Map(rows.map((r) => [r.client, { start: r.window_start.getTime(), failures: r.failures }]));
  }

  /** The client's window, or null when it has none. */
  async read(scope: string, client: string): Promise<FailureWindow | null> {
    const [row] = (await this.ds.query(`SELECT window_start, failures FROM auth_failures WHERE scope = $1 AND client = $2`, [
      scope,
      client,
    ])) as {
      window_start: Date;
      failures: number;
    }[];
    return row ? { start: row.window_start.getTime(), failures: row.failures } : null;
  }

  /** Deletes the windows that ended before `before`; returns how many. */
  async deleteEnded(before: number, windowMs: number): Promise<number> {
    const [, count] = (await this.ds.query(`DELETE FROM auth_failures WHERE window_start <= $1`, [new Date(before - windowMs)])) as [
      unknown,
      number,
    ];
    return count;
  }
}
