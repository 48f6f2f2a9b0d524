import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planPushes, seatJumps, type MemberEvent } from './seat-dates';

const at = (hour: number): Date => new Date(Date.UTC(2026, 11, 6, hour));
const ev = (id: string, userId: string, type: MemberEvent['type'], hour: number): MemberEvent => ({
  id,
  userId,
  type,
  occurredAt: at(hour),
});
const simple = (jumps: { at: Date; delta: number }[]) => jumps.map((j) => [j.at.getUTCHours(), j.delta]);

describe('seat pushes dated at their membership changes', () => {
  it('turns a change into what it does to the seats over time, a late stale addition included', () => {
    expect(simple(seatJumps([ev('a', 'u', 'member.added', 10)], new Set(['a'])))).toEqual([[10, 1]]);
    // Removed at 11 (known), added at 9 (received late): held the seat from 9 to 11.
    const history = [ev('r', 'u', 'member.removed', 11), ev('a', 'u', 'member.added', 9)];
    expect(simple(seatJumps(history, new Set(['a'])))).toEqual([
      [9, 1],
      [11, -1],
    ]);
    // Added at 9 (known), added again at 10: nothing changes.
    expect(seatJumps([ev('a', 'u', 'member.added', 9), ev('b', 'u', 'member.added', 10)], new Set(['b']))).toEqual([]);
  });

  it('plans one push per second in date order, clamped into the period and never ahead of now', () => {
    const pushes = planPushes(
      2,
      [
        { at: at(14), delta: 1 },
        { at: at(1), delta: 1 },
        { at: at(23), delta: -1 },
        { at: at(14), delta: 1 },
      ],
      at(5),
      at(20),
    );
    expect(pushes.map((p) => [p.fromQuantity, p.quantity, p.date.getUTCHours()])).toEqual([
      [2, 3, 5],
      [3, 5, 14],
      [5, 4, 20],
    ]);
  });

  it('pushes the additions first when date order would pass below zero seats, each still at its own date', () => {
    const pushes = planPushes(
      0,
      [
        { at: at(9), delta: -1 },
        { at: at(11), delta: 1 },
      ],
      null,
      at(20),
    );
    expect(pushes.map((p) => [p.fromQuantity, p.quantity, p.date.getUTCHours()])).toEqual([
      [0, 1, 11],
      [1, 0, 9],
    ]);
  });

  it('ends at the start plus every change, never below zero, and bills what the changes say', () => {
    const jump = fc.record({ hour: fc.integer({ min: 0, max: 23 }), delta: fc.integer({ min: -3, max: 3 }) });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5 }), fc.array(jump, { maxLength: 8 }), (extra, list) => {
        const jumps = list.map((j) => ({ at: at(j.hour), delta: j.delta }));
        // Any start that ends at zero or more (in date order the count may pass below zero: then additions go first).
        const total = jumps.reduce((s, j) => s + j.delta, 0);
        const start = extra + Math.max(0, -total);
        const pushes = planPushes(start, jumps, null, at(23));
        expect(pushes.at(-1)?.quantity ?? start).toBe(start + total);
        expect(pushes.every((p) => p.quantity >= 0)).toBe(true);
        // Billed by Stripe: each push's change of quantity from its date; by the changes: each delta from its date.
        const billed = pushes.reduce((s, p) => s + (p.quantity - p.fromQuantity) * (24 - p.date.getUTCHours()), 0);
        expect(billed).toBe(jumps.reduce((s, j) => s + j.delta * (24 - j.at.getUTCHours()), 0));
      }),
    );
  });
});
