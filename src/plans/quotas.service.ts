import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { rows } from '../common/database/transaction';
import { formatCredits } from '../common/money';
import { Clock } from '../infra/clock/clock';
import type { RunsView, WalletExtension } from '../ledger/wallet-extensions';
import { loadPlanAccount, termsOf } from './plan-accounts';
import { allowanceGrantId } from './allowance-store';
import { PlanCatalog } from './plan-catalog';
import type { Period } from './periods';

/** The statuses a runtime holds a concurrency slot in. */
export const ACTIVE_STATUSES = ['reserved', 'running', 'paused', 'terminating'] as const;

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

/** The `runs` of the wallet view, with the period and its allowance. */
export interface RunsWalletView extends RunsView {
  period: { from: string; to: string };
  plan: string;
  allowance: { included: string; granted: boolean; grantId: string | null; remaining: string | null; expiresAt: string | null };
}

export interface QuotaUse {
  used: number;
  limit: number | null;
  resetsAt: string | null;
}

export interface QuotasView {
  period: { from: string; to: string };
  runs: QuotaUse;
  agents: QuotaUse;
  concurrency: QuotaUse;
}

/**
 * The query counting an account's usage (SQL expressions for its parameters): runs, distinct
 * agents, which of the `asked` agents are among them, and active runtimes. A run is a reservation
 * (`reservation_id`) created in the period whose runtime was not voided by a launch failure (that
 * gives the run back). `except`: a runtime left out (the one being reserved).
 */
export function usageQuery(p: { account: string; from: string; to: string; except: string; asked: string }): string {
  const inPeriod = `created_at >= ${p.from} AND created_at < ${p.to}`;
  return `SELECT count(*) FILTER (WHERE r.is_run)::int AS runs,
      count(DISTINCT r.agent_id) FILTER (WHERE r.is_run)::int AS agents,
      coalesce(array_agg(DISTINCT r.agent_id) FILTER (WHERE r.is_run AND r.agent_id = ANY(${p.asked})), '{}') AS agents_seen,
      count(*) FILTER (WHERE r.status IN ('reserved', 'running', 'paused', 'terminating'))::int AS active
    FROM (SELECT agent_id, status, (${inPeriod} AND NOT (status = 'voided' AND settlement IS NOT DISTINCT FROM 'launch_failed')) AS is_run
          FROM runtimes
          WHERE account_id = ${p.account} AND reservation_id IS NOT NULL AND runtime_id <> ${p.except}
            AND ((${inPeriod}) OR status IN ('reserved', 'running', 'paused', 'terminating'))) r`;
}

/** Counts an account's runs, agents and active runtimes (usageQuery). */
export async function usageOf(em: Pick<EntityManager, 'query'>, accountId: string, period: Period, opts: { exceptRuntime?: string; agentId?: string | null } = {}): Promise<Usage> {
  const [row] = await rows<{ runs: number; agents: number; agents_seen: string[]; active: number }>(
    em,
    usageQuery({ account: '$1', from: '$2', to: '$3', except: '$4', asked: 'ARRAY[$5]::text[]' }),
    [accountId, period.start, period.end, opts.exceptRuntime ?? '', opts.agentId ?? null],
  );
  return { runs: row?.runs ?? 0, agents: row?.agents ?? 0, agentSeen: (row?.agents_seen.length ?? 0) > 0, active: row?.active ?? 0 };
}

/** Read side of the quotas: runs remaining, and the `runs` part of the wallet view. */
@Injectable()
export class QuotasService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly catalog: PlanCatalog,
    private readonly clock: Clock,
  ) {}

  /** The wallet view's `runs` (WALLET_EXTENSIONS). */
  readonly walletExtension: WalletExtension = { runs: (accountId, now) => this.runsView(accountId, now) };

  /** Runs left in the account's current period (after what is already reserved); null when unlimited. */
  async runsRemaining(em: Pick<EntityManager, 'query'>, accountId: string, now: Date = this.clock.now()): Promise<number | null> {
    const account = await loadPlanAccount(em, accountId);
    if (!account) return null;
    const { plan, period } = termsOf(this.catalog, account, now);
    if (plan.runsPerPeriod === null) return null;
    const usage = await usageOf(em, accountId, period);
    return Math.max(0, plan.runsPerPeriod - usage.runs);
  }

  /** The account's quotas in its current period: each limit (null: unlimited), what is used, and when it resets. */
  async quotasNow(accountId: string, now: Date = this.clock.now()): Promise<QuotasView | null> {
    const account = await loadPlanAccount(this.ds, accountId);
    if (!account) return null;
    const { plan, period } = termsOf(this.catalog, account, now);
    const usage = await usageOf(this.ds, accountId, period);
    return {
      period: { from: period.start.toISOString(), to: period.end.toISOString() },
      runs: { used: usage.runs, limit: plan.runsPerPeriod, resetsAt: period.end.toISOString() },
      agents: { used: usage.agents, limit: plan.agentsPerPeriod, resetsAt: period.end.toISOString() },
      concurrency: { used: usage.active, limit: plan.concurrentRuntimes, resetsAt: null },
    };
  }

  async runsView(accountId: string, now: Date): Promise<RunsWalletView | null> {
    const account = await loadPlanAccount(this.ds, accountId);
    if (!account) return null;
    const { plan, period } = termsOf(this.catalog, account, now);
    const usage = await usageOf(this.ds, accountId, period);
    const [allowance] = await rows<{ grant_id: string; remaining: string; expires_at: Date }>(
      this.ds,
      `SELECT g.id AS grant_id, g.remaining::text AS remaining, g.expires_at FROM grants g WHERE g.id = $1 AND g.account_id = $2`,
      [allowanceGrantId(accountId, period), accountId],
    );
    return {
      used: usage.runs,
      included: plan.runsPerPeriod,
      resetsAt: period.end.toISOString(),
      period: { from: period.start.toISOString(), to: period.end.toISOString() },
      plan: plan.id,
      allowance: {
        included: formatCredits(plan.includedCreditsMicros),
        // Free/Enterprise: granted at the monthly reset or the period's first launch. Team: with its paid invoice.
        granted: allowance !== undefined,
        grantId: allowance?.grant_id ?? null,
        remaining: allowance ? formatCredits(BigInt(allowance.remaining)) : null,
        expiresAt: allowance?.expires_at.toISOString() ?? null,
      },
    };
  }
}
