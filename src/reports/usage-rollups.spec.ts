import { describe, expect, it } from 'vitest';
import { usageSegments } from './usage-rollups';
import { rollupDelta, type RollupState } from './usage-rollups';

const at = (s: string) => new Date(s).getTime();
const iso = (r: [number, number][]) => r.map(([a, b]) => [new Date(a).toISOString(), new Date(b).toISOString()]);

describe('rollupDelta', () => {
  const base: RollupState = {
    account_id: 'a',
    user_id: null,
    environment: { name: 'py' },
    status: 'terminating',
    closed_ms: '0',
    charged: '0',
    settled_at: null,
  };

  it('counts a settlement once, in the hour of the first settlement, and a correction by its difference in the hour it is posted', () => {
    const firstAt = new Date('2031-01-02T10:42:00Z');
    const settled = { ...base, status: 'settled', closed_ms: '1800000', charged: '500000', settled_at: firstAt };
    expect(rollupDelta(base, settled, firstAt)).toEqual([
      {
        accountId: 'a',
        hour: new Date('2031-01-02T10:00:00Z'),
        environment: 'py',
        userId: '',
        runtimes: 1n,
        runningMs: 1_800_000n,
        credits: 500_000n,
      },
    ]);
    // A correction in the same hour joins it; a later one's credits go to the hour it is posted in (as its
    // ledger transaction), its change of running time to the hour the runtime is counted in.
    const corrected = { ...settled, closed_ms: '1200000', charged: '333334' };
    expect(rollupDelta(settled, corrected, new Date('2031-01-02T10:59:59Z'))).toMatchObject([
      { hour: new Date('2031-01-02T10:00:00Z'), runtimes: 0n, runningMs: -600_000n, credits: -166_666n },
    ]);
    const key = { accountId: 'a', environment: 'py', userId: '' };
    expect(rollupDelta(settled, corrected, new Date('2031-02-01T00:00:00Z'))).toEqual([
      { ...key, hour: new Date('2031-01-02T10:00:00Z'), runtimes: 0n, runningMs: -600_000n, credits: 0n },
      { ...key, hour: new Date('2031-02-01T00:00:00Z'), runtimes: 0n, runningMs: 0n, credits: -166_666n },
    ]);
    // A launch failure after settlement uncounts the runtime where it was counted, and gives its charge back when posted.
    expect(rollupDelta(settled, { ...settled, status: 'voided', charged: '0' }, new Date('2031-01-05T08:30:00Z'))).toMatchObject([
      { hour: new Date('2031-01-02T10:00:00Z'), runtimes: -1n, runningMs: -1_800_000n, credits: 0n },
      { hour: new Date('2031-01-05T08:00:00Z'), runtimes: 0n, runningMs: 0n, credits: -500_000n },
    ]);
    expect(rollupDelta(settled, settled, firstAt)).toEqual([]);
    expect(rollupDelta(base, { ...base, status: 'voided', settled_at: new Date() }, new Date())).toEqual([]);
  });
});

describe('usageSegments', () => {
  it('reads whole months, then whole days, then hours', () => {
    const s = usageSegments(at('2031-01-30T22:00:00Z'), at('2031-03-02T05:00:00Z'));
    expect(iso(s.months)).toEqual([['2031-02-01T00:00:00.000Z', '2031-03-01T00:00:00.000Z']]);
    expect(iso(s.days)).toEqual([
      ['2031-01-31T00:00:00.000Z', '2031-02-01T00:00:00.000Z'],
      ['2031-03-01T00:00:00.000Z', '2031-03-02T00:00:00.000Z'],
    ]);
    expect(iso(s.hours)).toEqual([
      ['2031-01-30T22:00:00.000Z', '2031-01-31T00:00:00.000Z'],
      ['2031-03-02T00:00:00.000Z', '2031-03-02T05:00:00.000Z'],
    ]);
  });

  it('uses only hours inside one day, and no months when asked', () => {
    expect(usageSegments(at('2031-01-05T03:00:00Z'), at('2031-01-05T09:00:00Z'))).toEqual({
      hours: [[at('2031-01-05T03:00:00Z'), at('2031-01-05T09:00:00Z')]],
      days: [],
      months: [],
    });
    const month = usageSegments(at('2031-01-01T00:00:00Z'), at('2031-02-01T00:00:00Z'), false);
    expect(month).toEqual({ hours: [], days: [[at('2031-01-01T00:00:00Z'), at('2031-02-01T00:00:00Z')]], months: [] });
  });

  it('covers every hour of a period exactly once', () => {
    for (const [from, to] of [
      ['2030-12-31T23:00:00Z', '2031-03-01T01:00:00Z'],
      ['2031-01-01T00:00:00Z', '2031-01-01T01:00:00Z'],
      ['2031-02-27T05:00:00Z', '2031-03-03T00:00:00Z'],
    ] as const) {
      const s = usageSegments(at(from), at(to));
      const total = [...s.hours, ...s.days, ...s.months].reduce((sum, [a, b]) => sum + (b - a), 0);
      expect(total).toBe(at(to) - at(from));
    }
  });
});
