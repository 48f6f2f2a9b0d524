import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { BillingException } from '../common/errors/billing.exception';
import { formatCredits, MICROS_PER_CREDIT } from '../common/money';
import { topicsOf } from '../messaging/topics';
import { LaunchGuard, type LaunchRequest, type LaunchVerdict } from '../metering/launch-guard';
import { AllowancesService } from './allowances.service';
import { notifyOnce, type Notification } from './notifications';
import { termsOf } from './plan-accounts';
import { PlanCatalog, planFindings, planForbidsException, type Plan } from './plan-catalog';
import type { Period } from './periods';
import { usageOf } from './quotas.service';

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
    const accountId = account.id;
    const { plan, period } = termsOf(this.catalog, account, now);
    const granted = await this.allowances.ensure(em, account, plan, period, now);

    const findings = planFindings(plan, request.environment);
    if (findings.length > 0) throw planForbidsException(findings);

    const notices: Notification[] = [];
    let runsRemaining: number | null = null;
    const countsUsage = plan.runsPerPeriod !== null || plan.agentsPerPeriod !== null || plan.concurrentRuntimes !== null;
    if (request.kind === 'reservation' && countsUsage) {
      const usage = await usageOf(em, accountId, period, { exceptRuntime: request.runtimeId, agentId: request.agentId });
      if (plan.runsPerPeriod !== null && usage.runs >= plan.runsPerPeriod) {
        throw quotaExceeded('runs', `The ${plan.name} plan includes ${plan.runsPerPeriod} runs per period; all are used`, plan.runsPerPeriod, usage.runs, period.end);
      }
      const newAgent = request.agentId !== null && !usage.agentSeen;
      if (plan.agentsPerPeriod !== null && newAgent && usage.agents >= plan.agentsPerPeriod) {
        throw quotaExceeded(
          'agents',
          `The ${plan.name} plan allows ${plan.agentsPerPeriod} distinct agents per period; agent ${request.agentId} would be one more`,
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
      if (plan.runsPerPeriod !== null) runsRemaining = plan.runsPerPeriod - usage.runs - 1;
      if (plan.runsPerPeriod !== null && usage.runs + 1 === plan.runsPerPeriod) notices.push(exhausted('runs', accountId, period, plan.runsPerPeriod));
      if (plan.agentsPerPeriod !== null && newAgent && usage.agents + 1 === plan.agentsPerPeriod) {
        notices.push(exhausted('agents', accountId, period, plan.agentsPerPeriod));
      }
    }
    const topic = topicsOf(this.config).notifications;
    await notifyOnce(em, topic, notices, now);

    return {
      runsRemaining,
      walletChanged: granted > 0n,
      // Sent with the reservation (same transaction): a refused hold sends nothing.
      afterHold: async (available) => {
        const threshold = lowBalanceThreshold(plan);
        if (available < 0n || available >= threshold) return;
        await notifyOnce(
          em,
          topic,
          [
            {
              type: 'wallet.low_balance',
              accountId,
              cause: `wallet.low_balance:${accountId}:${period.start.toISOString()}`,
              data: { available: formatCredits(available), threshold: formatCredits(threshold), period: periodJson(period) },
            },
          ],
          now,
        );
      },
    };
  }
}

function periodJson(period: Period): { from: string; to: string } {
  return { from: period.start.toISOString(), to: period.end.toISOString() };
}

function exhausted(quota: 'runs' | 'agents', accountId: string, period: Period, limit: number): Notification {
  return {
    type: 'quota.exhausted',
    accountId,
    cause: `quota.exhausted:${accountId}:${quota}:${period.start.toISOString()}`,
    data: { quota, limit, resetsAt: period.end.toISOString(), period: periodJson(period) },
  };
}
