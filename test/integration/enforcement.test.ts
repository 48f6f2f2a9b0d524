import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';
import { eventually, produce, readTopic } from '../support/kafka';

const minute = 60_000;

describe('enforcement: a runtime that passes its reservation is told to terminate', () => {
  let h: Harness;
  let admin: string;
  let cp: string;
  const clock = new ManualClock(new Date(Date.now() - 60 * minute));

  beforeAll(async () => {
    h = await startApp({ kafka: true, clock, env: { TERMINATE_GRACE_MS: String(2 * minute), SETTLE_GRACE_MS: String(10 * minute) } });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(() => h.close());

  const sweep = async () => (await h.request('POST', '/v1/admin/jobs/expiry-sweep/run', { key: admin })).body;

  it('issues exactly one runtime.terminate, re-issues it only after the grace period while heartbeats continue, and acknowledges it on termination', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const runtimeId = uid('rt');
    const start = clock.now();
    expect((await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes: 5 } })).status).toBe(
      201,
    );
    const topic = h.config.topics.lifecycle;
    await produce(topic, [{ key: accountId, value: lifecycle(accountId, runtimeId, 'runtime.started', start, 1) }]);
    await eventually(
      async () => (await h.request('GET', `/v1/reservations/${runtimeId}`, { key: cp })).body.status === 'running',
      30_000,
      'running',
    );

    clock.advance(4 * minute);
    expect((await sweep()).result.reservationExpired).toBe(0);
    clock.advance(1 * minute + 1);
    expect((await sweep()).result.reservationExpired).toBe(1);
    // Sweeping again within the grace period sends nothing new.
    clock.advance(30_000);
    await produce(topic, [{ key: accountId, value: lifecycle(accountId, runtimeId, 'runtime.heartbeat', clock.now(), 2) }]);
    await eventually(
      async () => Number((await h.ds.query('SELECT events_count FROM runtimes WHERE runtime_id = $1', [runtimeId]))[0].events_count) === 2,
      30_000,
      'heartbeat',
    );
    expect((await sweep()).result).toMatchObject({ reservationExpired: 0, reissued: 0 });

    const commandsTopic = h.config.topics.commands;
    let commands = (await readTopic(commandsTopic, 1, 20_000, 1_500)).map((m) => JSON.parse(m.value));
    expect(commands).toEqual([
      {
        id: expect.stringMatching(/^cmd_/),
        type: 'runtime.terminate',
        accountId,
        runtimeId,
        reason: 'reservation_expired',
        issuedAt: expect.any(String),
      },
    ]);

    // Past the grace period, a runtime that is still reporting is told again.
    clock.advance(2 * minute);
    await produce(topic, [{ key: accountId, value: lifecycle(accountId, runtimeId, 'runtime.heartbeat', clock.now(), 3) }]);
    await eventually(
      async () => Number((await h.ds.query('SELECT events_count FROM runtimes WHERE runtime_id = $1', [runtimeId]))[0].events_count) === 3,
      30_000,
      'heartbeat',
    );
    expect((await sweep()).result.reissued).toBe(1);
    commands = (await readTopic(commandsTopic, 2, 20_000, 1_500)).map((m) => JSON.parse(m.value));
    expect(commands).toHaveLength(2);
    expect(commands[1]).toMatchObject({ runtimeId, reason: 'reservation_expired' });

    // The runtime's termination acknowledges the commands and settles the hold: 5 minutes' worth, the cap.
    await produce(topic, [
      { key: accountId, value: lifecycle(accountId, runtimeId, 'runtime.terminated', clock.now(), 4, { reason: 'expired' }) },
    ]);
    await eventually(
      async () => (await h.request('GET', `/v1/reservations/${runtimeId}`, { key: cp })).body.status === 'settled',
      30_000,
      'settled',
    );
    const view = (await h.request('GET', `/v1/reservations/${runtimeId}`, { key: cp })).body;
    expect(view.charged).toBe('0.083334'); // ceil(5 min of 1 credit/hour) = the whole hold
    expect(view.commands).toHaveLength(2);
    expect(view.commands.every((c: { acknowledgedAt: string | null }) => c.acknowledgedAt !== null)).toBe(true);
  });

  it('settles at the hold, and says so, when no runtime.terminated arrives; voids reservations never started', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const silent = uid('rt');
    const idle = uid('rt');
    await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: silent, ...SMALL, minutes: 5 } });
    await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: idle, ...SMALL, minutes: 5 } });
    await produce(h.config.topics.lifecycle, [{ key: accountId, value: lifecycle(accountId, silent, 'runtime.started', clock.now(), 1) }]);
    await eventually(
      async () => (await h.request('GET', `/v1/reservations/${silent}`, { key: cp })).body.status === 'running',
      30_000,
      'running',
    );
    clock.advance(6 * minute);
    expect((await sweep()).result.reservationExpired).toBe(1);
    clock.advance(11 * minute);
    const result = (await sweep()).result;
    expect(result.forcedSettlements).toBe(1);
    expect(result.voidedNeverStarted).toBe(1);
    const settled = (await h.request('GET', `/v1/reservations/${silent}`, { key: cp })).body;
    expect(settled).toMatchObject({ status: 'settled', charged: '0.083334', settlement: 'forced_reservation_expired' });
    expect(settled.explanation).toMatch(/without runtime.terminated/);
    expect((await h.request('GET', `/v1/reservations/${idle}`, { key: cp })).body).toMatchObject({ status: 'voided', charged: '0.000000' });
    const wallet = (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body;
    expect(wallet).toMatchObject({ total: '9.916666', held: '0.000000' });
  });

  it('settles over Kafka a runtime.terminated carrying the reason of our own command for the time it ran, acknowledging the command', async () => {
    const topic = h.config.topics.lifecycle;
    const view = async (runtimeId: string) => (await h.request('GET', `/v1/reservations/${runtimeId}`, { key: cp })).body;

    // account_suspended: told to terminate a minute in, it stops two minutes later; 3 minutes charged, not the hour held.
    const suspendedAccount = await fundedAccount(h, admin, { credits: '10.000000' });
    const suspendedRuntime = uid('rt');
    const start = clock.now();
    await h.request('POST', '/v1/reservations', {
      key: cp,
      body: { accountId: suspendedAccount, runtimeId: suspendedRuntime, ...SMALL, minutes: 60 },
    });
    await produce(topic, [{ key: suspendedAccount, value: lifecycle(suspendedAccount, suspendedRuntime, 'runtime.started', start, 1) }]);
    await eventually(async () => (await view(suspendedRuntime)).status === 'running', 30_000, 'running');
    clock.advance(minute);
    expect(
      (await h.request('PUT', `/v1/admin/accounts/${suspendedAccount}/suspension`, { key: admin, body: { suspended: true } })).status,
    ).toBe(200);
    expect((await view(suspendedRuntime)).commands).toEqual([
      expect.objectContaining({ reason: 'account_suspended', acknowledgedAt: null }),
    ]);

    // reservation_expired: a 5-minute reservation used up, told to terminate, and it does.
    const expiredAccount = await fundedAccount(h, admin, { credits: '10.000000' });
    const expiredRuntime = uid('rt');
    await h.request('POST', '/v1/reservations', {
      key: cp,
      body: { accountId: expiredAccount, runtimeId: expiredRuntime, ...SMALL, minutes: 5 },
    });
    await produce(topic, [{ key: expiredAccount, value: lifecycle(expiredAccount, expiredRuntime, 'runtime.started', clock.now(), 1) }]);
    await eventually(async () => (await view(expiredRuntime)).status === 'running', 30_000, 'running');
    clock.advance(5 * minute + 1000);
    expect((await sweep()).result.reservationExpired).toBe(1);

    clock.advance(20_000);
    await produce(topic, [
      {
        key: suspendedAccount,
        value: lifecycle(suspendedAccount, suspendedRuntime, 'runtime.terminated', new Date(start.getTime() + 3 * minute), 2, {
          reason: 'account_suspended',
        }),
      },
      {
        key: expiredAccount,
        value: lifecycle(expiredAccount, expiredRuntime, 'runtime.terminated', clock.now(), 2, { reason: 'reservation_expired' }),
      },
    ]);
    await eventually(
      async () => (await view(suspendedRuntime)).status === 'settled' && (await view(expiredRuntime)).status === 'settled',
      30_000,
      'settled',
    );
    const suspended = await view(suspendedRuntime);
    expect(suspended).toMatchObject({
      settlement: 'events',
      terminationReason: 'account_suspended',
      runningSeconds: 180,
      charged: '0.050000',
      released: '0.950000',
    });
    expect(suspended.commands).toEqual([expect.objectContaining({ reason: 'account_suspended', acknowledgedAt: expect.any(String) })]);
    const expired = await view(expiredRuntime);
    expect(expired).toMatchObject({ settlement: 'events', terminationReason: 'reservation_expired', charged: '0.083334' });
    expect(expired.commands).toEqual([expect.objectContaining({ reason: 'reservation_expired', acknowledgedAt: expect.any(String) })]);
    expect((await h.request('GET', `/v1/accounts/${suspendedAccount}/wallet`, { key: admin })).body).toMatchObject({
      total: '9.950000',
      held: '0.000000',
    });
  });
});
