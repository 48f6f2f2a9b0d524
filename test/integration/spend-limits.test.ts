import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';
import { eventually, produce, readTopic } from '../support/kafka';

const minute = 60_000;

describe('spend limits enforced by terminating runtimes (real broker)', () => {
  let h: Harness;
  let admin: string;
  let cp: string;

  beforeAll(async () => {
    h = await startApp({ kafka: true, env: { DATABASE_POOL_SIZE: '30' } });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(() => h.close());

  it('lowering the limit under 5 running runtimes sends 5 terminate commands; after they terminate, spend = time used', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '50.000000' });
    const runtimes = Array.from({ length: 5 }, () => uid('rt'));
    const start = new Date(Date.now() - 30 * minute);
    for (const runtimeId of runtimes) {
      expect((await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes: 60 } })).status).toBe(
        201,
      );
    }
    const topic = h.config.topics.lifecycle;
    await produce(
      topic,
      runtimes.map((r) => ({ key: accountId, value: lifecycle(accountId, r, 'runtime.started', start, 1) })),
    );
    await eventually(
      async () =>
        (await h.ds.query(`SELECT count(*)::int AS n FROM runtimes WHERE account_id = $1 AND status = 'running'`, [accountId]))[0].n === 5,
      30_000,
      'running',
    );

    const lowered = await h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, { key: admin, body: { credits: '1.000000' } });
    expect(lowered.status).toBe(200);
    expect([...lowered.body.terminated].sort()).toEqual([...runtimes].sort());
    const refused = await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: uid('rt'), ...SMALL } });
    expect(refused.body.error.code).toBe('DL_BILLING_SPEND_LIMIT_REACHED');

    const commands = (await readTopic(h.config.topics.commands, 5, 20_000, 1_500)).map((m) => JSON.parse(m.value));
    const mine = commands.filter((c) => c.accountId === accountId);
    expect(mine).toHaveLength(5);
    expect(mine.every((c) => c.type === 'runtime.terminate' && c.reason === 'spend_limit')).toBe(true);
    expect(new Set(mine.map((c) => c.runtimeId))).toEqual(new Set(runtimes));

    // Each ran 12, 13, … 16 minutes, each charge rounded up: 0.2 + 0.216667 + 0.233334 + 0.25 + 0.266667.
    await produce(
      topic,
      runtimes.map((r, i) => ({
        key: accountId,
        value: lifecycle(accountId, r, 'runtime.terminated', new Date(start.getTime() + (12 + i) * minute), 2, { reason: 'spend_limit' }),
      })),
    );
    await eventually(
      async () =>
        (await h.ds.query(`SELECT count(*)::int AS n FROM runtimes WHERE account_id = $1 AND status = 'settled'`, [accountId]))[0].n === 5,
      30_000,
      'settled',
    );
    const limit = await h.request('GET', `/v1/accounts/${accountId}/spend-limit`, { key: admin });
    expect(limit.body).toMatchObject({ spent: '1.166668', held: '0.000000' });
    const views = await Promise.all(runtimes.map((r) => h.request('GET', `/v1/reservations/${r}`, { key: cp })));
    expect(views.every((v) => v.body.commands.every((c: { acknowledgedAt: string | null }) => c.acknowledgedAt !== null))).toBe(true);
  });

  it('notifies 50, 80 and 100% exactly once each when concurrent reservations cross them, in that order; a raised limit is notified when reached again', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '50.000000' });
    /** Sets the limit, then sends 12 launches of 10 minutes at once; returns how many were reserved. */
    const limitThenLaunch = async (credits: string) => {
      await h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, { key: admin, body: { credits, thresholds: [50, 80, 100] } });
      const results = await Promise.all(
        Array.from({ length: 12 }, () =>
          h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: uid('rt'), ...SMALL, minutes: 10 } }),
        ),
      );
      return results.filter((r) => r.status === 201).length;
    };
    // 10 minutes of small hold 0.166667: exactly 6 fit in 1.000002, and the 6th reaches it.
    expect(await limitThenLaunch('1.000002')).toBe(6);
    const notes = async () =>
      (await readTopic(h.config.topics.notifications, 5, 20_000, 2_000))
        .map((m) => JSON.parse(m.value))
        .filter((n) => n.accountId === accountId && n.type.startsWith('spend_limit.'))
        .map((n) => `${n.type}${n.data.threshold ? `:${n.data.threshold}` : ''} of ${n.data.limit}`);
    expect(await notes()).toEqual([
      'spend_limit.threshold_crossed:50 of 1.000002',
      'spend_limit.threshold_crossed:80 of 1.000002',
      'spend_limit.threshold_crossed:100 of 1.000002',
      'spend_limit.reached of 1.000002',
    ]);

    // Raised to twice as much: 6 more fit, and the 12th reaches the new limit, which is said once more;
    // the thresholds, once per month, are not said again.
    expect(await limitThenLaunch('2.000004')).toBe(6);
    expect((await notes()).slice(4)).toEqual(['spend_limit.reached of 2.000004']);
  });
});
