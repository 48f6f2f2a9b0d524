import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { rows } from 'src/common/database/transaction';
import { formatCredits } from 'src/common/money';
import { Clock } from 'src/infra/clock/clock';
import type { RunsView, WalletExtension } from 'src/ledger/wallet-extensions';
import { loadPlanAccount, termsOf } from './plan-accounts';
import { allowanceGrantId, cycleGrantId, upgradeKeyPattern } from './allowance-keys';
import { PlanCatalog } from 'src/plan-catalog/plan-catalog';
import { usageOf } from './plan-reads';

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
    // The period's allowance: the plan's own grant of the period and, after an upgrade within the
    // period, the rests granted then; granted once they add up to what the plan includes. Never another
    // plan's grant ending at the same instant (a Team cycle starting on the 1st beside a Free or
    // Enterprise month, after a move within the month). A paid-invoice plan's grant is the cycle's (its
    // own id, or before 2026-12-06 the month's id with its invoice as reference); a period-start plan's
    // is the month's (no reference) with the upgrades' rests, told by their ledger key (`upgradeKey`;
    // their transaction is dated as the grant, which finds it by index).
    const [given] = await rows<{ grant_id: string | null; amount: string; remaining: string; grants: number }>(
      this.ds,
      `SELECT coalesce(min(g.id) FILTER (WHERE g.id IN ($1, $2)), min(g.id)) AS grant_id, coalesce(sum(g.amount), 0)::text AS amount,
         coalesce(sum(g.remaining), 0)::text AS remaining, count(*)::int AS grants
       FROM grants g WHERE g.account_id = $3 AND g.source = 'plan_allowance' AND g.expires_at = $4 AND CASE WHEN $5::boolean
         THEN g.id = $1 OR (g.id = $2 AND g.reference IS NOT NULL)
         ELSE g.reference IS NULL AND (g.id = $2 OR EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.account_id = g.account_id
           AND t.created_at = g.created_at AND t.grant_id = g.id AND t.idempotency_key LIKE $6)) END`,
      [
        cycleGrantId(accountId, period),
        allowanceGrantId(accountId, period),
        accountId,
        period.end,
        plan.allowanceTrigger === 'paid_invoice',
        upgradeKeyPattern(period),
      ],
    );
    const allowance = given && given.grants > 0 && BigInt(given.amount) >= plan.includedCreditsMicros ? given : undefined;
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
        expiresAt: allowance ? period.end.toISOString() : null,
      },
    };
  }
}
