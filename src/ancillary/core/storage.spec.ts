import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BYTES_PER_GIB } from 'src/pricing/ancillary-prices';
import { byteMsBetween, hoursToCharge, storageEnd, storageSegments, type StorageEvent } from './storage';

const H = 3_600_000;
const T = Date.parse('2031-03-01T00:00:00Z');
const G = BYTES_PER_GIB;

describe('a stored item over time, from the set of its events', () => {
  const events: StorageEvent[] = [
    { id: 'a', type: 'volume.created', occurredAt: T + H / 2, seq: 1, bytes: 10n * G },
    { id: 'b', type: 'volume.resized', occurredAt: T + 2 * H, seq: 2, bytes: 20n * G },
    { id: 'c', type: 'volume.deleted', occurredAt: T + 3 * H, seq: 3 },
  ];

  it('sizes each hour: created at :30, resized, deleted', () => {
    const segments = storageSegments(events);
    expect(segments).toEqual([
      { from: T + H / 2, to: T + 2 * H, bytes: 10n * G },
      { from: T + 2 * H, to: T + 3 * H, bytes: 20n * G },
    ]);
    expect(storageEnd(segments)).toBe(T + 3 * H);
    expect(hoursToCharge(segments, 0, T + 10 * H)).toEqual([T, T + H, T + 2 * H]);
    expect(byteMsBetween(segments, T, T + H)).toBe(10n * G * BigInt(H / 2));
    expect(byteMsBetween(segments, T + 2 * H, T + 3 * H)).toBe(20n * G * BigInt(H));
  });

  it('is open while not deleted, and charges only complete hours up to `until`', () => {
    const segments = storageSegments(events.slice(0, 2));
    expect(storageEnd(segments)).toBeNull();
    expect(hoursToCharge(segments, 0, T + 4 * H)).toEqual([T, T + H, T + 2 * H, T + 3 * H]);
  });

  it('ignores what comes after the deletion, and a deletion alone', () => {
    expect(storageSegments([...events, { id: 'd', type: 'volume.resized', occurredAt: T + 5 * H, seq: 4, bytes: G }])).toEqual(
      storageSegments(events),
    );
    expect(storageSegments([{ id: 'x', type: 'snapshot.deleted', occurredAt: T, seq: 1 }])).toEqual([]);
  });

  it('gives the same usage for any delivery order and any duplication (property)', () => {
    const event = fc.record({
      id: fc.constantFrom('e1', 'e2', 'e3', 'e4', 'e5', 'e6'),
      type: fc.constantFrom('volume.created' as const, 'volume.resized' as const, 'volume.deleted' as const),
      occurredAt: fc.integer({ min: T, max: T + 6 * H }),
      seq: fc.integer({ min: 0, max: 5 }),
      bytes: fc.bigInt({ min: 1n, max: 100n * G }),
    });
    fc.assert(
      fc.property(fc.uniqueArray(event, { selector: (e) => e.id, maxLength: 6 }), fc.integer(), (list, seed) => {
        const events = list.map((e) => (e.type === 'volume.deleted' ? { ...e, bytes: undefined } : e));
        // A permutation from the seed, with some events delivered twice.
        const shuffled = [...events, ...events.slice(0, Math.abs(seed) % 3)]
          .map((e, i) => ({ e, k: Math.sin(seed + i * 7919) }))
          .sort((x, y) => x.k - y.k)
          .map((x) => x.e);
        const a = storageSegments(events);
        const b = storageSegments(shuffled);
        for (let h = T; h < T + 7 * H; h += H) expect(byteMsBetween(b, h, h + H)).toBe(byteMsBetween(a, h, h + H));
      }),
    );
  });
});
