import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startAppWithKeys, uid, type Harness } from '../support/app';

describe('spend limits over HTTP', () => {
  let h: Harness, admin: string, cp: string;
  beforeAll(async () => ({ h, admin, cp } = await startAppWithKeys({ env: { DATABASE_POOL_SIZE: '30' } })));
  afterAll(() => h.close());

  it('lets exactly k of 100 concurrent reservations through a limit that fits k', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '100.000000' });
    // 10 minutes of small = 0.166667 credits; a limit of 2.000000 fits 11 of them (1.833337), not 12.
    const set = await h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, {
      key: admin,
      body: { credits: '2.000000', period: 'month', thresholds: [50, 80, 100] },
    });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ credits: '2.000000', spent: '0.000000', held: '0.000000', remaining: '2.000000' });
    const results = await Promise.all(
      Array.from({ length: 100 }, () =>
        h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: uid('rt'), ...SMALL, minutes: 10 } }),
      ),
    );
    const ok = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 402);
    expect(ok).toHaveLength(11);
    expect(refused).toHaveLength(89);
    expect(refused[0]!.body.error).toMatchObject({ code: 'DL_BILLING_SPEND_LIMIT_REACHED', remaining: '0.166663' });
    const wallet = await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin });
    expect(wallet.body.spend).toMatchObject({ spent: '0.000000', held: '1.833337', limit: '2.000000' });
    expect(wallet.body.held).toBe('1.833337');
    // Each threshold was written to the outbox once, and the limit was not reached.
    const notes = await h.ds.query(
      `SELECT payload->>'type' AS type, payload->'data'->>'threshold' AS threshold FROM outbox WHERE key = $1 AND topic LIKE 'billing.notifications%' AND payload->>'type' LIKE 'spend_limit.%' ORDER BY id`,
      [accountId],
    );
    expect(notes).toEqual([
      { type: 'spend_limit.threshold_crossed', threshold: '50' },
      { type: 'spend_limit.threshold_crossed', threshold: '80' },
    ]);
  });

  it('limits one member of an organization without limiting the others, and an account key sets only its own limit', async () => {
    const org = await fundedAccount(h, admin, { credits: '10.000000', kind: 'organization' });
    const orgKey = await h.key(`account:${org}`);
    const other = await fundedAccount(h, admin, { credits: '1.000000' });
    expect((await h.request('PUT', `/v1/accounts/${other}/spend-limit`, { key: orgKey, body: { credits: '1.000000' } })).status).toBe(403);
    const set = await h.request('PUT', `/v1/accounts/${org}/spend-limit`, {
      key: orgKey,
      body: { credits: '0.200000', scope: { userId: 'carol' } },
    });
    expect(set.status).toBe(200);
    expect(set.body.scope).toEqual({ userId: 'carol' });
    const carol = () =>
      h.request('POST', '/v1/reservations', {
        key: cp,
        body: { accountId: org, runtimeId: uid('rt'), userId: 'carol', ...SMALL, minutes: 10 },
      });
    expect((await carol()).status).toBe(201);
    const second = await carol();
    expect(second.status).toBe(402);
    expect(second.body.error).toMatchObject({ code: 'DL_BILLING_SPEND_LIMIT_REACHED', scope: { userId: 'carol' }, remaining: '0.033333' });
    const dave = await h.request('POST', '/v1/reservations', {
      key: cp,
      body: { accountId: org, runtimeId: uid('rt'), userId: 'dave', ...SMALL, minutes: 10 },
    });
    expect(dave.status).toBe(201);
  });

  it('refuses a malformed limit with every finding', async () => {
    const accountId = await fundedAccount(h, admin);
    const res = await h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, {
      key: admin,
      body: { credits: '-1', period: 'week', thresholds: [0, 50, 50] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.findings.map((f: { field: string }) => f.field)).toEqual(
      expect.arrayContaining(['credits', 'period', 'thresholds.0', 'thresholds']),
    );
  });

  it('audits a limit set again only when it changes', async () => {
    const accountId = await fundedAccount(h, admin);
    const put = (credits: string, thresholds: number[]) =>
      h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, { key: admin, body: { credits, thresholds } });
    for (const [credits, thresholds] of [
      ['5.000000', [80, 50]],
      ['5.000000', [50, 80]],
      ['5.000000', [50, 80]],
      ['6.000000', [50, 80]],
    ] as const) {
      expect((await put(credits, [...thresholds])).status).toBe(200);
    }
    const audited = await h.request('GET', `/v1/audit?accountId=${accountId}`, { key: admin });
    const sets = (audited.body.items as { action: string; after: { credits: string } }[]).filter((a) => a.action === 'spend_limit.set');
    expect(sets.map((a) => a.after.credits).sort()).toEqual(['5.000000', '6.000000']);
  });

  it('announces a limit reached once per amount in a period, however often it is changed back to it', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '20.000000' });
    const reserve = await h.request('POST', '/v1/reservations', {
      key: cp,
      body: { accountId, runtimeId: uid('rt'), ...SMALL, minutes: 600 },
    });
    expect(reserve.status, JSON.stringify(reserve.body)).toBe(201);
    // 10 credits held: reached at 10, at 5, at 10 again, at 5 again, then raised out of reach.
    for (const credits of ['10.000000', '5.000000', '10.000000', '5.000000', '20.000000']) {
      const put = await h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, { key: admin, body: { credits, thresholds: [] } });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
    }
    const reached: { payload: { id: string; data: { limit: string } } }[] = await h.ds.query(
      `SELECT payload FROM outbox WHERE key = $1 AND payload->>'type' = 'spend_limit.reached' ORDER BY id`,
      [accountId],
    );
    expect(reached.map((r) => r.payload.data.limit)).toEqual(['10.000000', '5.000000']);
    expect(new Set(reached.map((r) => r.payload.id)).size).toBe(2);
  });

  it('suspends an account: new launches refused, its runtimes told to terminate; reactivation lets it launch again', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '5.000000' });
    const running = uid('rt');
    await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: running, ...SMALL } });
    await h.request('POST', '/v1/events', { key: cp, body: lifecycle(accountId, running, 'runtime.started', new Date(), 1) });
    const suspended = await h.request('PUT', `/v1/admin/accounts/${accountId}/suspension`, {
      key: admin,
      body: { suspended: true, reason: 'payment failed' },
    });
    expect(suspended.body).toEqual({ accountId, status: 'suspended', suspendedFor: ['admin'], terminated: [running] });
    // Asked again (a double-submitted form): the same answer, and nothing more to audit.
    const again = await h.request('PUT', `/v1/admin/accounts/${accountId}/suspension`, {
      key: admin,
      body: { suspended: true, reason: 'payment failed' },
    });
    expect(again.body).toEqual({ accountId, status: 'suspended', suspendedFor: ['admin'], terminated: [] });
    const refused = await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: uid('rt'), ...SMALL } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('DL_BILLING_ACCOUNT_SUSPENDED');
    const view = await h.request('GET', `/v1/reservations/${running}`, { key: cp });
    expect(view.body).toMatchObject({ status: 'terminating', commands: [expect.objectContaining({ reason: 'account_suspended' })] });
    await h.request('PUT', `/v1/admin/accounts/${accountId}/suspension`, { key: admin, body: { suspended: false } });
    expect((await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: uid('rt'), ...SMALL } })).status).toBe(
      201,
    );
    const audit = await h.request('GET', `/v1/audit?accountId=${accountId}`, { key: admin });
    const changes = audit.body.items.map((i: { action: string }) => i.action).filter((a: string) => a.startsWith('account.'));
    expect(changes.sort()).toEqual(['account.created', 'account.reactivated', 'account.suspended']);
    // The holder is told of each change once.
    const told: { payload: { type: string; data: unknown } }[] = await h.ds.query(
      `SELECT payload FROM outbox WHERE key = $1 AND payload->>'type' LIKE 'account.%' ORDER BY id`,
      [accountId],
    );
    expect(told.map((t) => [t.payload.type, t.payload.data])).toEqual([
      ['account.suspended', { reason: 'payment failed', terminated: 1 }],
      ['account.reactivated', { reason: null, terminated: 0 }],
    ]);
  });

  it('counts a runtime reserved last month and still running in this month: its extensions and a lowered limit see its hold', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '100.000000' });
    const runtimeId = uid('rt');
    // One hour of small (1.000000 credit), reserved and started, then moved to the last day of the month before.
    expect((await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes: 60 } })).status).toBe(
      201,
    );
    await h.request('POST', '/v1/events', { key: cp, body: lifecycle(accountId, runtimeId, 'runtime.started', new Date(), 1) });
    await h.ds.query(`UPDATE runtimes SET created_at = date_trunc('month', now()) - interval '1 hour' WHERE runtime_id = $1`, [runtimeId]);
    const limit = (credits: string) => h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, { key: admin, body: { credits } });
    const set = await limit('1.500000');
    expect(set.body).toMatchObject({ spent: '0.000000', held: '1.000000', remaining: '0.500000', terminated: [] });
    const extend = (minutes: number) =>
      h.request('POST', `/v1/reservations/${runtimeId}/extend`, { key: cp, body: { minutes }, headers: { 'idempotency-key': uid('x') } });
    const refused = await extend(60);
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({ code: 'DL_BILLING_SPEND_LIMIT_REACHED', remaining: '0.500000', held: '1.000000' });
    expect((await extend(20)).status).toBe(200);
    const launch = await h.request('POST', '/v1/reservations', {
      key: cp,
      body: { accountId, runtimeId: uid('rt'), ...SMALL, minutes: 10 },
    });
    expect(launch.status).toBe(402);
    expect(launch.body.error).toMatchObject({ remaining: '0.166666', held: '1.333334' });
    // Lowered below what it holds, the limit stops it.
    const lowered = await limit('1.000000');
    expect(lowered.body).toMatchObject({ held: '1.333334', remaining: '0.000000', terminated: [runtimeId] });
    const view = await h.request('GET', `/v1/reservations/${runtimeId}`, { key: cp });
    expect(view.body).toMatchObject({ status: 'terminating', commands: [expect.objectContaining({ reason: 'spend_limit' })] });
  });
});
