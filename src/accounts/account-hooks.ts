import { Inject, Injectable, Optional } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** Work another module does in the transaction that creates an account or sets its plan. */
export type PlanSetHook = (em: EntityManager, accountId: string) => Promise<void>;

/** What runs, in order, when an account is created or its plan set: provided by the module that composes the app (src/extensions.module.ts). */
export const PLAN_SET_HOOKS = Symbol('PlanSetHook[]');

/**
 * How later modules take part in account changes without the accounts module knowing them
 * (PLAN_SET_HOOKS): the ledger creates the new account's wallet, and the plans module grants a
 * Free account's monthly credits the moment it is created, so its wallet shows them before its
 * first launch.
 */
@Injectable()
export class AccountHooks {
  constructor(@Optional() @Inject(PLAN_SET_HOOKS) private readonly planSet: readonly PlanSetHook[] = []) {}

  async planWasSet(em: EntityManager, accountId: string): Promise<void> {
    for (const hook of this.planSet) await hook(em, accountId);
  }
}
