import { BillingException } from 'src/common/errors/billing.exception';
import type { LedgerBatch } from 'src/ledger/persistence/ledger-batch';
import type { Operation } from 'src/ledger/operations/operation';
import type { HoldResult } from 'src/ledger/ledger.types';
import type { Notification } from 'src/plans/notifications';
import { termsOf, type PlanAccount } from 'src/plans/plan-accounts';
import type { Plan, PlanCatalog } from 'src/plan-catalog/plan-catalog';
import { calendarMonth, type Period } from 'src/plan-catalog/periods';
import type { UsageCount } from 'src/plans/quota-reads';
import type { Environment } from 'src/pricing/environment';
import { alertKey, type LimitRow, type Spend } from 'src/spend-limits/spend-limit-reads';
import { dueAlerts } from 'src/spend-limits/spend-limits.service';
import {
  accountActive,
  accountExists,
  agentsQuota,
  concurrencyQuota,
  countsUsage,
  exhaustedNotices,
  lowBalanceNotice,
  ownRuntime,
  planAllows,
  runsQuota,
  runsRemaining,
  spendLimit,
  type LaunchUsage,
} from './admission-checks';

/**
 * Admission: the one decision over a batch of launches (a quiet launch is a batch of one; an
 * extension is a launch of kind `extension`). Launches are decided in arrival order, each by the
 * contract's checks (admission-checks.ts) on what was read under the accounts' wallet locks, then
 * the credits by the ledger on its wallet's state (LedgerBatch); a launch that passes counts at once
 * for the next launches of its account. Nothing here reads or writes the database: the caller
 * (reservation-batch.ts) reads, decides with `admit`, then writes the holds, the runtime rows and
 * the notices the decisions ask for.
 */

/** A runtime known before the launch: reserved already, or made known by its events (its account). */
export interface KnownRuntime {
  account: string;
  reserved: boolean;
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
  /** Whether its caller has gone (a launch no one waits for reserves nothing). */
  abandoned?: () => boolean;
}

/** What a launch that passed leaves to be done with its hold. */
export interface Admitted {
  /** The hold's result, once the batch is written (null: no hold). */
  hold: (() => HoldResult) | null;
  runsRemaining: number | null;
  /** Notices it sends that were not sent yet (quota exhausted, low balance). */
  notices: Notification[];
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
    let hold: (() => HoldResult) | null = null;
    if (launch.hold) {
      const decided = ledger.decide(launch.accountId, launch.hold, now);
      if ('refused' in decided) throw decided.refused;
      hold = decided.answer;
    }
    // Passed: it counts now.
    const notices = exhaustedNotices(plan, period, account.id, launch.agentId, usage);
    this.count(launch, usage);
    // (The hold's balance is known now; only its transaction id waits for the commit.)
    const low = hold ? lowBalanceNotice(plan, period, account.id, hold().balance.available) : null;
    const alertsDue = limits.some((l) => {
      const spend = this.spendOf(l);
      return dueAlerts(l, spend.charged + spend.held).some((a) => !this.alertsSent.has(alertKey(l.id, a)));
    });
    return {
      hold,
      runsRemaining: runsRemaining(plan, usage),
      notices: [...notices, ...(low ? [low] : [])].filter((n) => !this.noticesSent.has(n.cause)),
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
