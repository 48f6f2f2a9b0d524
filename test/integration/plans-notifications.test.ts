import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { lifecycle, SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';
import { readTopic } from '../support/kafka';

describe('plan notifications on the real broker, once per cause', () => {
  let h: Harness;
  let clock: ManualClock;
  let admin: string;
  let cp: string;

  beforeAll(async () => {
    clock = new ManualClock(new Date('2026-12-30T10:00:00.000Z'));
    h = await startApp({ kafka: true, clock });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(() => h.close());

  it('credits.granted, quota.exhausted, wallet.low_balance, then credits.expired and credits.granted at the reset; a second reset sends nothing', async () => {
    const accountId = uid('free');
    expect((await h.request('POST', '/v1/accounts', { key: admin, body: { id: accountId, kind: 'user', plan: 'free' } })).status).toBe(201);
    await h.request('PUT', `/v1/admin/accounts/${accountId}/plan`, { key: admin, body: { plan: 'free', overrides: { runsPerPeriod: 2 } } });
    // Two runtimes of a whole day each: 24 credits held apiece, 2 left of 50 (below the 5-credit threshold), no runs left.
    const runtimes = [uid('rt'), uid('rt')];
    for (const runtimeId of runtimes) {
      const r = await h.request('POST', '/v1/reservations', {
        key: cp,
        body: { accountId, runtimeId, ...SMALL, minutes: 1440 },
      });
      expect(r.status).toBe(201);
    }
    const refused = await h.request('POST', '/v1/reservations', {
      key: cp,
      body: { accountId, runtimeId: uid('rt'), ...SMALL, minutes: 1 },
    });
    expect(refused.body.error).toMatchObject({ code: 'DL_BILLING_QUOTA_EXCEEDED', quota: 'runs', resetsAt: '2027-01-01T00:00:00.000Z' });

    clock.set('2027-01-01T00:00:00.000Z');
    for (let i = 0; i < 2; i++) expect((await h.request('POST', '/v1/admin/jobs/monthly-reset/run', { key: admin })).body.ran).toBe(true);

    // The two runtimes ran 1 and 2 hours in December; what their holds give back of December's credits expires then.
    for (const [i, runtimeId] of runtimes.entries()) {
      const events = [
        lifecycle(accountId, runtimeId, 'runtime.started', new Date('2026-12-30T10:00:00.000Z'), 1),
        lifecycle(accountId, runtimeId, 'runtime.terminated', new Date(Date.parse('2026-12-30T10:00:00.000Z') + (i + 1) * 3600_000), 2, {
          reason: 'user',
        }),
      ];
      const posted = await h.request('POST', '/v1/events', { key: cp, body: events });
      expect(posted.body).toMatchObject({ accepted: 2 });
    }

    const read = await readTopic(h.config.topics.notifications, 7, 60_000, 3_000);
    const mine = read
      .filter((m) => m.key === accountId)
      .map((m) => JSON.parse(m.value) as { id: string; type: string; accountId: string; data: Record<string, unknown> });
    expect(mine.map((m) => m.type)).toEqual([
      'credits.granted',
      'quota.exhausted',
      'wallet.low_balance',
      'credits.expired',
      'credits.granted',
      'credits.expired',
      'credits.expired',
    ]);
    expect(new Set(mine.map((m) => m.id)).size).toBe(7);
    expect(mine[0]!.data).toMatchObject({ credits: '50.000000', expiresAt: '2027-01-01T00:00:00.000Z' });
    expect(mine[1]!.data).toMatchObject({ quota: 'runs', limit: 2, resetsAt: '2027-01-01T00:00:00.000Z' });
    expect(mine[2]!.data).toMatchObject({ available: '2.000000', threshold: '5.000000' });
    // What was not held expires; the 48 credits held by the two runtimes expire when their holds release them.
    expect(mine[3]!.data).toMatchObject({ credits: '2.000000', source: 'plan_allowance' });
    expect(mine[4]!.data).toMatchObject({ credits: '50.000000', expiresAt: '2027-02-01T00:00:00.000Z' });
    // Then each hold's unused rest, as it comes back: 24 − 1 and 24 − 2 credits. 2 + 23 + 22 + 3 charged = the 50 granted.
    const december = { grantId: mine[3]!.data.grantId, source: 'plan_allowance', expiredAt: '2027-01-01T00:00:00.000Z' };
    expect(mine[5]!.data).toEqual({ ...december, credits: '23.000000' });
    expect(mine[6]!.data).toEqual({ ...december, credits: '22.000000' });
  });
});
