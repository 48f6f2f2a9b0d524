import type { EntityManager } from 'typeorm';
import type { Environment } from '../pricing/environment';

/** What a launch (or an extension) asks for, as the checks after validation see it. */
export interface LaunchRequest {
  em: EntityManager;
  accountId: string;
  plan: string;
  runtimeId: string;
  userId: string | null;
  agentId: string | null;
  environment: Environment;
  /** Micro-credits the reservation would hold (for an extension, the increase). */
  amount: bigint;
  now: Date;
  kind: 'reservation' | 'extension';
}

/**
 * The contract's checks between "account exists and is active" and "credits", in its order:
 * plan allows it → runs quota → agents quota → concurrency → spend limit. Each throws a
 * BillingException with the contract's code. `plans/plan-launch-guard.ts` provides it; the spend
 * limit is checked after it by `SpendLimitsService`, under the wallet lock.
 */
export abstract class LaunchGuard {
  abstract check(request: LaunchRequest): Promise<void>;
}
