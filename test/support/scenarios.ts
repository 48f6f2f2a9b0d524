import fc from 'fast-check';

const minute = 60_000;

export interface PlannedEvent {
  /** Position in the runtime's history; the id suffix. */
  n: number;
  type: string;
  offsetMs: number;
  seq: number;
  data: Record<string, unknown>;
}

/**
 * A random but realistic history for one runtime: started, heartbeats, pause/resume pairs, then
 * terminated (or, now and then, a launch failure), with a late heartbeat after the end.
 */
export function plannedHistory(seed: number, events: number): PlannedEvent[] {
  const rng = fc.sample(fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: events * 2, maxLength: events * 2 }), {
    seed,
    numRuns: 1,
  })[0]!;
  let i = 0;
  const next = (max: number) => (rng[i++ % rng.length] ?? 0) % max;
  const out: PlannedEvent[] = [];
  let t = next(10) * 1000;
  let seq = 1;
  const push = (type: string, data: Record<string, unknown> = {}) => out.push({ n: out.length, type, offsetMs: t, seq: seq++, data });
  push('runtime.started');
  if (next(20) === 0) {
    // A failed launch: nothing is charged whatever else the runtime reports.
    t += minute;
    push('runtime.launch_failed', { reason: 'image' });
    while (out.length < events) {
      t += minute;
      push('runtime.heartbeat');
    }
    return out;
  }
  let paused = false;
  while (out.length < events - 2) {
    t += (1 + next(4)) * minute + next(1000);
    const roll = next(10);
    if (roll === 0 && !paused) {
      push('runtime.paused');
      paused = true;
    } else if (roll === 1 && paused) {
      push('runtime.resumed');
      paused = false;
    } else push('runtime.heartbeat');
  }
  t += next(3) * minute + 1;
  push('runtime.terminated', { reason: 'user' });
  t += minute;
  push('runtime.heartbeat');
  return out;
}

/** Fisher-Yates with a seeded generator. */
export function shuffled<T>(items: T[], seed: number): T[] {
  const out = [...items];
  let state = seed >>> 0 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
