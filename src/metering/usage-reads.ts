import type { DataSource } from 'typeorm';
import { rows } from 'src/common/database/transaction';

/** The reads of `GET /v1/accounts/{id}/usage` (its controller holds no SQL). */

const GROUPS = {
  runtime: `runtime_id`,
  environment: `COALESCE(environment->>'name', size_class, 'unknown')`,
  day: `to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
  user: `COALESCE(user_id, 'unknown')`,
} as const;

export type UsageGroup = keyof typeof GROUPS;

export interface UsageRow {
  key: string;
  runtimes: number;
  ms: string;
  credits: string;
}

export async function accountExists(ds: DataSource, accountId: string): Promise<boolean> {
  return (await rows(ds, `SELECT 1 FROM accounts WHERE id = $1`, [accountId])).length > 0;
}

/**
 * The account's runtimes started in [from, to), grouped: settled ones with their settled charge,
 * active ones with their running time so far priced at their rate (capped at what they reserved).
 */
export function usageByGroup(
  ds: DataSource,
  q: { accountId: string; from: Date; to: Date; now: Date; groupBy: UsageGroup },
): Promise<UsageRow[]> {
  return rows<UsageRow>(
    ds,
    `WITH u AS (
       SELECT *, closed_ms + CASE WHEN open_since IS NOT NULL AND status NOT IN ('settled', 'voided')
                                  THEN floor(extract(epoch FROM ($4::timestamptz - open_since)) * 1000)::bigint ELSE 0 END AS ms
       FROM runtimes WHERE account_id = $1 AND started_at >= $2 AND started_at < $3)
     SELECT ${GROUPS[q.groupBy]} AS key, count(*)::int AS runtimes, sum(ms)::text AS ms,
            sum(CASE WHEN status IN ('settled', 'voided') THEN charged
                     ELSE LEAST(reserved_amount, ceil(rate_per_hour::numeric * ms / 3600000)::bigint) END)::text AS credits
     FROM u GROUP BY 1 ORDER BY 1`,
    [q.accountId, q.from.toISOString(), q.to.toISOString(), q.now.toISOString()],
  );
}
