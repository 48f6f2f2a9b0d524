import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { rows } from 'src/common/database/transaction';
import type { PreparedStatement } from 'src/common/database/pipelined-transaction';
import type { TypedRead } from 'src/common/database/typed-read';
import { allowanceGrantId } from './allowance-keys';
import { liveRuntimeSql } from './live-runtimes';
import { grantsAllowanceHere, planAccountOf, type PlanAccount, type PlanAccountRow } from './plan-accounts';
import type { Plan } from 'src/plan-catalog/plan-catalog';
import type { Period } from 'src/plan-catalog/periods';

const ACCOUNTS_READ: PreparedStatement = {
  name: 'plan_accounts_read_v1',
  text: `SELECT a.id, a.plan, a.status, a.plan_overrides, a.billing_cycle_anchor FROM accounts a WHERE a.id = ANY($1::text[])`,
};

const GRANTED_READ: PreparedStatement = {
  name: 'plan_allowances_granted_v1',
  text: `SELECT g.id FROM grants g WHERE g.id = ANY($1::text[])`,
};

/** An account on its plan in a period (termsOf). */
export interface AccountTerms {
  account: PlanAccount;
  plan: Plan;
  period: Period;
}

/** The plans' reads for other modules (admission), as typed rows for a set of accounts. */
@Injectable()
export class PlanReads {
  /** The accounts (as their plan sees them) by id; an unknown account is absent. */
  accounts(ids: readonly string[]): TypedRead<Map<string, PlanAccount>> {
    return {
      call: { statement: ACCOUNTS_READ, values: [[...new Set(ids)]] },
      parse: (found) => {
        const accounts = (found as PlanAccountRow[]).map(planAccountOf).filter((a): a is PlanAccount => a !== null);
        return new Map(accounts.map((a) => [a.id, a]));
      },
    };
  }

  /**
   * The accounts whose period allowance this service grants and has not granted yet (the lazy
   * twin of the monthly reset grants it); null when none of them is granted here (no statement).
   */
  allowancesPending(terms: readonly AccountTerms[]): TypedRead<Set<string>> | null {
    const due = terms
      .filter((t) => grantsAllowanceHere(t.plan))
      .map((t) => ({ accountId: t.account.id, grantId: allowanceGrantId(t.account.id, t.period) }));
    if (due.length === 0) return null;
    return {
      call: { statement: GRANTED_READ, values: [due.map((d) => d.grantId)] },
      parse: (found) => {
        const granted = new Set((found as { id: string }[]).map((r) => r.id));
        return new Set(due.filter((d) => !granted.has(d.grantId)).map((d) => d.accountId));
      },
    };
  }
}

// --- Quotas: a period's usage, counted from the runtimes table ---

/** An account's use of its period quotas, from the runtimes table. */
export interface Usage {
  /** Reservations made in the period, except those voided by a launch failure. */
  runs: number;
  /** Distinct agent ids among those runs. */
  agents: number;
  /** Whether the asking agent is one of them (it may launch again). */
  agentSeen: boolean;
  /** Reserved runtimes that may still run (liveRuntimeSql: a live status, or voided as never started and running after all). */
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
 * agents, which of the `asked` agents are among them, and the runtimes that may still run
 * (`liveRuntimeSql`: the concurrency quota's count). A run is a reservation
 * (`reservation_id`) created in the period whose runtime was not voided by a launch failure (that
 * gives the run back).
 */
function usageQuery(p: { account: string; from: string; to: string; asked: string }): string {
  const inPeriod = `created_at >= ${p.from} AND created_at < ${p.to}`;
  const live = liveRuntimeSql('runtimes');
  return `SELECT count(*) FILTER (WHERE r.is_run)::int AS runs,
      count(DISTINCT r.agent_id) FILTER (WHERE r.is_run)::int AS agents,
      coalesce(array_agg(DISTINCT r.agent_id) FILTER (WHERE r.is_run AND r.agent_id = ANY(${p.asked})), '{}') AS agents_seen,
      count(*) FILTER (WHERE r.live)::int AS active
    FROM (SELECT agent_id, (${inPeriod} AND NOT (status = 'voided' AND settlement IS NOT DISTINCT FROM 'launch_failed')) AS is_run,
            ${live} AS live
          FROM runtimes
          WHERE account_id = ${p.account} AND reservation_id IS NOT NULL
            AND ((${inPeriod}) OR ${live})) r`;
}

const USAGE_READ: PreparedStatement = {
  name: 'quota_usage_read_v2',
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
