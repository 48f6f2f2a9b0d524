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
  startedAt: Date | null;
  terminatedAt: Date | null;
  lastSeenAt: Date | null;
  terminationReason: string | null;
}

/** The order that defines a runtime's history: occurredAt, then seq, then id (for a total order). */
export function compareEvents(a: MeteredEvent, b: MeteredEvent): number {
  const t = a.occurredAt.getTime() - b.occurredAt.getTime();
  if (t !== 0) return t;
  if (a.seq !== b.seq) return a.seq - b.seq;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Builds a runtime's session from the SET of its events: duplicates and delivery order do not matter.
 * Running time is the sum of intervals between started/resumed and paused/terminated; paused time is
 * not charged; events after termination change nothing but the last sign of life.
 */
export function buildSession(events: readonly (MeteredEvent & { data?: Record<string, unknown> })[]): Session {
  const unique = [...new Map(events.map((e) => [e.id, e])).values()].sort(compareEvents);
  const session: Session = {
    status: 'reserved',
    intervals: [],
    closedMs: 0,
    startedAt: null,
    terminatedAt: null,
    lastSeenAt: null,
    terminationReason: null,
  };
  let openSince: Date | null = null;
  const close = (at: Date): void => {
    if (!openSince) return;
    session.intervals.push({ from: openSince, to: at });
    session.closedMs += at.getTime() - openSince.getTime();
    openSince = null;
  };
  for (const e of unique) {
    if (!session.lastSeenAt || e.occurredAt > session.lastSeenAt) session.lastSeenAt = e.occurredAt;
    if (session.status === 'terminated' || session.status === 'launch_failed') continue;
    switch (e.type) {
      case 'runtime.started':
      case 'runtime.resumed':
        if (!openSince) {
          openSince = e.occurredAt;
          session.startedAt ??= e.occurredAt;
          session.status = 'running';
        }
        break;
      case 'runtime.paused':
        if (openSince) {
          close(e.occurredAt);
          session.status = 'paused';
        }
        break;
      case 'runtime.heartbeat':
        break;
      case 'runtime.terminated':
        close(e.occurredAt);
        session.status = 'terminated';
        session.terminatedAt = e.occurredAt;
        session.terminationReason = typeof e.data?.reason === 'string' ? e.data.reason : null;
        break;
      case 'runtime.launch_failed':
        openSince = null;
        session.intervals = [];
        session.closedMs = 0;
        session.status = 'launch_failed';
        session.terminatedAt = e.occurredAt;
        session.terminationReason = typeof e.data?.reason === 'string' ? e.data.reason : null;
        break;
    }
  }
  if (openSince) session.intervals.push({ from: openSince, to: null });
  return session;
}

/** Running milliseconds up to `now` (an open interval counts until now). */
export function runningMs(session: Session, now: Date): number {
  const open = session.intervals.find((i) => i.to === null);
  const openMs = open ? Math.max(0, now.getTime() - open.from.getTime()) : 0;
  return session.closedMs + openMs;
}
