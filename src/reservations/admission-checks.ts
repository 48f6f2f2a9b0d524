import { BillingException } from 'src/common/errors/billing.exception';
import { formatCredits } from 'src/common/money';
import { lowBalanceThreshold, type Notification } from 'src/plans/notifications';
import type { PlanAccount } from 'src/plans/plan-accounts';
import { planFindings, planForbidsException, type Plan } from 'src/plan-catalog/plan-catalog';
import type { Period } from 'src/plan-catalog/periods';
import type { Environment } from 'src/pricing/environment';
import type { LimitRow, Spend } from 'src/spend-limits/spend-limit-reads';

/**
 * The contract's launch checks, in its order, each a pure function of what was read under the
 * account's wallet lock: it throws the contract's BillingException or returns. (The request was
 * validated and priced before: 400/422. Credits are the ledger's own decision, last.)
 *
 *   runtime not another account's → account exists → account active → plan allows it → runs quota
 *   → agents quota → concurrency → spend limits → (credits)
 */

/**
 * A runtime known before its reservation (its events came first) belongs to the account its events
 * named: a reservation of it for another account is refused (runtimeId is the reservation's key).
 */
export function ownRuntime(runtimeId: string, accountId: string, runtimeAccount: string | null): void {
  if (runtimeAccount === null || runtimeAccount === accountId) return;
  throw new BillingException('DL_BILLING_IDEMPOTENCY_CONFLICT', `Runtime ${runtimeId} belongs to another account`, [
    { field: 'runtimeId', message: 'is a runtime of another account' },
  ]);
}

/** 404 for an account that does not exist (or is on no known plan). */
export function accountExists(accountId: string, account: PlanAccount | undefined | null): PlanAccount {
  if (!account) throw BillingException.notFound(`Account ${accountId}`);
  return account;
}

/** 403 for a suspended account. */
export function accountActive(account: PlanAccount): void {
  if (account.status !== 'active') {
    throw new BillingException('DL_BILLING_ACCOUNT_SUSPENDED', `Account ${account.id} is suspended: no new launches`);
  }
}

/** Refuses an environment the plan does not allow (its size class, GPUs). */
export function planAllows(plan: Plan, environment: Environment): void {
  const findings = planFindings(plan, environment);
  if (findings.length > 0) throw planForbidsException(findings);
}

export type QuotaName = 'runs' | 'agents' | 'concurrency';

/** An account's usage before a launch, as the quota checks see it. */
export interface LaunchUsage {
  runs: number;
  agents: number;
  /** Whether the launching agent is already one of the period's agents (it may launch again). */
  agentSeen: boolean;
  active: number;
}

export function quotaExceeded(quota: QuotaName, message: string, limit: number, used: number, resetsAt: Date | null): BillingException {
  return new BillingException('DL_BILLING_QUOTA_EXCEEDED', message, [], {
    quota,
    limit,
    used,
    ...(resetsAt ? { resetsAt: resetsAt.toISOString() } : {}),
  });
}

/** Whether a launch on the plan needs the account's usage counted (runs, agents or concurrency quotas). */
export function countsUsage(plan: Plan): boolean {
  return plan.runsPerPeriod !== null || plan.agentsPerPeriod !== null || plan.concurrentRuntimes !== null;
}

/** 429 when the period's runs are all used. */
export function runsQuota(plan: Plan, period: Period, usage: LaunchUsage): void {
  if (plan.runsPerPeriod !== null && usage.runs >= plan.runsPerPeriod) {
    throw quotaExceeded(
      'runs',
      `The ${plan.name} plan includes ${plan.runsPerPeriod} runs per period; all are used`,
      plan.runsPerPeriod,
      usage.runs,
      period.end,
    );
  }
}

/** 429 when a new agent would be one more than the period allows. */
export function agentsQuota(plan: Plan, period: Period, agentId: string | null, usage: LaunchUsage): void {
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
}

/** 429 when the plan's runtimes at once are all active. */
export function concurrencyQuota(plan: Plan, usage: LaunchUsage): void {
  if (plan.concurrentRuntimes !== null && usage.active >= plan.concurrentRuntimes) {
    throw quotaExceeded(
      'concurrency',
      `The ${plan.name} plan allows ${plan.concurrentRuntimes} runtimes at once; ${usage.active} are active`,
      plan.concurrentRuntimes,
      usage.active,
      null,
    );
  }
}

/**
 * Refuses (DL_BILLING_SPEND_LIMIT_REACHED) a reservation of `amount` that would take the limit's
 * scope past it, given the scope's spend this period before it.
 */
export function spendLimit(limit: LimitRow, spend: Spend, amount: bigint, period: Period): void {
  if (limit.limit_micros === null) return;
  const cap = BigInt(limit.limit_micros);
  const used = spend.charged + spend.held;
  if (used + amount <= cap) return;
  const remaining = cap > used ? cap - used : 0n;
  throw new BillingException(
    'DL_BILLING_SPEND_LIMIT_REACHED',
    `This would pass the ${limit.scope_user_id ? `spend limit of member ${limit.scope_user_id}` : 'account spend limit'} of ${formatCredits(cap)} credits this month`,
    [],
    {
      remaining: formatCredits(remaining),
      limit: formatCredits(cap),
      spent: formatCredits(spend.charged),
      held: formatCredits(spend.held),
      required: formatCredits(amount),
      scope: limit.scope_user_id ? { userId: limit.scope_user_id } : null,
      resetsAt: period.end.toISOString(),
    },
  );
}

/** The runs left once a launch that passed counts (null: the plan does not count runs). */
export function runsRemaining(plan: Plan, usage: LaunchUsage | null): number | null {
  return plan.runsPerPeriod === null || !usage ? null : plan.runsPerPeriod - usage.runs - 1;
}

/** The `quota.exhausted` notices a launch that passed sends: the quotas whose last slot it takes. */
export function exhaustedNotices(
  plan: Plan,
  period: Period,
  accountId: string,
  agentId: string | null,
  usage: LaunchUsage | null,
): Notification[] {
  if (!usage) return [];
  const notices: Notification[] = [];
  if (plan.runsPerPeriod !== null && usage.runs + 1 === plan.runsPerPeriod) {
    notices.push(exhausted('runs', accountId, period, plan.runsPerPeriod));
  }
  const newAgent = agentId !== null && !usage.agentSeen;
  if (plan.agentsPerPeriod !== null && newAgent && usage.agents + 1 === plan.agentsPerPeriod) {
    notices.push(exhausted('agents', accountId, period, plan.agentsPerPeriod));
  }
  return notices;
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
