import { MS_PER_HOUR } from 'src/pricing/ancillary-prices';

/** One event of a stored item (snapshot or volume), as the accrual reads it. */
export interface StorageEvent {
  id: string;
  type: 'snapshot.created' | 'snapshot.deleted' | 'volume.created' | 'volume.resized' | 'volume.deleted';
  occurredAt: number;
  seq: number;
  /** Bytes from this instant on (created, resized); undefined for a deletion. */
  bytes?: bigint;
}

/** The item's size over time: [from, to) with to = null while it exists. */
export interface StorageSegment {
  from: number;
  to: number | null;
  bytes: bigint;
}

/**
 * The item's size over time, from the **set** of its events (ordered by occurredAt, then seq, then id,
 * so any delivery order gives the same result): a creation or a resize sets the size from its
 * instant, a deletion ends the item; nothing after the deletion counts. A resize without a creation
 * is taken as the creation (the item existed at that size).
 */
export function storageSegments(events: readonly StorageEvent[]): StorageSegment[] {
  const sorted = [...new Map(events.map((e) => [e.id, e])).values()].sort(
    (a, b) => a.occurredAt - b.occurredAt || a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const segments: StorageSegment[] = [];
  let open: StorageSegment | undefined;
  for (const e of sorted) {
    if (e.type.endsWith('.deleted')) {
      if (open) open.to = e.occurredAt;
      open = undefined;
      // An item is deleted once: later events do not bring it back.
      if (segments.length > 0) break;
      continue;
    }
    if (open) open.to = e.occurredAt;
    open = { from: e.occurredAt, to: null, bytes: e.bytes ?? 0n };
    segments.push(open);
  }
  return segments.filter((s) => s.to === null || s.to > s.from);
}

/** When the item stops costing (its deletion), or null while it exists. */
export function storageEnd(segments: readonly StorageSegment[]): number | null {
  if (segments.length === 0) return null;
  return segments[segments.length - 1]!.to;
}

/** Byte-milliseconds of the item within [from, to). */
export function byteMsBetween(segments: readonly StorageSegment[], from: number, to: number): bigint {
  let total = 0n;
  for (const s of segments) {
    const start = Math.max(s.from, from);
    const end = Math.min(s.to ?? Number.POSITIVE_INFINITY, to);
    if (end > start) total += s.bytes * BigInt(end - start);
  }
  return total;
}

export function hourStart(ms: number): number {
  return Math.floor(ms / Number(MS_PER_HOUR)) * Number(MS_PER_HOUR);
}

/** The UTC hours [start of each) the item existed in, from `from` up to (not including) `until`. */
export function hoursToCharge(segments: readonly StorageSegment[], from: number, until: number): number[] {
  if (segments.length === 0) return [];
  const first = hourStart(Math.max(segments[0]!.from, from));
  const end = storageEnd(segments);
  const last = Math.min(until, end ?? until);
  const hours: number[] = [];
  for (let h = first; h < last; h += Number(MS_PER_HOUR)) hours.push(h);
  return hours;
}
