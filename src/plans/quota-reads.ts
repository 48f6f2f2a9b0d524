import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { rows } from 'src/common/database/transaction';
import type { PreparedStatement } from 'src/common/database/pipelined-transaction';
import type { TypedRead } from 'src/common/database/typed-read';
import type { Period } from 'src/plan-catalog/periods';

/** An account's use of its period quotas, from the runtimes table. */
export interface Usage {
  /** Reservations made in the period, except those voided by a launch failure. */
  runs: number;
  /** Distinct agent ids among those runs. */
  agents: number;
  /** Whether the asking agent is one of them (it may launch again). */
  agentSeen: boolean;
  /** Reserved runtimes that are reserved, running, paused or terminating. */
  active: number;
}

/** An account's usage in a period, with which of the agents asked about are among its runs. */
export interface UsageCount {
  runs: number;
  agents: number;
  active: number;
  agentsSeen: Set<string>;
}

/** What usageRead counts for one account: its period, and the agents whose runs it asks about. */
export interface UsageAsk {
  accountId: string;
  period: Period;
  agents: readonly string[];
}

/**
 * The query counting an account's usage (SQL expressions for its parameters): runs, distinct
 * agents, which of the `asked` agents are among them, and active runtimes. A run is a reservation
 * (`reservation_id`) created in the period whose runtime was not voided by a launch failure (that
 * gives the run back).
 */
function usageQuery(p: { account: string; from: string; to: string; asked: string }): string {
  const inPeriod = `created_at >= ${p.from} AND created_at < ${p.to}`;
  return `SELECT count(*) FILTER (WHERE r.is_run)::int AS runs,
      count(DISTINCT r.agent_id) FILTER (WHERE r.is_run)::int AS agents,
      coalesce(array_agg(DISTINCT r.agent_id) FILTER (WHERE r.is_run AND r.agent_id = ANY(${p.asked})), '{}') AS agents_seen,
      count(*) FILTER (WHERE r.status IN ('reserved', 'running', 'paused', 'terminating'))::int AS active
    FROM (SELECT agent_id, status, (${inPeriod} AND NOT (status = 'voided' AND settlement IS NOT DISTINCT FROM 'launch_failed')) AS is_run
          FROM runtimes
          WHERE account_id = ${p.account} AND reservation_id IS NOT NULL
            AND ((${inPeriod}) OR status IN ('reserved', 'running', 'paused', 'terminating'))) r`;
}

const USAGE_READ: PreparedStatement = {
  name: 'quota_usage_read_v1',
  text: `SELECT n.account, u.runs, u.agents, u.agents_seen, u.active
    FROM jsonb_to_recordset($1::jsonb) AS n(account text, "from" timestamptz, "to" timestamptz, agents text[])
    CROSS JOIN LATERAL (${usageQuery({ account: 'n.account', from: 'n."from"', to: 'n."to"', asked: 'n.agents' })}) u`,
};

/** Counts an account's runs, agents and active runtimes. */
export async function usageOf(
  em: Pick<EntityManager, 'query'>,
  accountId: string,
  period: Period,
  opts: { agentId?: string | null } = {},
): Promise<Usage> {
  const [row] = await rows<{ runs: number; agents: number; agents_seen: string[]; active: number }>(
    em,
    usageQuery({ account: '$1', from: '$2', to: '$3', asked: 'ARRAY[$4]::text[]' }),
    [accountId, period.start, period.end, opts.agentId ?? null],
  );
  return { runs: row?.runs ?? 0, agents: row?.agents ?? 0, agentSeen: (row?.agents_seen.length ?? 0) > 0, active: row?.active ?? 0 };
}

/** The quotas' reads for other modules (admission): usage of a set of accounts, as typed rows. */
@Injectable()
export class QuotaReads {
  /** The usage of each account asked about, in its period (one statement, by account id). */
  usage(asks: readonly UsageAsk[]): TypedRead<Map<string, UsageCount>> {
    const values = asks.map((a) => ({
      account: a.accountId,
      from: a.period.start.toISOString(),
      to: a.period.end.toISOString(),
      agents: a.agents,
    }));
    return {
      call: { statement: USAGE_READ, values: [JSON.stringify(values)] },
      parse: (found) =>
        new Map(
          (found as { account: string; runs: number; agents: number; agents_seen: string[]; active: number }[]).map((r) => [
            r.account,
            { runs: r.runs, agents: r.agents, active: r.active, agentsSeen: new Set(r.agents_seen) },
          ]),
        ),
    };
  }
}
