import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import type { Schemas } from '../../clients/typescript/src/index';
import { startAppOnFreshDatabase, uid, type Harness } from '../support/app';

const MIN = 60_000;
const T0 = new Date('2031-05-06T12:57:00.000Z');

describe('settling what ran: our own termination reasons, contradictory launch failures, forced settlements', () => {
  // A database of its own: another file's expiry sweep (its clock years ahead) would settle or void this file's runtimes.
  let h: Harness;
  let admin: string;
  let cp: string;
  const clock = new ManualClock(T0);

  beforeAll(async () => {
    h = await startAppOnFreshDatabase('settlements', { clock });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(() => h.close());

  const at = (base: Date, ms: number) => new Date(base.getTime() + ms);
  // Reservations, events, views and wallets through the typed client: these tests hold it to the service.
  const reserve = async (accountId: string, runtimeId: string, minutes: number) => {
    const { data, error, response } = await h.client(cp).POST('/v1/reservations', { body: { accountId, runtimeId, ...SMALL, minutes } });
    expect(response.status, JSON.stringify(error)).toBe(201);
    return data!;
  };
  const send = (body: unknown) => h.request('POST', '/v1/events', { key: cp, body });
  const accepted = async (body: Schemas['EventsRequest']) => {
    const { error, response } = await h.client(cp).POST('/v1/events', { body });
    expect(response.status, JSON.stringify(error)).toBe(200);
  };
  const view = async (runtimeId: string) =>
    (await h.client(cp).GET('/v1/reservations/{runtimeId}', { params: { path: { runtimeId } } })).data!;
  const wallet = async (accountId: string) =>
    (await h.client(admin).GET('/v1/accounts/{id}/wallet', { params: { path: { id: accountId } } })).data!;
  const sweep = async () => (await h.request('POST', '/v1/admin/jobs/expiry-sweep/run', { key: admin })).body.result;
  /** An account funded with 10 credits, and a runtime of it reserved for `minutes` and started at `start`. */
  const startedRuntime = async (minutes: number, start: Date) => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const runtimeId = uid('rt');
    await reserve(accountId, runtimeId, minutes);
    await accepted(lifecycle(accountId, runtimeId, 'runtime.started', start, 1));
    return { accountId, runtimeId };
  };
  const audit = async (accountId: string, action: string) =>
    (
      (await h.request('GET', `/v1/audit?accountId=${accountId}`, { key: admin })).body.items as {
        action: string;
        after: Record<string, unknown>;
      }[]
    ).filter((a) => a.action === action);

  describe('runtime.terminated with the reason of our own command', () => {
    it('accepts account_suspended, charges the 2 minutes the runtime ran (not the hold) and acknowledges the command', async () => {
      clock.set(T0);
      const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
      const runtimeId = uid('rt');
      expect((await reserve(accountId, runtimeId, 60)).reserved).toBe('1.000000');
      await accepted(lifecycle(accountId, runtimeId, 'runtime.started', T0, 1));
      clock.advance(MIN);
      const suspended = await h.request('PUT', `/v1/admin/accounts/${accountId}/suspension`, {
        key: admin,
        body: { suspended: true, reason: 'test' },
      });
      expect(suspended.status, JSON.stringify(suspended.body)).toBe(200);
      expect((await view(runtimeId)).commands).toEqual([expect.objectContaining({ reason: 'account_suspended', acknowledgedAt: null })]);

      clock.advance(MIN);
      await accepted(lifecycle(accountId, runtimeId, 'runtime.terminated', at(T0, 2 * MIN), 2, { reason: 'account_suspended' }));
      const settled = await view(runtimeId);
      expect(settled).toMatchObject({
        status: 'settled',
        settlement: 'events',
        terminationReason: 'account_suspended',
        runningSeconds: 120,
        charged: '0.033334',
        released: '0.966666',
      });
      expect(settled.commands).toEqual([
        expect.objectContaining({ reason: 'account_suspended', acknowledgedAt: clock.now().toISOString() }),
      ]);
      expect(await wallet(accountId)).toMatchObject({ total: '9.966666', held: '0.000000' });
    });

    it('accepts reservation_expired, settling on the event (the hold, as the reservation was used up) and acknowledging the command', async () => {
      clock.set(T0);
      const { accountId, runtimeId } = await startedRuntime(5, T0);
      clock.advance(5 * MIN + 1000);
      expect((await sweep()).reservationExpired).toBe(1);
      clock.advance(20_000);
      await accepted(lifecycle(accountId, runtimeId, 'runtime.terminated', clock.now(), 2, { reason: 'reservation_expired' }));
      const settled = await view(runtimeId);
      expect(settled).toMatchObject({
        status: 'settled',
        settlement: 'events',
        terminationReason: 'reservation_expired',
        charged: '0.083334',
      });
      expect(settled.commands).toEqual([
        expect.objectContaining({ reason: 'reservation_expired', acknowledgedAt: clock.now().toISOString() }),
      ]);
      // Acknowledged: the sweeper has nothing left to force.
      clock.advance(h.config.metering.settleGraceMs + MIN);
      expect(await sweep()).toMatchObject({ forcedSettlements: 0 });
      expect((await view(runtimeId)).settlement).toBe('events');
    });

    it('accepts unreserved and any unknown reason, recorded as given; refuses a missing, empty or over-long reason', async () => {
      clock.set(T0);
      const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
      const stray = uid('rt');
      await accepted(lifecycle(accountId, stray, 'runtime.heartbeat', T0, 1));
      expect((await view(stray)).commands).toEqual([expect.objectContaining({ reason: 'unreserved', acknowledgedAt: null })]);
      await accepted(lifecycle(accountId, stray, 'runtime.terminated', at(T0, 1000), 2, { reason: 'unreserved' }));
      expect(await view(stray)).toMatchObject({
        terminationReason: 'unreserved',
        charged: '0.000000',
        commands: [expect.objectContaining({ acknowledgedAt: expect.any(String) })],
      });

      const odd = uid('rt');
      await reserve(accountId, odd, 60);
      await accepted([
        lifecycle(accountId, odd, 'runtime.started', T0, 1),
        lifecycle(accountId, odd, 'runtime.terminated', at(T0, 6 * MIN), 2, { reason: 'oom_killed_by_the_node' }),
      ]);
      expect(await view(odd)).toMatchObject({
        status: 'settled',
        settlement: 'events',
        terminationReason: 'oom_killed_by_the_node',
        charged: '0.100000',
      });

      const refused = await send([
        lifecycle(accountId, uid('rt'), 'runtime.terminated', T0, 2, {}),
        lifecycle(accountId, uid('rt'), 'runtime.terminated', T0, 2, { reason: '' }),
        lifecycle(accountId, uid('rt'), 'runtime.terminated', T0, 2, { reason: 'x'.repeat(501) }),
      ]);
      expect(refused.status).toBe(400);
      expect(refused.body.error.findings).toEqual(
        [0, 1, 2].map((i) => ({ field: `events[${i}].data.reason`, message: 'must be a string of 1-500 characters' })),
      );
    });
  });

  describe('a launch failure that contradicts a run', () => {
    // Started 12:57:00, terminated 13:07:00 (0.166667 at 1 credit/hour), and a launch failure stamped 12:57:01.
    const history = (accountId: string, runtimeId: string) => ({
      started: lifecycle(accountId, runtimeId, 'runtime.started', T0, 1),
      terminated: lifecycle(accountId, runtimeId, 'runtime.terminated', at(T0, 10 * MIN), 3, { reason: 'user' }),
      failed: lifecycle(accountId, runtimeId, 'runtime.launch_failed', at(T0, 1000), 2, { reason: 'image pull' }),
    });
    const orders: ('started' | 'terminated' | 'failed')[][] = [
      ['started', 'terminated', 'failed'],
      ['started', 'failed', 'terminated'],
      ['terminated', 'started', 'failed'],
      ['terminated', 'failed', 'started'],
      ['failed', 'started', 'terminated'],
      ['failed', 'terminated', 'started'],
    ];

    it.each(orders.map((o) => [o.join(' → '), o] as const))(
      'charges the run and flags the failure for review, delivered %s (with duplicates)',
      async (_name, order) => {
        clock.set(at(T0, 30 * MIN));
        const accountId = await fundedAccount(h, admin, { credits: '1.000000' });
        const runtimeId = uid('rt');
        await reserve(accountId, runtimeId, 60);
        const events = history(accountId, runtimeId);
        for (const name of order) {
          await accepted(events[name]);
          await accepted(events[order[0]!]); // a duplicate of the first, each time
        }
        await accepted(order.map((name) => events[name])); // and all of them again, at once

        const settled = await view(runtimeId);
        expect(settled).toMatchObject({
          status: 'settled',
          settlement: 'events',
          charged: '0.166667',
          released: '0.833333',
          runningSeconds: 600,
          intervals: [{ from: T0.toISOString(), to: at(T0, 10 * MIN).toISOString() }],
          review: [
            {
              flag: 'launch_failed_contradicted',
              eventId: events.failed.id,
              occurredAt: at(T0, 1000).toISOString(),
              reason: 'image pull',
              message: expect.any(String),
            },
          ],
        });
        expect(settled.explanation).toMatch(/launch_failed .*flagged for review, not voided/);
        expect(await wallet(accountId)).toMatchObject({ total: '0.833333', held: '0.000000', available: '0.833333' });
        const flagged = await audit(accountId, 'runtime.launch_failed_contradicted');
        expect(flagged).toHaveLength(1);
        expect(flagged[0]!.after).toMatchObject({ runtimeId, eventId: events.failed.id, reason: 'image pull' });
        // Under the event that made the contradiction appear, not the HTTP request that carried it.
        const correlation = (flagged[0] as unknown as { correlationId: string }).correlationId;
        expect([events.started.id, events.failed.id, events.terminated.id]).toContain(correlation);
      },
    );

    it('voids a failed launch alone, and one after a start that nothing closed; a later termination makes it a run', async () => {
      clock.set(at(T0, 30 * MIN));
      const accountId = await fundedAccount(h, admin, { credits: '2.000000' });
      const alone = uid('rt');
      const started = uid('rt');
      await reserve(accountId, alone, 60);
      await reserve(accountId, started, 60);
      await accepted(history(accountId, alone).failed);
      const b = history(accountId, started);
      await accepted([b.started, b.failed]);
      for (const runtimeId of [alone, started]) {
        expect(await view(runtimeId)).toMatchObject({
          status: 'voided',
          settlement: 'launch_failed',
          charged: '0.000000',
          review: [],
          terminationReason: 'image pull',
        });
      }
      expect(await wallet(accountId)).toMatchObject({ total: '2.000000', held: '0.000000', available: '2.000000' });
      expect(await audit(accountId, 'runtime.launch_failed_contradicted')).toHaveLength(0);

      await accepted(b.terminated);
      expect(await view(started)).toMatchObject({
        status: 'settled',
        charged: '0.166667',
        review: [expect.objectContaining({ eventId: b.failed.id })],
      });
      expect(await wallet(accountId)).toMatchObject({ total: '1.833333', held: '0.000000' });
    });
  });

  describe('the reservation view after a forced settlement', () => {
    it('counts a heartbeat once per seq without storing it, and still takes its instant as a sign of life', async () => {
      clock.set(at(T0, 6 * 60 * MIN));
      const start = clock.now();
      const { accountId, runtimeId } = await startedRuntime(60, start);
      expect((await send(lifecycle(accountId, runtimeId, 'runtime.heartbeat', at(start, 5 * MIN), 3))).body).toEqual({
        accepted: 1,
        duplicates: 0,
      });
      // A copy under another id, and an older seq: duplicates, not counted again.
      expect((await send(lifecycle(accountId, runtimeId, 'runtime.heartbeat', at(start, 5 * MIN), 3))).body).toEqual({
        accepted: 0,
        duplicates: 1,
      });
      expect((await send(lifecycle(accountId, runtimeId, 'runtime.heartbeat', at(start, 7 * MIN), 2))).body).toEqual({
        accepted: 0,
        duplicates: 1,
      });
      const [row] = await h.ds.query(`SELECT events_count, heartbeats, heartbeat_seq::int AS top FROM runtimes WHERE runtime_id = $1`, [
        runtimeId,
      ]);
      expect(row).toEqual({ events_count: 2, heartbeats: 1, top: 3 });
      expect(
        (await h.ds.query(`SELECT type FROM runtime_events WHERE runtime_id = $1`, [runtimeId])).map((e: { type: string }) => e.type),
      ).toEqual(['runtime.started']);
      // The older seq's later instant is still its last sign of life: the forced settlement charges up to it + the timeout.
      clock.set(at(start, 18 * MIN));
      expect(await sweep()).toMatchObject({ unreachable: 1 });
      clock.advance(h.config.metering.settleGraceMs + MIN);
      expect((await sweep()).forcedSettlements).toBe(1);
      expect(await view(runtimeId)).toMatchObject({
        status: 'settled',
        settlement: 'forced_unreachable',
        runningSeconds: 1020,
        charged: '0.283334',
      });
    });

    it('closes a silent runtime at its last sign of life + the heartbeat timeout, stops counting and says so', async () => {
      clock.set(at(T0, 2 * 60 * MIN));
      const start = clock.now();
      const { accountId, runtimeId } = await startedRuntime(60, start);
      await accepted(lifecycle(accountId, runtimeId, 'runtime.heartbeat', at(start, 5 * MIN), 2));
      clock.set(at(start, 16 * MIN));
      expect(await sweep()).toMatchObject({ unreachable: 1, forcedSettlements: 0 });
      const end = at(start, 15 * MIN); // 13:02 + 10 minutes
      // Told to terminate, not settled yet: its charge so far is already what the settlement will charge, and stays.
      clock.advance(h.config.metering.settleGraceMs / 2);
      const waiting = await view(runtimeId);
      expect(waiting).toMatchObject({ status: 'terminating', settlement: null, runningSeconds: 900, charged: '0.250000' });
      expect(waiting.explanation).toContain(`so far, up to ${end.toISOString()} = its last sign of life + the heartbeat timeout (600 s)`);
      clock.advance(h.config.metering.settleGraceMs / 2 + MIN);
      expect((await sweep()).forcedSettlements).toBe(1);

      const settled = await view(runtimeId);
      expect(settled).toMatchObject({
        status: 'settled',
        settlement: 'forced_unreachable',
        charged: '0.250000',
        runningSeconds: 900,
        intervals: [{ from: start.toISOString(), to: end.toISOString() }],
      });
      expect(settled.explanation).toBe(
        `settled without runtime.terminated (forced_unreachable): told to terminate (unreachable), no runtime.terminated came within the grace period; ` +
          `charged up to ${end.toISOString()} = its last sign of life (${at(start, 5 * MIN).toISOString()}) + the heartbeat timeout (600 s), capped at the hold: ` +
          `900.000 s running × 1.000000 credits/hour (rate card ${settled.rateCardVersion}), rounded up to the micro-credit, capped at the hold of 1.000000 = 0.250000`,
      );
      // Later, and after a late pause, nothing grows.
      clock.advance(45 * MIN);
      await accepted(lifecycle(accountId, runtimeId, 'runtime.paused', at(start, 40 * MIN), 3));
      expect(await view(runtimeId)).toMatchObject({
        runningSeconds: 900,
        charged: '0.250000',
        intervals: [{ from: start.toISOString(), to: end.toISOString() }],
      });
      expect(await wallet(accountId)).toMatchObject({ total: '9.750000', held: '0.000000' });
      const usage = await h.request(
        'GET',
        `/v1/accounts/${accountId}/usage?groupBy=runtime&from=${at(start, -MIN).toISOString()}&to=${clock.now().toISOString()}`,
        { key: admin },
      );
      expect(usage.body.items).toEqual([{ runtime: runtimeId, runtimes: 1, seconds: 900, credits: '0.250000' }]);
    });

    it('charges a silent runtime up to its last sign of life + the timeout when the sweep finds it past its reservation too', async () => {
      clock.set(at(T0, 3 * 60 * MIN));
      const start = clock.now();
      const { accountId, runtimeId } = await startedRuntime(60, start);
      await accepted(lifecycle(accountId, runtimeId, 'runtime.heartbeat', at(start, 30 * MIN), 2));
      // The sweep comes late (the service was down): past its 60 minutes, and silent since 30.
      clock.set(at(start, 80 * MIN));
      expect(await sweep()).toMatchObject({ reservationExpired: 1, forcedSettlements: 0 });
      clock.advance(h.config.metering.settleGraceMs + MIN);
      expect((await sweep()).forcedSettlements).toBe(1);
      const end = at(start, 40 * MIN);
      const settled = await view(runtimeId);
      expect(settled).toMatchObject({
        status: 'settled',
        settlement: 'forced_unreachable',
        charged: '0.666667',
        runningSeconds: 2400,
        intervals: [{ from: start.toISOString(), to: end.toISOString() }],
      });
      expect(settled.explanation).toContain(
        `(forced_unreachable): told to terminate (reservation_expired), no runtime.terminated came within the grace period; ` +
          `charged up to ${end.toISOString()} = its last sign of life (${at(start, 30 * MIN).toISOString()})`,
      );
      expect(await wallet(accountId)).toMatchObject({ total: '9.333333', held: '0.000000' });
    });

    it('closes a runtime past its reservation where the reserved minutes ran out, charged the hold', async () => {
      clock.set(at(T0, 4 * 60 * MIN));
      const start = clock.now();
      const { runtimeId } = await startedRuntime(5, start);
      clock.advance(6 * MIN);
      expect((await sweep()).reservationExpired).toBe(1);
      clock.advance(h.config.metering.settleGraceMs + MIN);
      expect((await sweep()).forcedSettlements).toBe(1);
      const end = at(start, 5 * MIN);
      const settled = await view(runtimeId);
      expect(settled).toMatchObject({
        status: 'settled',
        settlement: 'forced_reservation_expired',
        charged: '0.083334',
        runningSeconds: 300,
        intervals: [{ from: start.toISOString(), to: end.toISOString() }],
      });
      expect(settled.explanation).toMatch(
        new RegExp(
          `^settled without runtime\\.terminated \\(forced_reservation_expired\\).*its running time reached the 5 reserved minutes at ${end.toISOString()}, so the hold is charged: 300\\.000 s running`,
        ),
      );
      clock.advance(60 * MIN);
      expect((await view(runtimeId)).runningSeconds).toBe(300);
    });
    it('lets a runtime told its reservation ran out run on once extended: the command is withdrawn, not re-issued, not settled at the hold', async () => {
      clock.set(at(T0, 5 * 60 * MIN));
      const start = clock.now();
      const { accountId, runtimeId } = await startedRuntime(1, start);
      clock.advance(70_000);
      expect((await sweep()).reservationExpired).toBe(1);
      expect(await view(runtimeId)).toMatchObject({
        status: 'terminating',
        commands: [{ reason: 'reservation_expired', acknowledgedAt: null }],
      });
      const extended = await h.request('POST', `/v1/reservations/${runtimeId}/extend`, {
        key: cp,
        body: { minutes: 60 },
        headers: { 'idempotency-key': uid('x') },
      });
      expect(extended.status, JSON.stringify(extended.body)).toBe(200);
      expect(extended.body).toMatchObject({ minutes: 61, status: 'running' });
      expect((await view(runtimeId)).commands).toEqual([
        expect.objectContaining({ reason: 'reservation_expired', acknowledgedAt: clock.now().toISOString() }),
      ]);
      expect(await audit(accountId, 'runtime.terminate_withdrawn')).toEqual([
        expect.objectContaining({ after: expect.objectContaining({ runtimeId, reason: 'reservation_expired' }) }),
      ]);
      // Still reporting past the grace periods, well inside its 61 minutes: nothing more is sent, nothing settled.
      for (let seq = 2; seq <= 4; seq++) {
        clock.advance(h.config.metering.settleGraceMs / 2);
        await accepted(lifecycle(accountId, runtimeId, 'runtime.heartbeat', clock.now(), seq));
        expect(await sweep()).toMatchObject({ reservationExpired: 0, reissued: 0, forcedSettlements: 0 });
      }
      // It ends: charged what it ran, the rest given back.
      const end = clock.now();
      await accepted(lifecycle(accountId, runtimeId, 'runtime.terminated', end, 5, { reason: 'user' }));
      const ran = end.getTime() - start.getTime();
      expect(await view(runtimeId)).toMatchObject({
        status: 'settled',
        settlement: 'events',
        charged: (Math.ceil((1_000_000 * ran) / 3_600_000) / 1e6).toFixed(6),
      });
    });
    it('charges a runtime forced past its reservation what its events show when a late pause shows it ran less', async () => {
      clock.set(at(T0, 6 * 60 * MIN));
      const start = clock.now();
      const { accountId, runtimeId } = await startedRuntime(1, start);
      clock.advance(70_000);
      await accepted(lifecycle(accountId, runtimeId, 'runtime.heartbeat', clock.now(), 3));
      expect((await sweep()).reservationExpired).toBe(1);
      // Delivered late: it paused 10 s after starting.
      await accepted(lifecycle(accountId, runtimeId, 'runtime.paused', at(start, 10_000), 2));
      clock.advance(h.config.metering.settleGraceMs + MIN);
      expect((await sweep()).forcedSettlements).toBe(1);
      const settled = await view(runtimeId);
      // 10 s at 1 credit/h, not the 1-minute hold (0.016667).
      expect(settled).toMatchObject({ status: 'settled', runningSeconds: 10, charged: '0.002778' });
      expect(settled.explanation).not.toMatch(/reached the 1 reserved minutes/);
    });

    it('sells no minutes to a runtime told to terminate for another reason: its command stands', async () => {
      clock.set(at(T0, 7 * 60 * MIN));
      const { accountId, runtimeId } = await startedRuntime(10, clock.now());
      const suspension = (suspended: boolean) =>
        h.request('PUT', `/v1/admin/accounts/${accountId}/suspension`, { key: admin, body: { suspended, reason: 'review' } });
      expect((await suspension(true)).body.terminated).toEqual([runtimeId]);
      expect((await suspension(false)).status).toBe(200);
      const extended = await h.request('POST', `/v1/reservations/${runtimeId}/extend`, {
        key: cp,
        body: { minutes: 10 },
        headers: { 'idempotency-key': uid('x') },
      });
      expect(extended.status).toBe(400);
      expect(extended.body.error).toMatchObject({
        code: 'DL_BILLING_REQUEST_INVALID',
        findings: [{ field: 'runtimeId', message: 'is being terminated (account_suspended): an extension cannot keep it running' }],
      });
      expect(await view(runtimeId)).toMatchObject({ minutes: 10, reserved: '0.166667' });
    });

    it('tells a runtime whose reservation was given back as never started, and that runs after all, that it expired, again while it reports', async () => {
      clock.set(at(T0, 8 * 60 * MIN));
      const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
      const runtimeId = uid('rt');
      await reserve(accountId, runtimeId, 1);
      clock.advance(16 * MIN);
      expect((await sweep()).voidedNeverStarted).toBeGreaterThanOrEqual(1);
      // Its start, stamped inside the window, arrives late; it keeps reporting.
      await accepted(lifecycle(accountId, runtimeId, 'runtime.started', at(clock.now(), -90_000), 1));
      await accepted(lifecycle(accountId, runtimeId, 'runtime.heartbeat', clock.now(), 2));
      expect((await view(runtimeId)).commands).toEqual([expect.objectContaining({ reason: 'reservation_expired', acknowledgedAt: null })]);
      clock.advance(h.config.metering.terminateGraceMs + 1_000);
      await accepted(lifecycle(accountId, runtimeId, 'runtime.heartbeat', clock.now(), 3));
      expect((await sweep()).reissued).toBe(1);
      expect((await view(runtimeId)).commands).toHaveLength(2);
      // Then silent: settled anyway, its zero settlement corrected to what it ran (more than its minute: the hold).
      clock.advance(h.config.metering.settleGraceMs + h.config.metering.heartbeatTimeoutMs);
      expect((await sweep()).forcedSettlements).toBe(1);
      expect(await view(runtimeId)).toMatchObject({ status: 'settled', charged: '0.016667', released: '0.000000' });
      expect(await wallet(accountId)).toMatchObject({ total: '9.983333', held: '0.000000' });
    });

    it('explains a forced settlement by the command it went by, not one an extension withdrew', async () => {
      clock.set(at(T0, 9 * 60 * MIN));
      const start = clock.now();
      const { runtimeId } = await startedRuntime(1, start);
      clock.advance(70_000);
      expect((await sweep()).reservationExpired).toBe(1);
      const extended = await h.request('POST', `/v1/reservations/${runtimeId}/extend`, {
        key: cp,
        body: { minutes: 60 },
        headers: { 'idempotency-key': uid('x') },
      });
      expect(extended.body).toMatchObject({ status: 'running' });
      // Silent since its start: told it is unreachable, then settled without it.
      clock.advance(h.config.metering.heartbeatTimeoutMs);
      expect((await sweep()).unreachable).toBe(1);
      clock.advance(h.config.metering.settleGraceMs + MIN);
      expect((await sweep()).forcedSettlements).toBe(1);
      const settled = await view(runtimeId);
      expect(settled).toMatchObject({ status: 'settled', settlement: 'forced_unreachable' });
      expect(settled.explanation).toContain('told to terminate (unreachable)');
    });
  });

  describe('a runtime that ran without a reservation', () => {
    // One runtime without a reservation, on a fresh account each time: it starts, pauses at 3 minutes and
    // terminates at 7; a launch failure of it is reported at 7.5. Each order lists the requests made.
    type Run = Record<'started' | 'paused' | 'terminated' | 'failed', ReturnType<typeof lifecycle>>;
    const outcomesByOrder = async (start: Date, orders: Record<string, (e: Run) => Run[keyof Run][][]>, credits = '10.000000') => {
      const outcomes = [];
      for (const [order, requests] of Object.entries(orders)) {
        const accountId = await fundedAccount(h, admin, { credits });
        const runtimeId = uid('rt');
        const events: Run = {
          started: lifecycle(accountId, runtimeId, 'runtime.started', start, 1, { ...SMALL }),
          paused: lifecycle(accountId, runtimeId, 'runtime.paused', at(start, 3 * MIN), 2),
          terminated: lifecycle(accountId, runtimeId, 'runtime.terminated', at(start, 7 * MIN), 3, { reason: 'user' }),
          failed: lifecycle(accountId, runtimeId, 'runtime.launch_failed', at(start, 7.5 * MIN), 4, { reason: 'image' }),
        };
        for (const request of requests(events)) await accepted(request);
        const v = await view(runtimeId);
        const total = (await wallet(accountId)).total;
        outcomes.push({ order, status: v.status, reserved: v.reserved, charged: v.charged, runningSeconds: v.runningSeconds, total });
      }
      return outcomes;
    };
    // 3 minutes running at 1.000000 an hour; the on-the-fly reservation is the default 10 minutes.
    const chargedTheRun = { status: 'settled', reserved: '0.166667', charged: '0.050000', runningSeconds: 180, total: '9.950000' };

    it('is reserved on the fly and charged the same whatever order its events come in, one by one or all at once', async () => {
      const start = at(T0, 24 * 60 * MIN);
      clock.set(at(start, 8 * MIN));
      expect(
        await outcomesByOrder(start, {
          'in order': (e) => [[e.started], [e.paused], [e.terminated]],
          'all at once': (e) => [[e.started, e.paused, e.terminated]],
          'terminated first': (e) => [[e.terminated], [e.paused], [e.started]],
        }),
      ).toEqual([
        { order: 'in order', ...chargedTheRun },
        { order: 'all at once', ...chargedTheRun },
        { order: 'terminated first', ...chargedTheRun },
      ]);
    });

    it('is reserved for the minutes it ran once it has ended, where the wallet cannot take the default 10, in every order', async () => {
      const start = at(T0, 120 * 60 * MIN);
      clock.set(at(start, 8 * MIN));
      // 0.100000 credits: less than the default 10 minutes' hold (0.166667), more than the 3 minutes it ran.
      const chargedWhatItRan = { ...chargedTheRun, reserved: '0.050000', total: '0.050000' };
      expect(
        await outcomesByOrder(
          start,
          {
            'in order': (e) => [[e.started], [e.paused], [e.terminated]],
            'all at once': (e) => [[e.started, e.paused, e.terminated]],
            'terminated first': (e) => [[e.terminated], [e.paused], [e.started]],
          },
          '0.100000',
        ),
      ).toEqual([
        { order: 'in order', ...chargedWhatItRan },
        { order: 'all at once', ...chargedWhatItRan },
        { order: 'terminated first', ...chargedWhatItRan },
      ]);
    });

    it('withdraws the terminate command of a runtime whose heartbeat came before its start, once its start reserves it', async () => {
      const start = at(T0, 48 * 60 * MIN);
      clock.set(at(start, MIN));
      const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
      const runtimeId = uid('rt');
      await accepted([lifecycle(accountId, runtimeId, 'runtime.heartbeat', at(start, 30_000), 2)]);
      expect(await view(runtimeId)).toMatchObject({
        status: 'terminating',
        commands: [expect.objectContaining({ reason: 'unreserved', acknowledgedAt: null })],
      });
      await accepted([lifecycle(accountId, runtimeId, 'runtime.started', start, 1, { ...SMALL })]);
      const reserved = await view(runtimeId);
      expect(reserved).toMatchObject({ status: 'running', reserved: '0.166667' });
      expect(reserved.commands).toEqual([expect.objectContaining({ reason: 'unreserved', acknowledgedAt: expect.any(String) })]);
      expect(await audit(accountId, 'runtime.terminate_withdrawn')).toEqual([
        expect.objectContaining({ after: expect.objectContaining({ runtimeId, reason: 'unreserved' }) }),
      ]);
      // It keeps reporting past the grace period: nothing is re-issued.
      for (let i = 3; i < 6; i++) {
        clock.advance(2 * MIN);
        await accepted([lifecycle(accountId, runtimeId, 'runtime.heartbeat', clock.now(), i)]);
        await sweep();
      }
      expect((await view(runtimeId)).commands).toHaveLength(1);
      await accepted([lifecycle(accountId, runtimeId, 'runtime.terminated', clock.now(), 9, { reason: 'user' })]);
      expect(await view(runtimeId)).toMatchObject({ status: 'settled', charged: '0.116667' });
    });

    it('charges by a correction the run that late events show for a reservation given back as never started', async () => {
      const start = at(T0, 72 * 60 * MIN);
      clock.set(start);
      const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
      const runtimeId = uid('rt');
      await reserve(accountId, runtimeId, 10);
      clock.advance(16 * MIN);
      expect((await sweep()).voidedNeverStarted).toBe(1);
      expect(await view(runtimeId)).toMatchObject({ status: 'voided', charged: '0.000000', settlement: 'never_started' });
      expect((await wallet(accountId)).total).toBe('10.000000');
      // Its events were only late: it started a minute after the reservation and ran 5 minutes.
      await accepted([
        lifecycle(accountId, runtimeId, 'runtime.started', at(start, MIN), 1),
        lifecycle(accountId, runtimeId, 'runtime.terminated', at(start, 6 * MIN), 2, { reason: 'user' }),
      ]);
      expect(await view(runtimeId)).toMatchObject({ status: 'settled', charged: '0.083334', runningSeconds: 300 });
      expect(await wallet(accountId)).toMatchObject({ total: '9.916666', held: '0.000000' });
    });

    it('charges the run its events show when a launch failure of it came first, as in any other order', async () => {
      const start = at(T0, 96 * 60 * MIN);
      clock.set(at(start, 8 * MIN));
      expect(
        await outcomesByOrder(start, {
          'failure last': (e) => [[e.started], [e.paused], [e.terminated], [e.failed]],
          'failure first': (e) => [[e.failed], [e.started], [e.terminated], [e.paused]],
          'failure first, all at once': (e) => [[e.failed, e.started, e.terminated, e.paused]],
        }),
      ).toEqual([
        { order: 'failure last', ...chargedTheRun },
        { order: 'failure first', ...chargedTheRun },
        { order: 'failure first, all at once', ...chargedTheRun },
      ]);
    });
  });
});
