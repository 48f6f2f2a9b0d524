import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { GIB, pricedRateCardFile, usageEvent } from '../support/ancillary';
import { startAppOnFreshDatabase, uid, type Harness } from '../support/app';
import { ok } from '../support/requests';

const MIN = 60_000;
const T0 = new Date('2031-06-03T09:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

/**
 * An event id is the dedup key: the first copy delivered is the one kept, whatever a later copy
 * says. A later copy in the same request (or Kafka chunk) is a duplicate as one in a later request is.
 */
describe('one event id twice with different bodies: the first delivered is kept, in one batch as in two', () => {
  let h: Harness;
  let admin: string;
  let cp: string;
  const clock = new ManualClock(T0);

  beforeAll(async () => {
    h = await startAppOnFreshDatabase('duplicate_ids', { clock, env: { RATE_CARD_FILE: pricedRateCardFile(at(-MIN).toISOString()) } });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(() => h.close());

  const post = (body: unknown) => ok(h.request('POST', '/v1/events', { key: cp, body }));
  const view = (runtimeId: string) => ok(h.request('GET', `/v1/reservations/${runtimeId}`, { key: cp }));
  const wallet = (accountId: string) => ok(h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin }));
  const reserved = async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const runtimeId = uid('rt');
    await ok(h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes: 10 } }), 201);
    return { accountId, runtimeId };
  };

  it('keeps a runtime.started whose id a runtime.terminated later in the same request reuses, and charges the run its real end closes', async () => {
    clock.set(T0);
    const outcomes = [];
    for (const batched of [true, false]) {
      const { accountId, runtimeId } = await reserved();
      const started = lifecycle(accountId, runtimeId, 'runtime.started', T0, 1);
      const sameId = { ...lifecycle(accountId, runtimeId, 'runtime.terminated', at(MIN), 2, { reason: 'user' }), id: started.id };
      const answers = batched ? [await post([started, sameId])] : [await post([started]), await post([sameId])];
      expect(answers.reduce((sum, a) => ({ accepted: sum.accepted + a.accepted, duplicates: sum.duplicates + a.duplicates }))).toEqual({
        accepted: 1,
        duplicates: 1,
      });
      expect(await view(runtimeId)).toMatchObject({ status: 'running', intervals: [{ from: T0.toISOString(), to: null }] });

      await post([lifecycle(accountId, runtimeId, 'runtime.terminated', at(2 * MIN), 3, { reason: 'user' })]);
      const settled = await view(runtimeId);
      outcomes.push(settled);
      expect(settled).toMatchObject({ status: 'settled', runningSeconds: 120, charged: '0.033334', released: '0.133333' });
      expect(await wallet(accountId)).toMatchObject({ total: '9.966666', held: '0.000000', available: '9.966666' });
    }
    expect(outcomes[0].intervals).toEqual(outcomes[1].intervals);
  });

  it('keeps the first of two runtime.terminated with one id in the same request: its instant is the end charged', async () => {
    clock.set(T0);
    const { accountId, runtimeId } = await reserved();
    const first = lifecycle(accountId, runtimeId, 'runtime.terminated', at(3 * MIN), 2, { reason: 'user' });
    const copy = { ...lifecycle(accountId, runtimeId, 'runtime.terminated', at(9 * MIN), 3, { reason: 'culled' }), id: first.id };
    expect(await post([lifecycle(accountId, runtimeId, 'runtime.started', T0, 1), first, copy])).toEqual({ accepted: 2, duplicates: 1 });
    expect(await view(runtimeId)).toMatchObject({
      status: 'settled',
      terminationReason: 'user',
      runningSeconds: 180,
      charged: '0.050000',
      released: '0.116667',
    });
  });

  it('applies a runtime.started whose id a heartbeat before it in the same request used: heartbeats are kept by seq, not by id', async () => {
    clock.set(at(MIN));
    for (const batched of [true, false]) {
      const { accountId, runtimeId } = await reserved();
      const heartbeat = lifecycle(accountId, runtimeId, 'runtime.heartbeat', at(-MIN), 1);
      const started = { ...lifecycle(accountId, runtimeId, 'runtime.started', T0, 2), id: heartbeat.id };
      const answers = batched ? [await post([heartbeat, started])] : [await post([heartbeat]), await post([started])];
      expect(answers.reduce((sum, a) => sum + a.accepted, 0)).toBe(2);
      expect(await view(runtimeId)).toMatchObject({ status: 'running', intervals: [{ from: T0.toISOString(), to: null }] });
    }
  });

  it("refuses a copy of an id naming another account than the runtime's, in the same request (either place) as in a later one", async () => {
    clock.set(at(MIN));
    for (const foreignFirst of [true, false]) {
      const { accountId, runtimeId } = await reserved();
      const started = lifecycle(accountId, runtimeId, 'runtime.started', T0, 1);
      const foreign = { ...started, accountId: 'acc_someone_else' };
      const together = await h.request('POST', '/v1/events', { key: cp, body: foreignFirst ? [foreign, started] : [started, foreign] });
      expect(together.status).toBe(400);
      const message = `runtime ${runtimeId} belongs to another account`;
      expect(together.body.error.findings).toEqual([{ field: `events[${foreignFirst ? 0 : 1}].accountId`, message }]);
      expect(await view(runtimeId)).toMatchObject({ status: 'reserved', intervals: [] });

      expect(await post([started])).toEqual({ accepted: 1, duplicates: 0 });
      const later = await h.request('POST', '/v1/events', { key: cp, body: [foreign] });
      expect(later.status).toBe(400);
      expect(later.body.error.findings).toEqual([{ field: 'events[0].accountId', message }]);
    }
  });

  it('charges the first of two egress reports with one id in the same request, as it does across two requests', async () => {
    clock.set(at(2 * MIN));
    for (const batched of [true, false]) {
      const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
      const runtimeId = uid('rt');
      const report = (gib: number) =>
        usageEvent(
          accountId,
          'egress.reported',
          at(MIN),
          { bytes: gib * GIB, from: T0.toISOString(), to: at(MIN).toISOString() },
          { runtimeId },
        );
      const first = report(3);
      const copy = { ...report(1), id: first.id };
      const answers = batched ? [await post([first, copy])] : [await post([first]), await post([copy])];
      expect(answers.reduce((sum, a) => sum + a.duplicates, 0)).toBe(1);
      expect((await wallet(accountId)).total).toBe('9.700000');
    }
  });

  it("refuses a copy of a usage event's id naming another account than the volume's, in the same request (either place)", async () => {
    clock.set(at(2 * MIN));
    for (const foreignFirst of [true, false]) {
      const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
      const volumeId = uid('vol');
      await post([usageEvent(accountId, 'volume.created', T0, { volumeId, sizeGiB: 1 })]);
      const resized = usageEvent(accountId, 'volume.resized', at(MIN), { volumeId, sizeGiB: 2 });
      const foreign = { ...resized, accountId: 'acc_someone_else' };
      const together = await h.request('POST', '/v1/events', { key: cp, body: foreignFirst ? [foreign, resized] : [resized, foreign] });
      expect(together.status).toBe(400);
      expect(together.body.error.findings).toEqual([
        { field: `events[${foreignFirst ? 0 : 1}].accountId`, message: `volume ${volumeId} belongs to another account` },
      ]);
      expect(await post([resized])).toEqual({ accepted: 1, duplicates: 0 });
    }
  });
});
