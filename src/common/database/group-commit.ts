import { withCorrelationOf } from '../context/correlation';

/**
 * Group commit: work items go to one of a few lanes by key (so that one key — a wallet — always
 * uses the same lane, and its items keep their arrival order); each lane runs one batch at a time,
 * and what arrives meanwhile forms its next batch. A batch is one transaction whatever its size, so
 * round trips, locks and the commit are shared by all its items. `run` answers every item of its
 * batch itself and never throws.
 */
export class GroupCommitLanes<T> {
  private readonly lanes: Lane<T>[];

  constructor(
    count: number,
    /** Takes the next batch from the front of a lane's queue (at least one item). */
    private readonly take: (queue: T[]) => T[],
    private readonly run: (batch: T[]) => Promise<void>,
  ) {
    this.lanes = Array.from({ length: count }, () => ({ queue: [], running: false }));
  }

  /** Items waiting in every lane (not counting the batches running). */
  get queued(): number {
    let n = 0;
    for (const lane of this.lanes) n += lane.queue.length;
    return n;
  }

  push(key: string, item: T): void {
    const lane = this.lanes[laneOf(key, this.lanes.length)]!;
    lane.queue.push(item);
    // A batch serves every caller in it: it runs outside the correlation of the one that started it,
    // and each item carries its own (captured when it was pushed).
    if (!lane.running) void withCorrelationOf(undefined, () => this.drain(lane));
  }

  private async drain(lane: Lane<T>): Promise<void> {
    lane.running = true;
    try {
      while (lane.queue.length > 0) await this.run(this.take(lane.queue));
    } finally {
      lane.running = false;
    }
  }
}

interface Lane<T> {
  queue: T[];
  running: boolean;
}

function laneOf(key: string, lanes: number): number {
  // One lane (the reservations' today): nothing to choose, no key to hash.
  if (lanes === 1) return 0;
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  return (h >>> 0) % lanes;
}

/**
 * Up to `max` items from the front of `queue`, stopping before one that shares a key with an item
 * already taken (it goes to the next batch, so that it sees the first one committed).
 */
export function takeDistinct<T>(queue: T[], max: number, keysOf: (item: T) => string[]): T[] {
  const keys = new Set<string>();
  let n = 0;
  for (; n < queue.length && n < max; n++) {
    const mine = keysOf(queue[n]!);
    if (mine.some((k) => keys.has(k))) break;
    for (const k of mine) keys.add(k);
  }
  return queue.splice(0, Math.max(n, 1));
}
