import type { LifecycleType } from '../lifecycle-event';

/** The fields of a lifecycle event that metering needs. */
export interface MeteredEvent {
  id: string;
  type: LifecycleType;
  occurredAt: Date;
  seq: number;
}

export type SessionStatus = 'reserved' | 'running' | 'paused' | 'terminated' | 'launch_failed';

export interface Interval {
  from: Date;
  /** null while the runtime is still running. */
  to: Date | null;
}

export interface Session {
  status: SessionStatus;
  intervals: Interval[];
  /** Running time of the closed intervals, in milliseconds. */
  closedMs: number;
  /**
   * The closed paused intervals: from a pause to the resume or termination that ends it (a pause
   * still open is not counted until it ends). Paused memory is metered from them.
   */
  pausedIntervals: { from: Date; to: Date }[];
  pausedMs: number;
  startedAt: Date | null;
  terminatedAt: Date | null;
  lastSeenAt: Date | null;
  terminationReason: string | null;
  /**
   * A `runtime.launch_failed` that the other events contradict (they show a running interval that
   * ended): recorded and flagged for review, but it voids nothing; null when there is none.
   */
  contradictedLaunchFailure: LaunchFailure | null;
}

export interface LaunchFailure {
  eventId: string;
  at: Date;
  reason: string | null;
}

type SessionEvent = MeteredEvent & { data?: Record<string, unknown> };

/** The order that defines a runtime's history: occurredAt, then seq, then id (for a total order). */
export function compareEvents(a: MeteredEvent, b: MeteredEvent): number {
  const t = a.occurredAt.getTime() - b.occurredAt.getTime();
  if (t !== 0) return t;
  if (a.seq !== b.seq) return a.seq - b.seq;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Builds a runtime's session from the SET of its events: duplicates and delivery order do not matter.
 * Running time is the sum of intervals between started/resumed and paused/terminated; paused time
 * (from a pause to the resume or termination that ends it) is not charged as running time, and paused
 * memory is metered from it; events after termination change nothing but the last sign of life.
 *
 * A launch failure voids the runtime (nothing charged) only when the other events show no running
 * interval that ended (a start followed by a pause or a termination): a runtime reported as started
 * and then as failed did not run. When they show one, the run happened whatever the failure's stamp
 * says: the charge stands and the failure is kept aside for review (`contradictedLaunchFailure`).
 * Deciding on the whole set, not on the order the walk meets the failure in, keeps the charge a
 * function of the set.
 */
export function buildSession(events: readonly SessionEvent[]): Session {
  const unique = [...new Map(events.map((e) => [e.id, e])).values()].sort(compareEvents);
  const failure = unique.find((e) => e.type === 'runtime.launch_failed');
  const run = walk(unique.filter((e) => e.type !== 'runtime.launch_failed'));
  for (const e of unique) if (!run.lastSeenAt || e.occurredAt > run.lastSeenAt) run.lastSeenAt = e.occurredAt;
  if (!failure) return run;
  const launchFailure = { eventId: failure.id, at: failure.occurredAt, reason: reasonOf(failure) };
  if (run.intervals.some((i) => i.to !== null)) return { ...run, contradictedLaunchFailure: launchFailure };
  return {
    ...run,
    status: 'launch_failed',
    intervals: [],
    closedMs: 0,
    pausedIntervals: [],
    pausedMs: 0,
    terminatedAt: launchFailure.at,
    terminationReason: launchFailure.reason,
  };
}

/** The running and paused intervals the events (sorted, without launch failures) describe. */
function walk(sorted: readonly SessionEvent[]): Session {
  const session: Session = {
    status: 'reserved',
    intervals: [],
    closedMs: 0,
    pausedIntervals: [],
    pausedMs: 0,
    startedAt: null,
    terminatedAt: null,
    lastSeenAt: null,
    terminationReason: null,
    contradictedLaunchFailure: null,
  };
  let openSince: Date | null = null;
  let pausedSince: Date | null = null;
  const close = (at: Date): void => {
    if (!openSince) return;
    session.intervals.push({ from: openSince, to: at });
    session.closedMs += at.getTime() - openSince.getTime();
    openSince = null;
  };
  const unpause = (at: Date): void => {
    if (!pausedSince) return;
    session.pausedIntervals.push({ from: pausedSince, to: at });
    session.pausedMs += at.getTime() - pausedSince.getTime();
    pausedSince = null;
  };
  for (const e of sorted) {
    if (session.status === 'terminated') continue;
    switch (e.type) {
      case 'runtime.started':
      case 'runtime.resumed':
        if (!openSince) {
          unpause(e.occurredAt);
          openSince = e.occurredAt;
          session.startedAt ??= e.occurredAt;
          session.status = 'running';
        }
        break;
      case 'runtime.paused':
        if (openSince) {
          close(e.occurredAt);
          pausedSince = e.occurredAt;
          session.status = 'paused';
        }
        break;
      case 'runtime.heartbeat':
      case 'runtime.launch_failed':
        break;
      case 'runtime.terminated':
        close(e.occurredAt);
        unpause(e.occurredAt);
        session.status = 'terminated';
        session.terminatedAt = e.occurredAt;
        session.terminationReason = reasonOf(e);
        break;
    }
  }
  if (openSince) session.intervals.push({ from: openSince, to: null });
  return session;
}

function reasonOf(e: SessionEvent): string | null {
  return typeof e.data?.reason === 'string' ? e.data.reason : null;
}

/** Running milliseconds up to `now` (an open interval counts until now). */
export function runningMs(session: Session, now: Date): number {
  const open = session.intervals.find((i) => i.to === null);
  const openMs = open ? Math.max(0, now.getTime() - open.from.getTime()) : 0;
  return session.closedMs + openMs;
}

/** What a settlement without `runtime.terminated` charges: the running time up to an end it chose. */
export interface ChargedRun {
  /** The running intervals charged, each closed. */
  intervals: { from: Date; to: Date }[];
  ms: number;
  /** The end of the last charged interval; null when nothing ran. */
  end: Date | null;
  /** The running time reached `capMs` (the reserved minutes, whose charge is the hold) before `until`. */
  cappedAtHold: boolean;
}

/**
 * The session's running intervals up to `until`, and no further than `capMs` of running time: what
 * a forced settlement charges, with the instant it charges up to.
 */
export function chargedRun(session: Pick<Session, 'intervals'>, until: Date, capMs: number): ChargedRun {
  const out: ChargedRun = { intervals: [], ms: 0, end: null, cappedAtHold: false };
  for (const i of session.intervals) {
    const to = Math.min(i.to?.getTime() ?? until.getTime(), until.getTime());
    if (to < i.from.getTime()) break;
    const ms = to - i.from.getTime();
    const end = out.ms + ms > capMs ? i.from.getTime() + (capMs - out.ms) : to;
    out.intervals.push({ from: i.from, to: new Date(end) });
    out.ms += end - i.from.getTime();
    out.end = new Date(end);
    if (end < to) {
      out.cappedAtHold = true;
      break;
    }
  }
  return out;
}
