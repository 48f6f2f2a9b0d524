import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { startAppOnFreshDatabase, uid, type Harness } from '../support/app';

/**
 * Accounts whose contract puts them on a billing cycle get each cycle's credits as it starts (the
 * `cycle-allowances` job), not only at their first launch of the cycle. A database of its own: the
 * job reads every account on a cycle.
 */
describe('allowances of accounts on a billing cycle', () => {
  let h: Harness;
  let admin: string;
  const clock = new ManualClock(new Date('2031-05-14T23:59:00.000Z'));

  beforeAll(async () => {
    h = await startAppOnFreshDatabase('cycles', { clock });
    admin = await h.key('admin');
  });
  afterAll(() => h.close());

  const wallet = async (accountId: string) => (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body;
  const run = async () => (await h.request('POST', '/v1/admin/jobs/cycle-allowances/run', { key: admin })).body;

  it("grants each account's cycle credits as its cycle starts, once, whether or not it has an anchor", async () => {
    const anchored = uid('ent');
    const monthly = uid('ent');
    for (const [id, anchor] of [
      [anchored, '2031-01-15T00:00:00.000Z'],
      [monthly, null],
    ] as const) {
      expect((await h.request('POST', '/v1/accounts', { key: admin, body: { id, kind: 'organization', plan: 'enterprise' } })).status).toBe(
        201,
      );
      const set = await h.request('PUT', `/v1/admin/accounts/${id}/plan`, {
        key: admin,
        body: { plan: 'enterprise', overrides: { includedCredits: '100.000000', period: 'billing_cycle' }, billingCycleAnchor: anchor },
      });
      expect(set.status).toBe(200);
    }
    // The current cycle's credits came with the plan.
    expect(await wallet(anchored)).toMatchObject({ total: '100.000000' });
    expect((await run()).result).toEqual({ accounts: 0, granted: '0.000000' });

    // The anchored cycle starts on the 15th: its credits are there at once, before any launch.
    clock.set('2031-05-15T00:00:30.000Z');
    expect((await run()).result).toEqual({ accounts: 1, granted: '100.000000' });
    const next = await wallet(anchored);
    expect(next.grants).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ source: 'plan_allowance', remaining: '100.000000', expiresAt: '2031-06-15T00:00:00.000Z' }),
      ]),
    );
    expect(next.runs.allowance).toMatchObject({ granted: true, expiresAt: '2031-06-15T00:00:00.000Z' });
    expect((await run()).result).toEqual({ accounts: 0, granted: '0.000000' });

    // Without an anchor the cycle is the calendar month, which the monthly reset leaves to this job.
    clock.set('2031-06-01T00:00:30.000Z');
    expect((await run()).result).toEqual({ accounts: 1, granted: '100.000000' });
    expect((await wallet(monthly)).runs.allowance).toMatchObject({ granted: true, expiresAt: '2031-07-01T00:00:00.000Z' });
  });
});
