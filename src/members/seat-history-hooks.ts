import { Inject, Injectable, Optional } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/**
 * What a membership transaction added to an account's seat history (`account_member_events`): the
 * changes received, applied to the member's current state or stale for it (a stale change still says
 * who held a seat before), with the earliest `occurredAt` among them.
 */
export interface SeatHistoryChange {
  accountId: string;
  /** The earliest `occurredAt` of the changes (who held a seat from then on may differ). */
  since: Date;
  /** The changes, earliest first. */
  changes: { id: string; userId: string; type: 'member.added' | 'member.removed'; occurredAt: Date }[];
  /** Active members at an instant, from the history as this transaction sees it. */
  seatsAt: (at: Date) => Promise<number>;
  /** Every change in the history of these members (with this transaction's), as this transaction sees it. */
  historyOf: (userIds: string[]) => Promise<{ id: string; userId: string; type: 'member.added' | 'member.removed'; occurredAt: Date }[]>;
}

/** Work another module does in the membership transaction, once the changes are in the history. */
export type SeatHistoryHook = (em: EntityManager, changed: SeatHistoryChange[]) => Promise<void>;

/** The hooks, in order: provided by the module that composes the app (src/extensions.module.ts). */
export const SEAT_HISTORY_HOOKS = Symbol('SeatHistoryHook[]');

/**
 * How later modules take part in membership changes without the members module knowing them
 * (SEAT_HISTORY_HOOKS): the Stripe module rechecks the seats of invoices created after a change that
 * was received after them. They run in the membership transaction, before its audit rows.
 */
@Injectable()
export class SeatHistoryHooks {
  constructor(@Optional() @Inject(SEAT_HISTORY_HOOKS) private readonly hooks: readonly SeatHistoryHook[] = []) {}

  async historyChanged(em: EntityManager, changed: SeatHistoryChange[]): Promise<void> {
    if (changed.length === 0) return;
    for (const hook of this.hooks) await hook(em, changed);
  }
}
