import type { DataSource } from 'typeorm';
import { rows } from 'src/common/database/transaction';
import { LIVE_STATUSES } from 'src/plans/live-runtimes';

/** The reads of `GET /v1/accounts/{id}/usage` (its controller holds no SQL). */

const GROUPS = {
  runtime: `runtime_id`,
  environment: `COALESCE(environment->>'name', size_class, 'unknown')`,
  day: `to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
  user: `COALESCE(user_id, 'unknown')`,
} as const;

export type UsageGroup = keyof typeof GROUPS;

/** The statuses of a runtime not settled yet (its live statuses: read from the account's index of them). */
const LIVE = LIVE_STATUSES.map((s) => `'${s}'`).join(', ');

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
 * The account's usage in [from, to), dated as its statement dates it: a runtime counts (with its
 * running time) in the period its charge was first settled, and its credits are the charges and
 * corrections the ledger posted in the period, so a month's credits are the `runtime_charges` of
 * that month's statement. A runtime still active counts in the period that holds `now`, with its
 * running time so far priced at its rate (capped at what it reserved): what its settlement will post.
 * A runtime that never started is not usage.
 */
export function usageByGroup(
  ds: DataSource,
  q: { accountId: string; from: Date; to: Date; now: Date; groupBy: UsageGroup },
): Promise<UsageRow[]> {
  const runtime = `r.runtime_id, r.environment, r.size_class, r.user_id`;
  return rows<UsageRow>(
    ds,
    `WITH facts AS (
       SELECT ${runtime}, $4::timestamptz AS at, 1 AS runtimes,
              r.closed_ms + CASE WHEN r.open_since IS NOT NULL
                                 THEN floor(extract(epoch FROM ($4::timestamptz - r.open_since)) * 1000)::bigint ELSE 0 END AS ms,
              NULL::bigint AS credits, r.rate_per_hour, r.reserved_amount
       FROM runtimes r
       WHERE r.account_id = $1 AND r.status IN (${LIVE}) AND r.started_at IS NOT NULL
         AND $4::timestamptz >= $2 AND $4::timestamptz < $3
       UNION ALL
       SELECT ${runtime}, r.settled_at, 1, r.closed_ms, 0, NULL, NULL
       FROM runtimes r
       WHERE r.account_id = $1 AND r.status IN ('settled', 'voided') AND r.started_at IS NOT NULL
         AND r.settled_at >= $2 AND r.settled_at < $3
       UNION ALL
       SELECT ${runtime}, t.created_at, 0, 0, e.amount, NULL, NULL
       FROM ledger_transactions t
       JOIN ledger_entries e ON e.transaction_id = t.id AND e.ledger_account = 'consumption'
       JOIN holds h ON h.id = t.hold_id
       JOIN runtimes r ON r.runtime_id = h.reference AND r.hold_id = t.hold_id AND r.account_id = $1
       WHERE t.account_id = $1 AND t.kind <> '' AND t.hold_id IS NOT NULL AND t.created_at >= $2 AND t.created_at < $3)
     SELECT ${GROUPS[q.groupBy]} AS key, sum(runtimes)::int AS runtimes, sum(ms)::text AS ms,
            sum(COALESCE(credits, LEAST(reserved_amount, ceil(rate_per_hour::numeric * ms / 3600000)::bigint)))::text AS credits
     FROM facts GROUP BY 1 ORDER BY 1`,
    [q.accountId, q.from.toISOString(), q.to.toISOString(), q.now.toISOString()],
  );
}
