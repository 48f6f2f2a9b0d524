import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { fundedAccount, SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';

const T0 = new Date('2033-02-10T10:00:00.000Z');
const FEBRUARY = 'from=2033-02-01T00:00:00Z&to=2033-03-01T00:00:00Z';

/** Reports that look back: what was true in the period, not what is true now. */
describe('reports of a past period', () => {
  let h: Harness;
  let admin: string;
  const clock = new ManualClock(T0);

  beforeAll(async () => {
    h = await startApp({ clock });
    admin = await h.key('admin');
  });
  afterAll(() => h.close());

  it('shows each spend-limit alert with the limit in force when it fired, not the limit of today', async () => {
    const cp = await h.key('control-plane');
    const accountId = await fundedAccount(h, admin, { credits: '50.000000' });
    await h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, { key: admin, body: { credits: '3.000000', thresholds: [50, 80] } });
    // 150 minutes of small = 2.5 credits: past 50 % and 80 % of 3 at once.
    expect(
      (await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: uid('rt'), ...SMALL, minutes: 150 } })).status,
    ).toBe(201);
    await h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, { key: admin, body: { credits: '10.000000', thresholds: [50, 80] } });
    const report = await h.request('GET', `/v1/reports/spend-limits?${FEBRUARY}`, { key: admin });
    const alerts = report.body.items.filter((i: { account: string; type: string }) => i.account === accountId && i.type === 'alert');
    // Same instant: ordered by threshold, every time.
    expect(alerts.map((a: { threshold: number; limit: string; spent: string }) => [a.threshold, a.limit, a.spent])).toEqual([
      [50, '3.000000', '2.500000'],
      [80, '3.000000', '2.500000'],
    ]);
  });

  it('counts the seats a Team account had at the end of a past period', async () => {
    const team = await fundedAccount(h, admin, { plan: 'team', kind: 'organization' });
    for (const user of ['u1', 'u2', 'u3']) {
      expect((await h.request('PUT', `/v1/accounts/${team}/members/${user}`, { key: admin })).status).toBeLessThan(300);
    }
    clock.set('2033-03-05T10:00:00.000Z');
    expect((await h.request('DELETE', `/v1/accounts/${team}/members/u3`, { key: admin })).status).toBeLessThan(300);
    const february = await h.request('GET', `/v1/reports/seats?${FEBRUARY}`, { key: admin });
    expect(february.body.items.find((i: { account: string }) => i.account === team)).toMatchObject({ seats: 3 });
    const march = await h.request('GET', '/v1/reports/seats?from=2033-03-01T00:00:00Z&to=2033-04-01T00:00:00Z', { key: admin });
    expect(march.body.items.find((i: { account: string }) => i.account === team)).toMatchObject({ seats: 2 });
  });
});
