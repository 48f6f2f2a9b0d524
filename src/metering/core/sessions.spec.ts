import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LifecycleType } from '../lifecycle-event';
import { buildSession, chargedRun, runningMs, type MeteredEvent } from './sessions';

const t0 = Date.parse('2026-12-02T09:00:00.000Z');
const at = (minutes: number): Date => new Date(t0 + minutes * 60_000);
let n = 0;
const ev = (type: LifecycleType, minutes: number, seq: number, data?: Record<string, unknown>) => ({
  id: `e${n++}`,
  type,
  occurredAt: at(minutes),
  seq,
  data,
});

describe('buildSession', () => {
  it('charges running time only: 30 minutes running around a 10-minute pause', () => {
    const s = buildSession([
      ev('runtime.started', 0, 1),
      ev('runtime.paused', 10, 2),
      ev('runtime.resumed', 20, 3),
      ev('runtime.heartbeat', 25, 4),
      ev('runtime.terminated', 40, 5, { reason: 'user' }),
    ]);
    expect(s.status).toBe('terminated');
    expect(s.closedMs).toBe(30 * 60_000);
    expect(s.intervals).toHaveLength(2);
    expect(s.terminationReason).toBe('user');
  });

  it('gives the paused intervals, each closed by a resume or the termination; a pause still open or after termination counts nothing', () => {
    const s = buildSession([
      ev('runtime.started', 0, 1),
      ev('runtime.paused', 10, 2),
      ev('runtime.resumed', 20, 3),
      ev('runtime.paused', 30, 4),
      ev('runtime.paused', 32, 5),
      ev('runtime.terminated', 45, 6),
      ev('runtime.resumed', 50, 7),
    ]);
    expect(s.pausedIntervals).toEqual([
      { from: at(10), to: at(20) },
      { from: at(30), to: at(45) },
    ]);
    expect(s.pausedMs).toBe(25 * 60_000);
    expect(buildSession([ev('runtime.started', 0, 1), ev('runtime.paused', 10, 2)]).pausedMs).toBe(0);
    expect(buildSession([ev('runtime.paused', 0, 1), ev('runtime.terminated', 10, 2)]).pausedMs).toBe(0);
  });

  it('keeps an open interval while running and counts it up to now', () => {
    const s = buildSession([ev('runtime.started', 0, 1), ev('runtime.heartbeat', 5, 2)]);
    expect(s.status).toBe('running');
    expect(runningMs(s, at(12))).toBe(12 * 60_000);
    expect(s.lastSeenAt).toEqual(at(5));
  });

  it('charges nothing when the launch failed, alone or after a start that no pause or termination closed', () => {
    for (const events of [
      [ev('runtime.launch_failed', 1, 2, { reason: 'image pull' })],
      [ev('runtime.started', 0, 1), ev('runtime.launch_failed', 1, 2, { reason: 'image pull' }), ev('runtime.heartbeat', 2, 3)],
      [ev('runtime.terminated', 3, 3, { reason: 'user' }), ev('runtime.launch_failed', 1, 2, { reason: 'image pull' })],
    ]) {
      const s = buildSession(events);
      expect(s).toMatchObject({
        status: 'launch_failed',
        closedMs: 0,
        intervals: [],
        terminationReason: 'image pull',
        contradictedLaunchFailure: null,
      });
    }
  });

  it('keeps the charge of a run that happened and flags the launch failure that contradicts it, in every order', () => {
    const started = ev('runtime.started', 0, 1);
    const failed = {
      id: 'late-failure',
      type: 'runtime.launch_failed' as const,
      occurredAt: new Date(t0 + 1000),
      seq: 2,
      data: { reason: 'image pull' },
    };
    const terminated = ev('runtime.terminated', 10, 3, { reason: 'user' });
    const orders = [
      [started, terminated, failed],
      [started, failed, terminated],
      [terminated, started, failed],
      [terminated, failed, started],
      [failed, started, terminated],
      [failed, terminated, started],
    ];
    for (const order of orders) {
      const s = buildSession([...order, order[0]!]);
      expect(s).toMatchObject({ status: 'terminated', closedMs: 10 * 60_000, terminationReason: 'user' });
      expect(s.contradictedLaunchFailure).toEqual({ eventId: 'late-failure', at: failed.occurredAt, reason: 'image pull' });
    }
  });

  it('ignores events after termination except as a sign of life', () => {
    const s = buildSession([ev('runtime.started', 0, 1), ev('runtime.terminated', 5, 2), ev('runtime.resumed', 6, 3)]);
    expect(s.closedMs).toBe(5 * 60_000);
    expect(s.lastSeenAt).toEqual(at(6));
  });

  it('orders events of the same instant by seq', () => {
    const s = buildSession([ev('runtime.terminated', 5, 3), ev('runtime.started', 0, 1), ev('runtime.paused', 5, 2)]);
    expect(s.closedMs).toBe(5 * 60_000);
    expect(s.status).toBe('terminated');
  });

  it('gives the same session (running and paused intervals) for any order and any duplication of the same events', () => {
    const types: LifecycleType[] = [
      'runtime.started',
      'runtime.paused',
      'runtime.resumed',
      'runtime.heartbeat',
      'runtime.terminated',
      'runtime.launch_failed',
    ];
    const history = fc
      .array(fc.record({ type: fc.constantFrom(...types), gap: fc.integer({ min: 0, max: 30 }) }), { minLength: 1, maxLength: 30 })
      .map((steps) => {
        let minute = 0;
        return steps.map((s, i): MeteredEvent => {
          minute += s.gap;
          return { id: `h${i}`, type: s.type, occurredAt: at(minute), seq: i };
        });
      });
    fc.assert(
      fc.property(history, fc.array(fc.nat()), (events, picks) => {
        const reference = buildSession(events);
        const delivered = [...events, ...picks.map((p) => events[p % events.length]!)];
        const shuffled = fc.sample(fc.shuffledSubarray(delivered, { minLength: delivered.length }), 1)[0]!;
        expect(buildSession(shuffled)).toEqual(reference);
      }),
    );
  });
});

describe('chargedRun', () => {
  const session = buildSession([ev('runtime.started', 0, 1), ev('runtime.paused', 10, 2), ev('runtime.resumed', 20, 3)]);

  it('closes the run at the end chosen, counting only running time', () => {
    expect(chargedRun(session, at(25), 60 * 60_000)).toEqual({
      intervals: [
        { from: at(0), to: at(10) },
        { from: at(20), to: at(25) },
      ],
      ms: 15 * 60_000,
      end: at(25),
      cappedAtHold: false,
    });
  });

  it('stops where the running time reaches the reserved minutes, and at an end inside a pause', () => {
    expect(chargedRun(session, at(60), 12 * 60_000)).toMatchObject({ ms: 12 * 60_000, end: at(22), cappedAtHold: true });
    expect(chargedRun(session, at(15), 60 * 60_000)).toMatchObject({ ms: 10 * 60_000, end: at(10), cappedAtHold: false });
    expect(chargedRun(buildSession([]), at(15), 60_000)).toEqual({ intervals: [], ms: 0, end: null, cappedAtHold: false });
  });
});
