import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { fundedAccount } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';
import { sample } from '../support/prometheus-text';

// Long before the other HTTP test files' clocks: this file's grant-expiry runs expire only its own
// grants, and theirs never expire its grant.
const T0 = '2011-03-01T09:00:00.000Z';

describe('jobs run over HTTP', () => {
  let h: Harness;
  let admin: string;
  const clock = new ManualClock(new Date(T0));

  beforeAll(async () => {
    h = await startApp({ clock });
    admin = await h.key('admin');
  });
  afterAll(() => h.close());

  it('grant-expiry answers the amount expired in credits with 6 decimals, "0.000000" when nothing expired', async () => {
    const accountId = await fundedAccount(h, admin);
    const granted = await h.request('POST', `/v1/admin/accounts/${accountId}/grants`, {
      key: admin,
      body: { credits: '0.833333', expiresAt: '2011-03-01T10:00:00.000Z', reason: 'expires within the hour' },
      headers: { 'idempotency-key': uid('grant') },
    });
    expect(granted.status).toBe(201);

    clock.set('2011-03-01T11:00:00.000Z');
    const expiredMetric = async (): Promise<number> =>
      sample((await h.request('GET', '/metrics')).body as string, 'dl_billing_credits_microcredits_total', { flow: 'expired' });
    const expiredBefore = await expiredMetric();
    const run = await h.request('POST', '/v1/admin/jobs/grant-expiry/run', { key: admin });
    expect(run.status).toBe(200);
    expect(run.body).toEqual({
      job: 'grant-expiry',
      runId: expect.stringMatching(/^job_/),
      ran: true,
      result: { grants: 1, wallets: 1, amount: '0.833333' },
    });
    expect((await expiredMetric()) - expiredBefore).toBe(833_333);
    // The run's audit rows carry its run id (not the id of the request that started it).
    const expired: { correlation_id: string }[] = await h.ds.query(
      `SELECT correlation_id FROM audit_log WHERE account_id = $1 AND action = 'credits.expired'`,
      [accountId],
    );
    expect(expired).toEqual([{ correlation_id: run.body.runId }]);

    const again = await h.request('POST', '/v1/admin/jobs/grant-expiry/run', { key: admin });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({
      job: 'grant-expiry',
      runId: expect.stringMatching(/^job_/),
      ran: true,
      result: { grants: 0, wallets: 0, amount: '0.000000' },
    });
    expect((await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body).toMatchObject({ total: '0.000000' });
  });
});
