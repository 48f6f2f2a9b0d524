import { describe, expect, it } from 'vitest';
import { MIN, pausedMemorySuite, PRICED_DAY, UNPRICED_DAY } from '../support/paused-memory';

/**
 * A runtime the sweeper settles (its reservation ran out and no `runtime.terminated` came) has its
 * paused memory metered all the same, once: by the forced settlement, then corrected in place by a
 * late `runtime.terminated`.
 */
describe('paused-runtime memory of a runtime settled by the sweeper', () => {
  // The runtimes here send no heartbeats: a timeout of 2 hours keeps them from being presumed lost (and
  // charged only up to their last sign of life), so that the hold is what a forced settlement charges.
  const suite = pausedMemorySuite('paused_sweeper', {
    TERMINATE_GRACE_MS: String(2 * MIN),
    SETTLE_GRACE_MS: String(10 * MIN),
    HEARTBEAT_TIMEOUT_MS: String(120 * MIN),
  });

  const sweepAt = async (at: Date) => {
    suite.clock.set(at);
    const res = await suite.h.request('POST', '/v1/admin/jobs/expiry-sweep/run', { key: suite.admin });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result as { reservationExpired: number; forcedSettlements: number };
  };
  /** Reserved 60 minutes; runs 0–10, paused 10–40, runs again: the reservation is used up at minute 90, nothing terminates it. */
  const expiredWhilePausedOnce = async (day: Date, sizeClass: 'small' | 'medium') => {
    const r = await suite.runtime(day, sizeClass, { minutes: 60 });
    await suite.reads.accepted([r.started(0), r.paused(10), r.resumed(40)]);
    expect(await sweepAt(r.at(95))).toMatchObject({ reservationExpired: 1, forcedSettlements: 0 });
    expect(await sweepAt(r.at(106))).toMatchObject({ forcedSettlements: 1 });
    expect(await suite.reads.view(r.runtimeId)).toMatchObject({ status: 'settled', settlement: 'forced_reservation_expired' });
    return r;
  };

  it('meters the closed pause at the forced settlement (unpriced: on the statement, counted once), and a late termination corrects the same quantity', async () => {
    const before = await suite.reads.unpricedMetric();
    const r = await expiredWhilePausedOnce(UNPRICED_DAY, 'small');
    // 30 paused minutes × 1 GiB: 0.5 GiB-hour; the hold (60 minutes at 1 credit/h) is charged.
    expect(await suite.reads.pausedLine(r.accountId)).toMatchObject({ quantity: '0.500000', unit: 'GiB-hour', credits: '0.000000' });
    expect(await suite.reads.total(r.accountId)).toBe('9.000000');
    expect(await suite.reads.unpricedMetric()).toBeCloseTo(before + 0.5, 6);
    // Another sweep settles nothing more and meters nothing more.
    expect(await sweepAt(r.at(120))).toMatchObject({ forcedSettlements: 0 });
    expect(await suite.reads.pausedLine(r.accountId)).toMatchObject({ quantity: '0.500000' });

    // The platform's events arrive late: paused again at 70, terminated at 80. Running 10 + 30
    // minutes (0.666667 credit), paused 30 + 10 minutes: 0.666667 GiB-hour, on the same row.
    await suite.reads.accepted([r.paused(70), r.terminated(80)]);
    expect(await suite.reads.view(r.runtimeId)).toMatchObject({ status: 'settled', settlement: 'events', charged: '0.666667' });
    expect(await suite.reads.pausedLine(r.accountId)).toMatchObject({ quantity: '0.666667', beyondIncluded: '0.666667' });
    expect(await suite.reads.unpricedMetric()).toBeCloseTo(before + 0.666667, 5);
    const s = await suite.reads.statement(r.accountId);
    expect(s.ancillary).toEqual([expect.objectContaining({ kind: 'paused_ram', priced: false, quantity: '0.666667' })]);
    expect(s.closingBalance).toBe(await suite.reads.total(r.accountId));
  });

  it('charges the paused memory of a priced runtime once at the forced settlement, and by the difference on the late termination', async () => {
    const r = await expiredWhilePausedOnce(PRICED_DAY, 'medium');
    // The hold (60 minutes at 2 credits/h) and 30 paused minutes × 4 GiB × 0.25 credit: 2 + 0.5.
    expect(await suite.reads.total(r.accountId)).toBe('7.500000');
    expect(await sweepAt(r.at(130))).toMatchObject({ forcedSettlements: 0 });
    expect(await suite.reads.total(r.accountId)).toBe('7.500000');

    // Late: terminated at 60 with nothing else. Running 10 + 20 minutes (1 credit), paused memory unchanged.
    await suite.reads.accepted(r.terminated(60));
    expect(await suite.reads.view(r.runtimeId)).toMatchObject({ settlement: 'events', charged: '1.000000' });
    expect(await suite.reads.total(r.accountId)).toBe('8.500000');
    // Then a pause at 50 arrives: running 30 → 20 minutes (0.666667), paused 30 + 10 minutes × 4 GiB × 0.25 = 0.666667.
    await suite.reads.accepted(r.paused(50));
    expect(await suite.reads.total(r.accountId)).toBe('8.666666');
    const s = await suite.reads.statement(r.accountId);
    expect(s.ancillary).toEqual([
      expect.objectContaining({ kind: 'paused_ram', priced: true, quantity: '2.666667', amount: '0.666667', charged: '0.666667' }),
    ]);
    expect(s.lines.find((l) => l.section === 'ancillary_charges')).toMatchObject({ credits: '-0.666667' });
    expect(s.closingBalance).toBe('8.666666');
  });
});
