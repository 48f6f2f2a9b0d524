import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startAppOnFreshDatabase, uid, type Harness } from '../support/app';

const MIN = 60_000;
const T0 = new Date('2031-08-04T09:00:00.000Z');

/**
 * A reservation given back as never started (voided) whose runtime then reports a run: while it runs
 * it is one of its account's running runtimes, for the concurrency quota, a suspension and a lowered
 * spend limit alike; its charge stays the correction of its zero settlement.
 */
describe('a runtime whose reservation was voided as never started, and that runs after all', () => {
  // A database of its own: the expiry sweep voids every reservation not started in time.
  let h: Harness;
  let admin: string;
  let cp: string;
  const clock = new ManualClock(T0);

  beforeAll(async () => {
    h = await startAppOnFreshDatabase('voided_runtimes', { clock });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(() => h.close());

  const at = (base: Date, ms: number) => new Date(base.getTime() + ms);
  const reserve = (accountId: string, runtimeId: string, minutes: number) =>
    h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes } });
  const accepted = async (body: unknown) => {
    const res = await h.request('POST', '/v1/events', { key: cp, body });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  };
  const view = async (runtimeId: string) => (await h.request('GET', `/v1/reservations/${runtimeId}`, { key: cp })).body;
  const sweep = async () => (await h.request('POST', '/v1/admin/jobs/expiry-sweep/run', { key: admin })).body.result;
  /** The terminate commands written for the commands topic (the outbox), oldest first. */
  const published = async (runtimeId: string) =>
    (
      (await h.ds.query(
        `SELECT payload->>'reason' AS reason FROM outbox
         WHERE payload->>'runtimeId' = $1 AND payload->>'type' = 'runtime.terminate' AND topic LIKE 'billing.commands%' ORDER BY id`,
        [runtimeId],
      )) as { reason: string }[]
    ).map((c) => c.reason);

  /**
   * Reserves `runtimeId` for 10 minutes at `start`, lets the sweep give it back as never started,
   * then delivers its late start (at start + 16 minutes) and a heartbeat: it runs, voided, told that
   * its reservation expired.
   */
  const voidedButRunning = async (accountId: string, runtimeId: string, start: Date) => {
    clock.set(start);
    expect((await reserve(accountId, runtimeId, 10)).status).toBe(201);
    clock.set(at(start, 16 * MIN));
    // (With any reservation an earlier test left not started.)
    expect((await sweep()).voidedNeverStarted).toBeGreaterThanOrEqual(1);
    await accepted([lifecycle(accountId, runtimeId, 'runtime.started', clock.now(), 1)]);
    await accepted([lifecycle(accountId, runtimeId, 'runtime.heartbeat', clock.now(), 2)]);
    expect(await view(runtimeId)).toMatchObject({
      status: 'voided',
      settlement: 'never_started',
      commands: [expect.objectContaining({ reason: 'reservation_expired', acknowledgedAt: null })],
    });
  };

  it('holds one of its account’s concurrency slots while it runs: a launch over the quota gets the 429', async () => {
    const start = T0;
    const res = await h.request('POST', '/v1/accounts', { key: admin, body: { id: uid('free'), kind: 'user', plan: 'free' } });
    expect(res.status).toBe(201);
    const accountId = res.body.id as string;
    const voided = uid('rt');
    await voidedButRunning(accountId, voided, start);
    // Free runs 2 at once: the voided one that runs and one more.
    expect((await reserve(accountId, uid('rt'), 10)).status).toBe(201);
    const refused = await reserve(accountId, uid('rt'), 10);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toEqual({
      code: 'DL_BILLING_QUOTA_EXCEEDED',
      message: expect.any(String),
      quota: 'concurrency',
      limit: 2,
      used: 2,
    });
    // It ends: its slot is free again, and it is charged the 2 minutes it ran (a correction of its zero settlement).
    clock.advance(2 * MIN);
    await accepted([lifecycle(accountId, voided, 'runtime.terminated', clock.now(), 3, { reason: 'reservation_expired' })]);
    expect(await view(voided)).toMatchObject({ status: 'settled', charged: '0.033334', runningSeconds: 120 });
    expect((await reserve(accountId, uid('rt'), 10)).status).toBe(201);
  });

  it('is told to terminate when its account is suspended, and is charged what it ran', async () => {
    const start = at(T0, 60 * MIN);
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const runtimeId = uid('rt');
    await voidedButRunning(accountId, runtimeId, start);
    clock.advance(MIN);
    const suspended = await h.request('PUT', `/v1/admin/accounts/${accountId}/suspension`, {
      key: admin,
      body: { suspended: true, reason: 'review' },
    });
    expect(suspended.status, JSON.stringify(suspended.body)).toBe(200);
    expect(suspended.body.terminated).toEqual([runtimeId]);
    expect(await published(runtimeId)).toEqual(['reservation_expired', 'account_suspended']);
    // Still voided: its charge is the correction of its zero settlement, as before.
    expect(await view(runtimeId)).toMatchObject({
      status: 'voided',
      commands: [
        expect.objectContaining({ reason: 'reservation_expired', acknowledgedAt: null }),
        expect.objectContaining({ reason: 'account_suspended', acknowledgedAt: null }),
      ],
    });
    clock.advance(MIN);
    await accepted([lifecycle(accountId, runtimeId, 'runtime.terminated', clock.now(), 3, { reason: 'account_suspended' })]);
    const settled = await view(runtimeId);
    expect(settled).toMatchObject({ status: 'settled', settlement: 'events', charged: '0.033334', runningSeconds: 120 });
    expect(settled.commands).toEqual([
      expect.objectContaining({ reason: 'reservation_expired', acknowledgedAt: clock.now().toISOString() }),
      expect.objectContaining({ reason: 'account_suspended', acknowledgedAt: clock.now().toISOString() }),
    ]);
    const wallet = (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body;
    expect(wallet).toMatchObject({ total: '9.966666', held: '0.000000' });
  });

  it('is told to terminate when its spend limit is lowered below the spend, with the scope’s other runtimes', async () => {
    const start = at(T0, 120 * MIN);
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const voided = uid('rt');
    await voidedButRunning(accountId, voided, start);
    // Another runtime of the account, reserved for an hour (1.000000 held) and running.
    const held = uid('rt');
    expect((await reserve(accountId, held, 60)).status).toBe(201);
    await accepted([lifecycle(accountId, held, 'runtime.started', clock.now(), 1)]);
    clock.advance(MIN);
    const lowered = await h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, {
      key: admin,
      body: { credits: '0.500000', period: 'month', thresholds: [] },
    });
    expect(lowered.status, JSON.stringify(lowered.body)).toBe(200);
    expect([...lowered.body.terminated].sort()).toEqual([held, voided].sort());
    expect(await published(voided)).toEqual(['reservation_expired', 'spend_limit']);
    expect(await view(voided)).toMatchObject({ status: 'voided' });
    clock.advance(MIN);
    await accepted([lifecycle(accountId, voided, 'runtime.terminated', clock.now(), 3, { reason: 'spend_limit' })]);
    expect(await view(voided)).toMatchObject({ status: 'settled', charged: '0.033334', runningSeconds: 120 });
    expect((await view(voided)).commands.every((c: { acknowledgedAt: string | null }) => c.acknowledgedAt !== null)).toBe(true);
  });

  it('still settles by force, at what it ran, when told by a suspension and silent after it', async () => {
    const start = at(T0, 180 * MIN);
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const runtimeId = uid('rt');
    await voidedButRunning(accountId, runtimeId, start);
    const suspended = await h.request('PUT', `/v1/admin/accounts/${accountId}/suspension`, {
      key: admin,
      body: { suspended: true, reason: 'review' },
    });
    expect(suspended.body.terminated).toEqual([runtimeId]);
    // Silent from now on: settled anyway, its zero settlement corrected to the hold (it ran past its 10 minutes).
    clock.advance(h.config.metering.settleGraceMs + h.config.metering.heartbeatTimeoutMs);
    expect((await sweep()).forcedSettlements).toBe(1);
    expect(await view(runtimeId)).toMatchObject({ status: 'settled', settlement: 'forced_reservation_expired', charged: '0.166667' });
  });

  it('is on the account’s page among its live runtimes, and an admin can tell it to terminate', async () => {
    const start = at(T0, 240 * MIN);
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const runtimeId = uid('rt');
    await voidedButRunning(accountId, runtimeId, start);
    const cookie = await h.consoleSession(admin);
    const page = await h.request('GET', `/admin/accounts/${accountId}`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const runtimes = String(page.body).split('<section id="runtimes">')[1]!.split('</section>')[0]!;
    expect(runtimes).toContain(runtimeId);
    const told = await h.request('POST', `/v1/admin/runtimes/${runtimeId}/terminate`, { key: admin });
    expect(told.status, JSON.stringify(told.body)).toBe(200);
    expect(told.body).toEqual({ runtimeId, accountId, status: 'voided', commandIssued: true });
    expect(await published(runtimeId)).toEqual(['reservation_expired', 'admin']);
    clock.advance(MIN);
    await accepted([lifecycle(accountId, runtimeId, 'runtime.terminated', clock.now(), 3, { reason: 'admin' })]);
    expect(await view(runtimeId)).toMatchObject({ status: 'settled', charged: '0.016667', runningSeconds: 60 });
    // Settled: nothing is left to terminate.
    expect((await h.request('POST', `/v1/admin/runtimes/${runtimeId}/terminate`, { key: admin })).status).toBe(400);
  });
});
