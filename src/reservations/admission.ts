import type { EntityManager } from 'typeorm';
import type { PlanAccount } from '../plans/plan-accounts';
import type { Environment } from '../pricing/environment';

/** What a launch (or an extension) asks for, as the checks after validation see it. */
export interface LaunchRequest {
  em: EntityManager;
  /** The account, read once by the caller (who has checked it is active and holds its wallet's lock). */
  account: PlanAccount;
  runtimeId: string;
  userId: string | null;
  agentId: string | null;
  environment: Environment;
  /** Micro-credits the reservation would hold (for an extension, the increase). */
  amount: bigint;
  now: Date;
  kind: 'reservation' | 'extension';
}

/** What the checks found, for the reservation's answer and what follows its hold. */
export interface LaunchVerdict {
  /** Runs left in the period once this reservation counts; null when the plan does not count runs. */
  runsRemaining: number | null;
  /** Whether the checks wrote to the wallet (the period's allowance granted lazily): what the caller read of it before is stale. */
  walletChanged: boolean;
  /** Called with the wallet's available credits after the hold (same transaction): low-balance notice. */
  afterHold(available: bigint): Promise<void>;
}

/**
 * The contract's checks between "account exists and is active" and "credits", in its order:
 * plan allows it → runs quota → agents quota → concurrency → spend limit. Each throws a
 * BillingException with the contract's code. `plans/plan-launch-guard.ts` provides it; the spend
 * limit is checked after it by `SpendLimitsService`. The caller holds the account's wallet lock
 * (first in the lock order), so that launches of one account are checked one at a time.
 */
export abstract class LaunchGuard {
  abstract check(request: LaunchRequest): Promise<LaunchVerdict>;
}
