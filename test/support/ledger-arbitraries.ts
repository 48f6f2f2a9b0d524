import fc from 'fast-check';
import type { GrantBucket } from '../../src/ledger/core/types';

export const NOW = new Date('2026-12-02T09:00:00.000Z');
const HOUR = 3600_000;

/** Grants with distinct ids; some expired, some never expiring, amounts in micro-credits. */
export const grantsArb = fc
  .array(
    fc.record({
      remaining: fc.bigInt({ min: 0n, max: 5_000_000n }),
      priority: fc.integer({ min: 0, max: 3 }),
      expiresInHours: fc.option(fc.integer({ min: -5, max: 50 }), { nil: null }),
      createdHoursAgo: fc.integer({ min: 0, max: 10 }),
    }),
    { maxLength: 8 },
  )
  .map((list) =>
    list.map((g, i): GrantBucket => ({
      id: `g${i}`,
      remaining: g.remaining,
      priority: g.priority,
      expiresAt: g.expiresInHours === null ? null : new Date(NOW.getTime() + g.expiresInHours * HOUR),
      createdAt: new Date(NOW.getTime() - g.createdHoursAgo * HOUR),
    })),
  );
