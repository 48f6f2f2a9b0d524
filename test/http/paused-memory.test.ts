import { describe, expect, it } from 'vitest';
import { AncillaryUsageService } from '../../src/ancillary/ancillary-usage.service';
import { inTransaction } from '../../src/common/database/transaction';
import { MIN, pausedMemorySuite, PRICED_DAY, UNPRICED_DAY } from '../support/paused-memory';

describe('paused-runtime memory: metered from pause/resume with the size class memory, shown unpriced or charged', () => {
  const suite = pausedMemorySuite('paused_memory');
  const reads = () => suite.reads;

  const accepted = (body: unknown) => reads().accepted(body);
  const total = (accountId: string) => reads().total(accountId);
  const view = (runtimeId: string) => reads().view(runtimeId);
  const statement = (accountId: string) => reads().statement(accountId);
  const pausedLine = (accountId: string) => reads().pausedLine(accountId);
  const unpricedMetric = () => reads().unpricedMetric();
  const runtime = (day: Date, sizeClass: 'small' | 'medium', plan?: 'free') => suite.runtime(day, sizeClass, { plan });

  it('meters 30 paused minutes of a small runtime (1 GiB) as 0.5 GiB-hour, unpriced: on the statement with its quantity, counted, never charged', async () => {
    const before = await unpricedMetric();
    const r = await runtime(UNPRICED_DAY, 'small');
    await accepted([r.started(0), r.paused(10), r.resumed(40), r.terminated(50)]);
    // 20 running minutes at 1 credit/h; the paused half hour is not charged.
    expect(await view(r.runtimeId)).toMatchObject({ status: 'settled', runningSeconds: 1200, charged: '0.333334' });
    expect(await total(r.accountId)).toBe('9.666666');
    expect(await pausedLine(r.accountId)).toMatchObject({
      quantity: '0.500000',
      unit: 'GiB-hour',
      credits: '0.000000',
      included: '0.000000',
      beyondIncluded: '0.500000',
    });
    expect((await statement(r.accountId)).closingBalance).toBe('9.666666');
    expect(await unpricedMetric()).toBeCloseTo(before + 0.5, 6);
  });

  it('shows what the plan includes beside the unpriced quantity (Free: 100 GiB-hours of paused memory a month)', async () => {
    const r = await runtime(UNPRICED_DAY, 'small', 'free');
    await accepted([r.started(0), r.paused(10), r.resumed(40), r.terminated(50)]);
    expect(await pausedLine(r.accountId)).toMatchObject({
      quantity: '0.500000',
      unit: 'GiB-hour',
      credits: '0.000000',
      included: '100.000000',
      beyondIncluded: '0.000000',
    });
  });

  it('counts unpriced paused memory once when the transaction that meters it is retried (counted at commit)', async () => {
    const before = await unpricedMetric();
    const r = await runtime(UNPRICED_DAY, 'small');
    const settled = { runtimeId: r.runtimeId, accountId: r.accountId, sizeClass: 'small', rateCardVersion: null, terminatedAt: r.at(50) };
    const pause = { pausedIntervals: [{ from: r.at(10), to: r.at(40) }], pausedMs: 30 * MIN, first: true };
    let attempts = 0;
    // The first attempt meters the pause, then fails as a deadlock would: rolled back and run again.
    await inTransaction(suite.h.ds, async (em) => {
      await suite.h.app.get(AncillaryUsageService).chargePausedMemory(em, { ...settled, ...pause });
      if (++attempts === 1) throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
    });
    expect(attempts).toBe(2);
    expect(await pausedLine(r.accountId)).toMatchObject({ quantity: '0.500000' });
    expect(await unpricedMetric()).toBeCloseTo(before + 0.5, 6);
    // A transaction that fails for good counts nothing.
    const failed = inTransaction(suite.h.ds, async (em) => {
      await suite.h.app.get(AncillaryUsageService).chargePausedMemory(em, { ...settled, ...pause, pausedMs: 90 * MIN, first: false });
      throw new Error('gave up');
    });
    await expect(failed).rejects.toThrow('gave up');
    expect(await pausedLine(r.accountId)).toMatchObject({ quantity: '0.500000' });
    expect(await unpricedMetric()).toBeCloseTo(before + 0.5, 6);
  });

  it('gives the same paused quantity for any delivery order and duplicated events', async () => {
    const r = await runtime(UNPRICED_DAY, 'small');
    const events = [r.started(0), r.paused(10), r.resumed(40), r.terminated(50)];
    await accepted([events[3], events[1], events[3], events[2]]);
    await accepted([events[0], events[1], events[0]]);
    await accepted(events);
    expect(await view(r.runtimeId)).toMatchObject({ status: 'settled', runningSeconds: 1200, charged: '0.333334' });
    expect(await pausedLine(r.accountId)).toMatchObject({ quantity: '0.500000', unit: 'GiB-hour' });
  });

  it('records a late pause after the settlement, and corrects it when a later event shortens the pause', async () => {
    const r = await runtime(UNPRICED_DAY, 'small');
    await accepted([r.started(0), r.terminated(50)]);
    expect(await view(r.runtimeId)).toMatchObject({ status: 'settled', runningSeconds: 3000 });
    expect(await pausedLine(r.accountId)).toBeUndefined();
    // Paused from minute 10 to the termination: 40 minutes, 0.666667 GiB-hour (rounded up).
    await accepted(r.paused(10));
    expect(await view(r.runtimeId)).toMatchObject({ status: 'settled', runningSeconds: 600, charged: '0.166667' });
    expect(await pausedLine(r.accountId)).toMatchObject({ quantity: '0.666667' });
    await accepted(r.resumed(40));
    expect(await view(r.runtimeId)).toMatchObject({ runningSeconds: 1200, charged: '0.333334' });
    expect(await pausedLine(r.accountId)).toMatchObject({ quantity: '0.500000' });
  });

  it("checks the spend limit after the paused memory's charge without the settled runtime's hold: no false alert", async () => {
    const r = await runtime(PRICED_DAY, 'medium');
    // 120 minutes at 2 credits/h hold 4.000000: 95 % of the limit, below its one threshold.
    const limit = await suite.h.request('PUT', `/v1/accounts/${r.accountId}/spend-limit`, {
      key: suite.admin,
      body: { credits: '4.200000', period: 'month', thresholds: [100] },
    });
    expect(limit.status, JSON.stringify(limit.body)).toBe(200);
    await accepted([r.started(0), r.paused(10), r.resumed(40), r.terminated(50)]);
    // Spent: 0.666667 running + 0.5 paused memory. Counted with the hold it would have been 4.5.
    expect((await suite.h.request('GET', `/v1/accounts/${r.accountId}/wallet`, { key: suite.admin })).body.spend).toMatchObject({
      spent: '1.166667',
      held: '0.000000',
    });
    expect(
      await suite.h.ds.query(`SELECT payload FROM outbox WHERE key = $1 AND payload->>'type' LIKE 'spend_limit.%'`, [r.accountId]),
    ).toEqual([]);
  });

  it('charges paused memory exactly once priced (0.25 credit per GiB-hour of a medium runtime, 4 GiB), and corrects the charge on a late event', async () => {
    const r = await runtime(PRICED_DAY, 'medium');
    await accepted([r.started(0), r.paused(10), r.resumed(40), r.terminated(50)]);
    // Running 20 min at 2 credits/h: 0.666667; paused 30 min × 4 GiB = 2 GiB-hours × 0.25 = 0.5.
    expect(await view(r.runtimeId)).toMatchObject({ charged: '0.666667' });
    expect(await total(r.accountId)).toBe('8.833333');
    // A late pause at minute 45: running 15 min (0.5), paused 35 min × 4 GiB × 0.25 = 0.583334 (rounded up once).
    await accepted(r.paused(45));
    expect(await view(r.runtimeId)).toMatchObject({ charged: '0.500000' });
    expect(await total(r.accountId)).toBe('8.916666');
    // Redelivery changes nothing.
    await accepted(r.paused(45));
    expect(await total(r.accountId)).toBe('8.916666');
    const s = await statement(r.accountId);
    expect(s.lines.find((l) => l.section === 'unpriced' && l.description.includes('paused_ram'))).toBeUndefined();
    expect(s.ancillary).toEqual([
      {
        kind: 'paused_ram',
        unit: 'GiB-hour',
        priced: true,
        quantity: '2.333334',
        amount: '0.583334',
        charged: '0.583334',
        unpaid: '0.000000',
        rateCardVersions: ['test-paused-priced'],
      },
    ]);
    expect(s.closingBalance).toBe('8.916666');
  });
});
