import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { BillingException } from '../common/errors/billing.exception';
import { formatCredits, MICROS_PER_CREDIT } from '../common/money';
import { topicsOf } from '../messaging/topics';
import { LaunchGuard, type LaunchRequest, type LaunchVerdict } from './admission';
import { AllowancesService } from '../plans/allowances.service';
import { notifyOnce, type Notification } from '../plans/notifications';
import { termsOf } from '../plans/plan-accounts';
import { PlanCatalog, planFindings, planForbidsException, type Plan } from '../plans/plan-catalog';
import type { Period } from '../plans/periods';
import type { Environment } from '../pricing/environment';
import { usageOf, type Usage } from '../plans/quotas.service';

export type QuotaName = 'runs' | 'agents' | 'concurrency';

export function quotaExceeded(quota: QuotaName, message: string, limit: number, used: number, resetsAt: Date | null): BillingException {
  return new BillingException('DL_BILLING_QUOTA_EXCEEDED', message, [], {
    quota,
    limit,
    used,
    ...(resetsAt ? { resetsAt: resetsAt.toISOString() } : {}),
  });
}

/**
 * `wallet.low_balance` fires when a reservation leaves the available balance below this: a tenth
 * of the period's included credits, and never less than 1 credit (plans without an allowance).
 */
export function lowBalanceThreshold(plan: Plan): bigint {
  const tenth = plan.includedCreditsMicros / 10n;
  return tenth > MICROS_PER_CREDIT ? tenth : MICROS_PER_CREDIT;
}

/**
 * The plan's checks of a launch, in the contract's order, after "account exists and is active" and
 * before the spend limit (SpendLimitsService.check) and the credit hold: plan allows it → runs quota
 * → agents quota → concurrency.
 *
 * Exact under concurrency: the caller has locked the account's wallet row first (the ledger's lock
 * order: wallet → runtime rows → grants/holds → audit), so launches of one account are counted one
 * at a time and two cannot both take the last slot. The period's allowance is granted here when it has
 * not been yet (the lazy twin of the monthly reset), so the hold that follows can use it.
 */
@Injectable()
export class PlanLaunchGuard extends LaunchGuard {
  constructor(
    private readonly catalog: PlanCatalog,
    private readonly allowances: AllowancesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  async check(request: LaunchRequest): Promise<LaunchVerdict> {
    const { em, account, now } = request;
    const { plan, period } = termsOf(this.catalog, account, now);
    const granted = await this.allowances.ensure(em, account, plan, period, now);
    planAllows(plan, request.environment);
    const counted = request.kind === 'reservation' && countsUsage(plan);
    const usage = counted ? await usageOf(em, account.id, period, { exceptRuntime: request.runtimeId, agentId: request.agentId }) : null;
    const { runsRemaining, notices } = quotaVerdict(plan, period, account.id, request.agentId, usage);
    const topic = topicsOf(this.config).notifications;
    await notifyOnce(em, topic, notices, now);

    return {
      runsRemaining,
      walletChanged: granted > 0n,
      // Sent with the reservation (same transaction): a refused hold sends nothing.
      afterHold: async (available) => {
        const notice = lowBalanceNotice(plan, period, account.id, available);
        if (notice) await notifyOnce(em, topic, [notice], now);
      },
    };
  }
}

/** Refuses an environment the plan does not allow (its size class, GPUs). */
export function planAllows(plan: Plan, environment: Environment): void {
  const findings = planFindings(plan, environment);
  if (findings.length > 0) throw planForbidsException(findings);
}

/** Whether a launch on the plan needs the account's usage counted (runs, agents or concurrency quotas). */
export function countsUsage(plan: Plan): boolean {
  return plan.runsPerPeriod !== null || plan.agentsPerPeriod !== null || plan.concurrentRuntimes !== null;
}

/**
 * The quotas of a reservation, in the contract's order (runs → agents → concurrency), on the
 * account's usage before it (null: the plan counts nothing, or an extension). Throws
 * DL_BILLING_QUOTA_EXCEEDED; otherwise the runs left once it counts and the quotas it exhausts.
 */
export function quotaVerdict(
  plan: Plan,
  period: Period,
  accountId: string,
  agentId: string | null,
  usage: Usage | null,
): { runsRemaining: number | null; notices: Notification[] } {
  if (!usage) return { runsRemaining: null, notices: [] };
  const notices: Notification[] = [];
  if (plan.runsPerPeriod !== null && usage.runs >= plan.runsPerPeriod) {
    throw quotaExceeded('runs', `The ${plan.name} plan includes ${plan.runsPerPeriod} runs per period; all are used`, plan.runsPerPeriod, usage.runs, period.end);
  }
  const newAgent = agentId !== null && !usage.agentSeen;
  if (plan.agentsPerPeriod !== null && newAgent && usage.agents >= plan.agentsPerPeriod) {
    throw quotaExceeded(
      'agents',
      `The ${plan.name} plan allows ${plan.agentsPerPeriod} distinct agents per period; agent ${agentId} would be one more`,
      plan.agentsPerPeriod,
      usage.agents,
      period.end,
    );
  }
  if (plan.concurrentRuntimes !== null && usage.active >= plan.concurrentRuntimes) {
    throw quotaExceeded(
      'concurrency',
      `The ${plan.name} plan allows ${plan.concurrentRuntimes} runtimes at once; ${usage.active} are active`,
      plan.concurrentRuntimes,
      usage.active,
      null,
    );
  }
  if (plan.runsPerPeriod !== null && usage.runs + 1 === plan.runsPerPeriod) notices.push(exhausted('runs', accountId, period, plan.runsPerPeriod));
  if (plan.agentsPerPeriod !== null && newAgent && usage.agents + 1 === plan.agentsPerPeriod) {
    notices.push(exhausted('agents', accountId, period, plan.agentsPerPeriod));
  }
  return { runsRemaining: plan.runsPerPeriod === null ? null : plan.runsPerPeriod - usage.runs - 1, notices };
}

/** `wallet.low_balance` when a reservation leaves `available` below the plan's threshold (once per period: its cause). */
export function lowBalanceNotice(plan: Plan, period: Period, accountId: string, available: bigint): Notification | null {
  const threshold = lowBalanceThreshold(plan);
  if (available < 0n || available >= threshold) return null;
  return {
    type: 'wallet.low_balance',
    accountId,
    cause: lowBalanceCause(accountId, period),
    data: { available: formatCredits(available), threshold: formatCredits(threshold), period: periodJson(period) },
  };
}

function periodJson(period: Period): { from: string; to: string } {
  return { from: period.start.toISOString(), to: period.end.toISOString() };
}

/** The causes of the notices a launch may send (each sent once: notifications_sent). */
export function launchNoticeCauses(accountId: string, period: Period): string[] {
  return [lowBalanceCause(accountId, period), exhaustedCause('runs', accountId, period), exhaustedCause('agents', accountId, period)];
}

function lowBalanceCause(accountId: string, period: Period): string {
  return `wallet.low_balance:${accountId}:${period.start.toISOString()}`;
}

function exhaustedCause(quota: 'runs' | 'agents', accountId: string, period: Period): string {
  return `quota.exhausted:${accountId}:${quota}:${period.start.toISOString()}`;
}

function exhausted(quota: 'runs' | 'agents', accountId: string, period: Period, limit: number): Notification {
  return {
    type: 'quota.exhausted',
    accountId,
    cause: exhaustedCause(quota, accountId, period),
    data: { quota, limit, resetsAt: period.end.toISOString(), period: periodJson(period) },
  };
}
