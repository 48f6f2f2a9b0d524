import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';
import { eventually, produce } from '../support/kafka';

const minute = 60_000;

describe('metering on the real broker: reserve, run, pause, settle', () => {
  let h: Harness;
  let admin: string;
  let controlPlane: string;

  beforeAll(async () => {
    h = await startApp({ kafka: true });
    admin = await h.key('admin');
    controlPlane = await h.key('control-plane');
  });
  afterAll(() => h.close());

  it('charges exactly 0.500000 for 30 minutes of small running around a 10-minute pause, and releases the rest', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '5.000000' });
    const runtimeId = uid('rt');
    const reserved = await h.request('POST', '/v1/reservations', {
      key: controlPlane,
      body: { accountId, runtimeId, ...SMALL, minutes: 60 },
    });
    expect(reserved.status).toBe(201);
    expect(reserved.body).toMatchObject({
      runtimeId,
      status: 'reserved',
      ratePerHour: '1.000000',
      minutes: 60,
      reserved: '1.000000',
      balance: { total: '5.000000', held: '1.000000', available: '4.000000' },
    });

    const t0 = new Date(Date.now() - 3 * 60 * minute);
    const at = (m: number) => new Date(t0.getTime() + m * minute);
    await produce(h.config.topics.lifecycle, [
      { key: accountId, value: lifecycle(accountId, runtimeId, 'runtime.started', at(0), 1) },
      { key: accountId, value: lifecycle(accountId, runtimeId, 'runtime.heartbeat', at(5), 2) },
      { key: accountId, value: lifecycle(accountId, runtimeId, 'runtime.paused', at(10), 3) },
      { key: accountId, value: lifecycle(accountId, runtimeId, 'runtime.resumed', at(20), 4) },
      { key: accountId, value: lifecycle(accountId, runtimeId, 'runtime.heartbeat', at(30), 5) },
      { key: accountId, value: lifecycle(accountId, runtimeId, 'runtime.terminated', at(40), 6, { reason: 'user' }) },
    ]);

    await eventually(
      async () => (await h.request('GET', `/v1/reservations/${runtimeId}`, { key: controlPlane })).body.status === 'settled',
      30_000,
      'settlement',
    );
    const reservation = await h.request('GET', `/v1/reservations/${runtimeId}`, { key: controlPlane });
    expect(reservation.body).toMatchObject({
      status: 'settled',
      runningSeconds: 1800,
      charged: '0.500000',
      released: '0.500000',
      intervals: [
        { from: at(0).toISOString(), to: at(10).toISOString() },
        { from: at(20).toISOString(), to: at(40).toISOString() },
      ],
    });

    const wallet = await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin });
    expect(wallet.body).toMatchObject({ total: '4.500000', held: '0.000000', available: '4.500000' });
    // The runtime's row, rebuilt from its events: instants to the millisecond, and the reason it ended.
    const [row] = await h.ds.query(`SELECT started_at, terminated_at, termination_reason FROM runtimes WHERE runtime_id = $1`, [runtimeId]);
    expect(row).toEqual({ started_at: at(0), terminated_at: at(40), termination_reason: 'user' });

    const usage = await h.request(
      'GET',
      // Dated as the statement dates it: in the period its charge was posted (now), not when it ran.
      `/v1/accounts/${accountId}/usage?groupBy=runtime&from=${at(-1).toISOString()}&to=${new Date(Date.now() + 3_600_000).toISOString()}`,
      { key: admin },
    );
    expect(usage.status).toBe(200);
    expect(usage.body.items).toEqual([{ runtime: runtimeId, runtimes: 1, seconds: 1800, credits: '0.500000' }]);

    // The ledger tells the same story: the settlement charged 0.5 against the hold of 1.
    const ledger = await h.request('GET', `/v1/accounts/${accountId}/ledger`, { key: admin });
    expect(ledger.status).toBe(200);
    const charged = ledger.body.entries ?? ledger.body.items;
    expect(JSON.stringify(charged)).toContain('0.500000');
  });

  it('voids the hold when the launch fails and gives every credit back', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '2.000000' });
    const runtimeId = uid('rt');
    await h.request('POST', '/v1/reservations', { key: controlPlane, body: { accountId, runtimeId, ...SMALL, minutes: 30 } });
    const now = new Date();
    await produce(h.config.topics.lifecycle, [
      { key: accountId, value: lifecycle(accountId, runtimeId, 'runtime.launch_failed', now, 1, { reason: 'image pull' }) },
    ]);
    await eventually(
      async () => (await h.request('GET', `/v1/reservations/${runtimeId}`, { key: controlPlane })).body.status === 'voided',
      30_000,
      'void',
    );
    const wallet = await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin });
    expect(wallet.body).toMatchObject({ total: '2.000000', held: '0.000000', available: '2.000000' });
  });
});
