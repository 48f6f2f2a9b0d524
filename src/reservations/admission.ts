import { BillingException } from 'src/common/errors/billing.exception';
import { formatCredits } from 'src/common/money';
import type { LedgerBatch } from 'src/ledger/persistence/ledger-batch';
import type { Operation } from 'src/ledger/operations/operation';
import type { HoldResult } from 'src/ledger/ledger.types';
import { lowBalanceThreshold, type Notification } from 'src/plans/notifications';
import { termsOf, type PlanAccount } from 'src/plans/plan-accounts';
import { planFindings, planForbidsException, type Plan, type PlanCatalog } from 'src/plan-catalog/plan-catalog';
import { calendarMonth, type Period } from 'src/plan-catalog/periods';
import type { UsageCount } from 'src/plans/plan-reads';
import type { Environment } from 'src/pricing/environment';
import { alertKey, type LimitRow, type Spend } from 'src/spend-limits/spend-limit-reads';
import { dueAlerts } from 'src/spend-limits/spend-limits.service';

/**
 * Admission: the one decision over a batch of launches (a quiet launch is a batch of one; an
 * extension is a launch of kind `extension`). Launches are decided in arrival order, each by the
 * contract's checks (below) on what was read under the accounts' wallet locks, then
 * the credits by the ledger on its wallet's state (LedgerBatch); a launch that passes counts at once
 * for the next launches of its account. Nothing here reads or writes the database: the caller
 * (reservation-batch.ts) reads, decides with `admit`, then writes the holds, the runtime rows and
 * the notices the decisions ask for.
 */

/** A runtime known before the launch: reserved already, or made known by its events (its account). */
export interface KnownRuntime {
  account: string;
  reserved: boolean;
  /** Settled or voided already (its events ended it). */
  ended: boolean;
}

/** A launch as admission sees it (validated and priced). */
export interface Launch {
  kind: 'reservation' | 'extension';
  runtimeId: string;
  accountId: string;
  userId: string | null;
  agentId: string | null;
  environment: Environment;
  /** Micro-credits to hold (for an extension, the increase). */
  amount: bigint;
  /** The ledger's operation holding `amount` (null: nothing to hold, an extension that costs nothing more). */
  hold: Operation<HoldResult> | null;
  runtime: KnownRuntime | undefined;
  /** Metering's reservation of a runtime whose events came first (it may have ended: then it is settled on the new hold). */
  ofEvents?: boolean;
  /** Whether its caller has gone (a launch no one waits for reserves nothing). */
  abandoned?: () => boolean;
  /** An extension's runtime told to terminate for other reasons than its reservation running out (their reasons). */
  told?: readonly string[];
}

/** What a launch that passed leaves to be done with its hold. */
export interface Admitted {
  /** The hold's result, once the batch is written (null: no hold). */
  hold: (() => HoldResult) | null;
  runsRemaining: number | null;
  /** Notices it sends that were not sent yet (quota exhausted, low balance). */
  notices: Notification[];
  /** With a `wallet.low_balance` among them: the wallet's low-balance line to set once it is sent (its cause names `rises`). */
  lowBalance: { cause: string; line: bigint; rises: bigint } | null;
  /** Whether it crosses a spend-limit threshold not alerted yet. */
  alertsDue: boolean;
  /** The spend limits in its scope (with a cap), for their alerts. */
  limits: LimitRow[];
}

export type Decision = { admitted: Admitted } | { replay: true } | { refused: BillingException };

/** What was read of one account under its wallet lock. */
export interface AccountReads {
  account: PlanAccount | undefined;
  /** The spend limits in scope by member ('' for a launch without one). */
  limits: ReadonlyMap<string, LimitRow[]>;
}

/** What an account's checks count (read only when they count something). */
export interface AccountCounts {
  usage: UsageCount | undefined;
  spend: ReadonlyMap<string, Spend>;
  alertsSent: ReadonlySet<string>;
  noticesSent: ReadonlySet<string>;
}

/**
 * One account's admission: its terms, what it counts, kept current as its launches pass. Built by
 * `AccountAdmission.of` from the reads, then given its counts (`counted`) when `needs` says so.
 */
export class AccountAdmission {
  private usage: (Omit<UsageCount, 'agentsSeen'> & { seen: Set<string> }) | null = null;
  private readonly spend = new Map<string, Spend>();
  private alertsSent: ReadonlySet<string> = new Set();
  private noticesSent: ReadonlySet<string> = new Set();

  private constructor(
    readonly accountId: string,
    readonly reads: AccountReads,
    readonly terms: { account: PlanAccount; plan: Plan; period: Period } | null,
    private readonly month: Period,
  ) {}

  static of(catalog: PlanCatalog, accountId: string, reads: AccountReads, now: Date): AccountAdmission {
    const terms = reads.account ? { account: reads.account, ...termsOf(catalog, reads.account, now) } : null;
    return new AccountAdmission(accountId, reads, terms, calendarMonth(now));
  }

  /** The capped limits in scope of any of the account's launches. */
  cappedLimits(): LimitRow[] {
    const all = [...this.reads.limits.values()].flat().filter((l) => l.limit_micros !== null);
    return [...new Map(all.map((l) => [l.id, l])).values()];
  }

  /** What the checks count: usage (the plan has quotas), the spend of capped limits' scopes. */
  needs(): { usage: boolean; scopes: string[]; limits: string[]; month: Period } {
    const capped = this.cappedLimits();
    return {
      usage: this.terms !== null && countsUsage(this.terms.plan),
      scopes: [...new Set(capped.map((l) => l.scope_user_id))],
      limits: capped.map((l) => l.id),
      month: this.month,
    };
  }

  counted(counts: AccountCounts): void {
    if (this.terms && countsUsage(this.terms.plan)) {
      const u = counts.usage ?? { runs: 0, agents: 0, active: 0, agentsSeen: new Set<string>() };
      this.usage = { runs: u.runs, agents: u.agents, active: u.active, seen: new Set(u.agentsSeen) };
    }
    for (const [scope, spend] of counts.spend) this.spend.set(scope, { ...spend });
    this.alertsSent = counts.alertsSent;
    this.noticesSent = counts.noticesSent;
  }

  /** One launch, in the contract's order; what passes counts now for the account's next launches. */
  decide(launch: Launch, ledger: LedgerBatch, now: Date): Admitted | { replay: true } {
    if (launch.abandoned?.()) throw abandonedLaunch(launch.runtimeId);
    if (launch.kind === 'reservation' && launch.runtime?.reserved) return { replay: true };
    ownRuntime(launch.runtimeId, launch.accountId, launch.runtime?.account ?? null);
    if (launch.kind === 'reservation' && !launch.ofEvents) notEnded(launch.runtimeId, launch.runtime);
    accountExists(launch.accountId, this.terms?.account);
    const { account, plan, period } = this.terms!;
    accountActive(account);
    planAllows(plan, launch.environment);
    const usage = launch.kind === 'reservation' ? this.usageFor(launch.agentId) : null;
    if (usage) {
      runsQuota(plan, period, usage);
      agentsQuota(plan, period, launch.agentId, usage);
      concurrencyQuota(plan, usage);
    }
    const limits = (this.reads.limits.get(launch.userId ?? '') ?? []).filter((l) => l.limit_micros !== null);
    for (const limit of limits) spendLimit(limit, this.spendOf(limit), launch.amount, this.month);
    if (launch.told?.length) throw beingTerminated(launch.runtimeId, launch.told);
    let hold: (() => HoldResult) | null = null;
    // The wallet's low-balance line before the hold (the hold's decision gives the balance before it).
    const line = launch.hold ? ledger.lowBalanceLine(launch.accountId) : undefined;
    if (launch.hold) {
      const decided = ledger.decide(launch.accountId, launch.hold, now);
      if ('refused' in decided) throw decided.refused;
      hold = decided.answer;
    }
    // Passed: it counts now.
    const notices = exhaustedNotices(plan, period, account.id, launch.agentId, usage);
    this.count(launch, usage);
    // (The hold's balance is known now; only its transaction id waits for the commit.)
    const held = hold?.();
    const low =
      held && line
        ? lowBalanceNotice(plan, period, account.id, { ...line, available: held.before.available }, held.balance.available)
        : null;
    const lowDue = low !== null && !this.noticesSent.has(low.notice.cause);
    const alertsDue = limits.some((l) => {
      const spend = this.spendOf(l);
      return dueAlerts(l, spend.charged + spend.held).some((a) => !this.alertsSent.has(alertKey(l.id, a, l.limit_micros)));
    });
    return {
      hold,
      runsRemaining: runsRemaining(plan, usage),
      notices: [...notices.filter((n) => !this.noticesSent.has(n.cause)), ...(lowDue ? [low.notice] : [])],
      lowBalance: lowDue ? { cause: low.notice.cause, ...low.mark } : null,
      alertsDue,
      limits,
    };
  }

  private usageFor(agentId: string | null): LaunchUsage | null {
    if (!this.usage) return null;
    return { ...this.usage, agentSeen: agentId !== null && this.usage.seen.has(agentId) };
  }

  private count(launch: Launch, usage: LaunchUsage | null): void {
    if (this.usage && usage) {
      this.usage.runs += 1;
      this.usage.active += 1;
      if (launch.agentId !== null && !usage.agentSeen) {
        this.usage.seen.add(launch.agentId);
        this.usage.agents += 1;
      }
    }
    for (const [scope, spend] of this.spend) if (scope === '' || scope === launch.userId) spend.held += launch.amount;
  }

  private spendOf(limit: LimitRow): Spend {
    const spend = this.spend.get(limit.scope_user_id);
    if (!spend) throw new Error(`the spend of limit ${limit.id} was not read`);
    return spend;
  }
}

/**
 * The decision over a batch: each launch in arrival order by its account's admission. A refusal
 * changes nothing; anything else thrown (a bug, a state the batch cannot apply) fails the batch.
 */
export function admit(
  accounts: ReadonlyMap<string, AccountAdmission>,
  launches: readonly Launch[],
  ledger: LedgerBatch,
  now: Date,
): Decision[] {
  return launches.map((launch): Decision => {
    try {
      const decided = accounts.get(launch.accountId)!.decide(launch, ledger, now);
      return 'replay' in decided ? decided : { admitted: decided };
    } catch (refused) {
      if (!(refused instanceof BillingException)) throw refused;
      return { refused };
    }
  });
}

/** A launch whose client closed its connection before it was worked on: nothing is reserved. */
export function abandonedLaunch(runtimeId: string): BillingException {
  return new BillingException(
    'DL_BILLING_UNAVAILABLE',
    `The client closed the connection before runtime ${runtimeId} was reserved: nothing was reserved`,
  );
}

// --- The contract's launch checks ---------------------------------------------------------------

/**
 * The contract's launch checks, in its order, each a pure function of what was read under the
 * account's wallet lock: it throws the contract's BillingException or returns. (The request was
 * validated and priced before: 400/422. Credits are the ledger's own decision, last.)
 *
 *   runtime not another account's → account exists → account active → plan allows it → runs quota
 *   → agents quota → concurrency → spend limits → (an extension: its runtime not being terminated) → (credits)
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

/**
 * A runtime whose events ended it before any reservation (settled or voided without a hold) has
 * nothing left to reserve: a hold taken now would never be settled. (Metering's own reservation of
 * it, `ofEvents`, is settled on at once.)
 */
export function notEnded(runtimeId: string, runtime: KnownRuntime | undefined): void {
  if (!runtime?.ended || runtime.reserved) return;
  throw new BillingException('DL_BILLING_IDEMPOTENCY_CONFLICT', `Runtime ${runtimeId} has already ended`, [
    { field: 'runtimeId', message: 'has already ended: its events came before any reservation, so there is nothing left to reserve' },
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

/**
 * An extension of a runtime told to terminate for another reason than its reservation running out (a
 * spend limit, a suspension, silence): more minutes would not keep it running, so none are sold. Checked
 * after the contract's checks, so that a suspended account or a limit passed is refused as such.
 */
export function beingTerminated(runtimeId: string, reasons: readonly string[]): BillingException {
  const told = reasons.join(', ');
  return new BillingException('DL_BILLING_REQUEST_INVALID', `Runtime ${runtimeId} is being terminated (${told})`, [
    { field: 'runtimeId', message: `is being terminated (${told}): an extension cannot keep it running` },
  ]);
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

/**
 * `wallet.low_balance` when a reservation leaves `available` below the plan's threshold, once per
 * crossing: its cause names the crossing by the wallet's count of returns to the line (`rises`),
 * which the ledger counts when a write leaves the available balance at or above the line the last
 * notice set (a top-up, a grant, a release, the monthly reset). A reservation that itself takes the
 * balance from at or above the threshold to below it is a crossing too (the line set may be an
 * older, higher threshold). Returns the notice and the line to set once it is sent (null: not low).
 */
export function lowBalanceNotice(
  plan: Plan,
  period: Period,
  accountId: string,
  before: { available: bigint; line: bigint | null; rises: bigint },
  available: bigint,
): { notice: Notification; mark: { line: bigint; rises: bigint } } | null {
  const threshold = lowBalanceThreshold(plan);
  if (available < 0n || available >= threshold) return null;
  const rises = before.line !== null && before.available >= threshold ? before.rises + 1n : before.rises;
  return {
    notice: {
      type: 'wallet.low_balance',
      accountId,
      cause: lowBalanceCause(accountId, period, rises),
      data: { available: formatCredits(available), threshold: formatCredits(threshold), period: periodJson(period) },
    },
    mark: { line: threshold, rises },
  };
}

function periodJson(period: Period): { from: string; to: string } {
  return { from: period.start.toISOString(), to: period.end.toISOString() };
}

/**
 * The causes of the notices a launch may send (each sent once: notifications_sent); the low balance's
 * when the wallet's count of rises is known (read before the counts).
 */
export function launchNoticeCauses(accountId: string, period: Period, rises?: bigint): string[] {
  const low = rises === undefined ? [] : [lowBalanceCause(accountId, period, rises)];
  return [...low, exhaustedCause('runs', accountId, period), exhaustedCause('agents', accountId, period)];
}

/** One crossing of the threshold: the account, the period, and how many times the balance came back to the line before it. */
function lowBalanceCause(accountId: string, period: Period, rises: bigint): string {
  return `wallet.low_balance:${accountId}:${period.start.toISOString()}:${rises}`;
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
