import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';
import { readTopic } from '../support/kafka';

interface Note {
  id: string;
  type: string;
  accountId: string;
  occurredAt: string;
  data: Record<string, unknown>;
}

const idOf = (cause: string): string => `ntf_${createHash('md5').update(cause).digest('hex')}`;

// Years before the other test files' clocks: this file's grant-expiry run expires only its own grants.
const T0 = '2012-05-10T09:00:00.000Z';

describe('notifications on billing.notifications.v1 (real broker): one shape, one id per cause', () => {
  let h: Harness;
  let admin: string;
  let cp: string;
  const clock = new ManualClock(new Date(T0));

  beforeAll(async () => {
    h = await startApp({ kafka: true, clock });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(() => h.close());

  const notesOf = async (accountId: string, count: number): Promise<Note[]> =>
    (await readTopic(h.config.topics.notifications, count, 60_000, 3_000))
      .filter((m) => m.key === accountId)
      .map((m) => JSON.parse(m.value) as Note);

  it('an admin grant sends credits.granted once (a replay sends nothing), its expiry credits.expired; spend-limit alerts have the same shape and an id of their cause', async () => {
    const accountId = uid('acc');
    expect(
      (await h.request('POST', '/v1/accounts', { key: admin, body: { id: accountId, kind: 'organization', plan: 'enterprise' } })).status,
    ).toBe(201);
    const grant = {
      key: admin,
      body: { credits: '3.000000', expiresAt: '2012-05-10T12:00:00.000Z', reason: 'goodwill' },
      headers: { 'idempotency-key': uid('g') },
    };
    const first = await h.request('POST', `/v1/admin/accounts/${accountId}/grants`, grant);
    expect(first.status).toBe(201);
    expect((await h.request('POST', `/v1/admin/accounts/${accountId}/grants`, grant)).status).toBe(200);
    const grantId = first.body.grant.id as string;

    // 1 credit held of a 1.5 limit: past its 50% threshold (not its 100%).
    expect(
      (await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: uid('rt'), ...SMALL, minutes: 60 } })).status,
    ).toBe(201);
    const limit = await h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, {
      key: admin,
      body: { credits: '1.500000', thresholds: [50, 100] },
    });
    expect(limit.status).toBe(200);

    clock.set('2012-05-10T13:00:00.000Z');
    const run = await h.request('POST', '/v1/admin/jobs/grant-expiry/run', { key: admin });
    expect(run.body).toMatchObject({ ran: true, result: { grants: 1 } });

    const notes = await notesOf(accountId, 3);
    expect(notes.map((n) => n.type)).toEqual(['credits.granted', 'spend_limit.threshold_crossed', 'credits.expired']);
    // One shape for every type.
    for (const n of notes) expect(Object.keys(n).sort()).toEqual(['accountId', 'data', 'id', 'occurredAt', 'type']);
    const [granted, crossed, expired] = notes as [Note, Note, Note];
    expect(granted).toEqual({
      id: idOf(`credits.granted:${grantId}`),
      type: 'credits.granted',
      accountId,
      occurredAt: T0,
      data: { grantId, source: 'admin', credits: '3.000000', expiresAt: '2012-05-10T12:00:00.000Z', reason: 'goodwill' },
    });
    const limitId = crossed.data.limitId as string;
    expect(crossed).toEqual({
      id: idOf(`spend_limit.threshold_crossed:${limitId}:2012-05-01T00:00:00.000Z:50`),
      type: 'spend_limit.threshold_crossed',
      accountId,
      occurredAt: T0,
      data: {
        limitId,
        scope: null,
        threshold: 50,
        limit: '1.500000',
        spent: '1.000000',
        period: { from: '2012-05-01T00:00:00.000Z', to: '2012-06-01T00:00:00.000Z' },
      },
    });
    // 1 of the 3 credits is held: the other 2 expire (the held one when its hold releases it).
    expect(expired).toEqual({
      id: idOf(`credits.expired:${grantId}`),
      type: 'credits.expired',
      accountId,
      occurredAt: '2012-05-10T13:00:00.000Z',
      data: { grantId, source: 'admin', credits: '2.000000', expiredAt: '2012-05-10T12:00:00.000Z' },
    });
  });
});
