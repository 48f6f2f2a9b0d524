import { Inject, Injectable, Optional } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/**
 * What a runtime's settlement tells other modules (the ancillary module meters paused memory from
 * it): a settlement by its events, a correction of it, or a forced one by the sweeper.
 */
export interface SettledRuntime {
  runtimeId: string;
  accountId: string;
  sizeClass: string | null;
  /** The rate-card version the runtime was reserved under (its size class's resources). */
  rateCardVersion: string | null;
  /** The termination (for a forced settlement: the end it charged up to). */
  terminatedAt: Date;
  /** The closed paused intervals of the session, from the set of its events. */
  pausedIntervals: readonly { from: Date; to: Date }[];
  pausedMs: number;
  /** First settlement of the runtime: nothing was recorded for it before (no read needed). */
  first: boolean;
}

/**
 * What a hook asks to run once the settled runtime's row says so (later in the same transaction):
 * e.g. a spend-limit check, which must not count the runtime's hold beside its charge.
 */
export type AfterSettlement = () => Promise<void>;

export type SettlementHook = (em: EntityManager, settled: SettledRuntime) => Promise<AfterSettlement | void>;

/** The hooks a settlement runs, in order: provided by the module that composes the app (src/extensions.module.ts). */
export const SETTLEMENT_HOOKS = Symbol('SettlementHook[]');

/**
 * Called in metering's transaction, after the ledger settled (or corrected) a runtime — terminated by
 * its events, or settled by the sweeper without them — with the row locks already taken (runtime →
 * wallet). The hooks are SETTLEMENT_HOOKS, so that metering does not depend on the modules that listen.
 */
@Injectable()
export class SettlementHooks {
  constructor(@Optional() @Inject(SETTLEMENT_HOOKS) private readonly hooks: readonly SettlementHook[] = []) {}

  /** Whether a settlement needs the hooks: a first one only when the runtime was paused (a never-paused runtime costs nothing). */
  wanted(settled: Pick<SettledRuntime, 'pausedMs' | 'first'>): boolean {
    return this.hooks.length > 0 && (!settled.first || settled.pausedMs > 0);
  }

  /** Runs the hooks; returns what they ask to run once the runtime's row is written as settled. */
  async settled(em: EntityManager, settled: SettledRuntime): Promise<AfterSettlement[]> {
    if (!this.wanted(settled)) return [];
    const after: AfterSettlement[] = [];
    for (const hook of this.hooks) {
      const then = await hook(em, settled);
      if (then) after.push(then);
    }
    return after;
  }
}
