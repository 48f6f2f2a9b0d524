import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** Work another module does in the transaction that creates an account or sets its plan. */
export type PlanSetHook = (em: EntityManager, accountId: string) => Promise<void>;

/**
 * Where later modules plug into account changes without the accounts module knowing them: the
 * plans module grants a Free account's monthly credits the moment it is created, so its wallet
 * shows them before its first launch.
 */
@Injectable()
export class AccountHooks {
  private readonly planSet: PlanSetHook[] = [];

  onPlanSet(hook: PlanSetHook): void {
    this.planSet.push(hook);
  }

  async planWasSet(em: EntityManager, accountId: string): Promise<void> {
    for (const hook of this.planSet) await hook(em, accountId);
  }
}
