/**
 * Seat pushes dated at the membership changes that made them (plain functions, no Nest, no database).
 *
 * Stripe prorates a quantity change (old → new at `proration_date`) as (new − old) × price × the
 * share of the period left after that date. That is linear: a sequence of pushes bills exactly what
 * the members held when each push's change of quantity equals the change of active members at its
 * date. So every membership change received is turned into the change it makes to "active members
 * over time" (a jump: a date and ±n), and pushes are planned from jumps not pushed yet.
 */

export interface MemberEvent {
  id: string;
  userId: string;
  type: 'member.added' | 'member.removed';
  occurredAt: Date;
}

export interface SeatJump {
  at: Date;
  delta: number;
  /** The new change dated at or before the jump (else the earliest new one): what caused it. */
  changeId: string;
}

const byTime = (a: MemberEvent, b: MemberEvent): number => a.occurredAt.getTime() - b.occurredAt.getTime() || a.id.localeCompare(b.id);

/** Whether the member holds a seat after each instant where that may change (latest change by occurredAt, then id). */
function heldSteps(events: MemberEvent[]): Map<number, boolean> {
  const steps = new Map<number, boolean>();
  for (const e of [...events].sort(byTime)) steps.set(e.occurredAt.getTime(), e.type === 'member.added');
  return steps;
}

/**
 * What adding `newIds` to a member's history changes in "holds a seat" over time, as jumps: a late
 * `member.added` at 09:00 for a member removed at 11:00 (received before) is +1 at 09:00 and −1 at
 * 11:00; a change that does not change who held a seat when is no jump at all.
 */
export function seatJumps(history: MemberEvent[], newIds: ReadonlySet<string>): SeatJump[] {
  const jumps: SeatJump[] = [];
  const byUser = new Map<string, MemberEvent[]>();
  for (const e of history) byUser.set(e.userId, [...(byUser.get(e.userId) ?? []), e]);
  for (const events of byUser.values()) {
    const added = events.filter((e) => newIds.has(e.id)).sort(byTime);
    if (added.length === 0) continue;
    const after = heldSteps(events);
    const before = heldSteps(events.filter((e) => !newIds.has(e.id)));
    const times = [...new Set([...after.keys(), ...before.keys()])].sort((a, b) => a - b);
    let newHeld = false;
    let oldHeld = false;
    let difference = 0;
    for (const t of times) {
      newHeld = after.get(t) ?? newHeld;
      oldHeld = before.get(t) ?? oldHeld;
      const now = Number(newHeld) - Number(oldHeld);
      if (now === difference) continue;
      const cause = added.filter((e) => e.occurredAt.getTime() <= t).at(-1) ?? added[0]!;
      jumps.push({ at: new Date(t), delta: now - difference, changeId: cause.id });
      difference = now;
    }
  }
  return jumps;
}

export interface PlannedPush {
  /** The absolute quantity to set. */
  quantity: number;
  /** The quantity Stripe is expected to have before it. */
  fromQuantity: number;
  /** Its `proration_date`, in whole seconds. */
  date: Date;
}

/**
 * The pushes that bring Stripe from `start` (the quantity after every push planned before) to
 * `start + Σ deltas`, one per distinct second: each jump dated at its change, clamped into
 * [periodStart, now] (Stripe refuses a date before the current period; a change dated before it is
 * billed from the period start, the earlier period's invoice being closed; a change dated ahead is
 * billed from now). In date order; only when that would pass through a negative quantity (a late
 * removal inside a time already pushed as removed), the additions are pushed first: each push still
 * carries its own date, and the sum billed is the same.
 */
export function planPushes(start: number, jumps: { at: Date; delta: number }[], periodStart: Date | null, now: Date): PlannedPush[] {
  const floorS = (d: Date): number => Math.floor(d.getTime() / 1000);
  const upper = floorS(now);
  const lower = periodStart ? Math.min(upper, Math.ceil(periodStart.getTime() / 1000)) : -Infinity;
  const perSecond = new Map<number, number>();
  for (const j of jumps) {
    const s = Math.min(upper, Math.max(lower, floorS(j.at)));
    perSecond.set(s, (perSecond.get(s) ?? 0) + j.delta);
  }
  let groups = [...perSecond].filter(([, delta]) => delta !== 0).sort(([a], [b]) => a - b);
  const passesBelowZero = (list: [number, number][]) => {
    let q = start;
    return list.some(([, delta]) => (q += delta) < 0);
  };
  if (passesBelowZero(groups)) groups = [...groups.filter(([, d]) => d > 0), ...groups.filter(([, d]) => d < 0)];
  const pushes: PlannedPush[] = [];
  let quantity = start;
  for (const [second, delta] of groups) {
    pushes.push({ fromQuantity: quantity, quantity: Math.max(0, quantity + delta), date: new Date(second * 1000) });
    quantity = Math.max(0, quantity + delta);
  }
  return pushes;
}
