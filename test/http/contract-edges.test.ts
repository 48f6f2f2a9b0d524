import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startAppWithKeys, uid, type Harness } from '../support/app';
import { events, ok } from '../support/requests';

/** Cases of the contract read line by line: which refusal wins, what stays put, what a URL as written does. */
describe('contract edges over HTTP', () => {
  let h: Harness, admin: string, cp: string;
  beforeAll(async () => ({ h, admin, cp } = await startAppWithKeys()));
  afterAll(() => h.close());

  const reserve = (body: Record<string, unknown>) => h.request('POST', '/v1/reservations', { key: cp, body });
  const extend = (runtimeId: string, body: unknown, key?: string) =>
    h.request('POST', `/v1/reservations/${runtimeId}/extend`, { key: cp, body, headers: key ? { 'idempotency-key': key } : {} });
  const terminated = (accountId: string, runtimeId: string) =>
    events(h, cp, lifecycle(accountId, runtimeId, 'runtime.terminated', new Date(), 9, { reason: 'user' }));

  it('lists the findings of an extension body and of its missing or too long Idempotency-Key together', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '5.000000' });
    const runtimeId = uid('rt');
    await ok(reserve({ accountId, runtimeId, ...SMALL }), 201);
    const missing = await extend(runtimeId, { minutes: 0, extra: 1 });
    expect(missing.status).toBe(400);
    expect(missing.body.error.findings).toEqual([
      { field: 'minutes', message: 'must be at least 1' },
      { field: 'extra', message: 'is not a known field' },
      { field: 'Idempotency-Key', message: 'header is required (1-200 characters)' },
    ]);
    const tooLong = await extend(runtimeId, {}, 'k'.repeat(201));
    expect(tooLong.body.error.findings.map((f: { field: string }) => f.field)).toEqual(['minutes', 'Idempotency-Key']);
    // Nothing was extended.
    expect(await ok(h.request('GET', `/v1/reservations/${runtimeId}`, { key: cp }))).toMatchObject({ minutes: 10 });
    await terminated(accountId, runtimeId);
  });

  it("scopes an extension's Idempotency-Key to its runtime: the key again on another runtime is that runtime's own extension", async () => {
    const accountId = await fundedAccount(h, admin, { credits: '5.000000' });
    const [a, b] = [uid('rt'), uid('rt')];
    await ok(reserve({ accountId, runtimeId: a, ...SMALL }), 201);
    await ok(reserve({ accountId, runtimeId: b, ...SMALL }), 201);
    expect(await ok(extend(a, { minutes: 5 }, 'shared'))).toMatchObject({ minutes: 15 });
    expect(await ok(extend(b, { minutes: 7 }, 'shared'))).toMatchObject({ minutes: 17 });
    expect((await extend(a, { minutes: 7 }, 'shared')).status).toBe(409);
    await terminated(accountId, a);
    await terminated(accountId, b);
  });

  it("keeps a reservation's expiresAt at its start deadline when it is told to terminate before it starts", async () => {
    const accountId = await fundedAccount(h, admin, { credits: '5.000000' });
    const runtimeId = uid('rt');
    const body = { accountId, runtimeId, ...SMALL };
    const first = await ok(reserve(body), 201);
    // A limit below what is held: the reserved runtime is told to terminate (spend_limit) before it starts.
    const lowered = await ok(
      h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, { key: admin, body: { credits: '0.100000', period: 'month' } }),
    );
    expect(lowered.terminated).toEqual([runtimeId]);
    const replay = await ok(reserve(body));
    expect(replay).toMatchObject({ status: 'terminating', expiresAt: first.expiresAt });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await ok(reserve(body))).toMatchObject({ expiresAt: first.expiresAt });
    await terminated(accountId, runtimeId);
  });

  it('gives a runtime running past its reserved minutes the instant it reached them as expiresAt, not the moment it is asked', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '5.000000' });
    const runtimeId = uid('rt');
    const body = { accountId, runtimeId, ...SMALL, minutes: 1 };
    await ok(reserve(body), 201);
    const start = new Date(Date.now() - 5 * 60_000);
    await events(h, cp, lifecycle(accountId, runtimeId, 'runtime.started', start, 1));
    const reached = new Date(start.getTime() + 60_000).toISOString();
    expect(await ok(reserve(body))).toMatchObject({ expiresAt: reached });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await ok(reserve(body))).toMatchObject({ expiresAt: reached });
    // Still inside its minutes: when they will run out.
    const other = { accountId, runtimeId: uid('rt'), ...SMALL, minutes: 10 };
    await ok(reserve(other), 201);
    await events(h, cp, lifecycle(accountId, other.runtimeId, 'runtime.started', start, 1));
    expect(await ok(reserve(other))).toMatchObject({ expiresAt: new Date(start.getTime() + 10 * 60_000).toISOString() });
    await terminated(accountId, runtimeId);
    await terminated(accountId, other.runtimeId);
  });

  it("refuses an extension of a suspended account's runtime as suspended, and one past a lowered limit as the limit reached", async () => {
    const accountId = await fundedAccount(h, admin, { credits: '5.000000' });
    const runtimeId = uid('rt');
    await ok(reserve({ accountId, runtimeId, ...SMALL }), 201);
    await events(h, cp, lifecycle(accountId, runtimeId, 'runtime.started', new Date(), 1));
    const suspension = (suspended: boolean) =>
      ok(h.request('PUT', `/v1/admin/accounts/${accountId}/suspension`, { key: admin, body: { suspended } }));
    expect((await suspension(true)).terminated).toEqual([runtimeId]);
    const suspended = await extend(runtimeId, { minutes: 10 }, uid('ext'));
    expect(suspended.status).toBe(403);
    expect(suspended.body.error.code).toBe('DL_BILLING_ACCOUNT_SUSPENDED');
    await suspension(false);

    // Another runtime, told to terminate by a limit lowered below its hold: an extension would pass that limit.
    const limited = uid('rt');
    await ok(reserve({ accountId, runtimeId: limited, ...SMALL }), 201);
    await events(h, cp, lifecycle(accountId, limited, 'runtime.started', new Date(), 1));
    await ok(h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, { key: admin, body: { credits: '0.100000' } }));
    const passed = await extend(limited, { minutes: 10 }, uid('ext'));
    expect(passed.status).toBe(402);
    expect(passed.body.error).toMatchObject({ code: 'DL_BILLING_SPEND_LIMIT_REACHED', remaining: '0.000000', limit: '0.100000' });
    // The limit raised again, the runtime still told to terminate: no minutes sold (its command stands).
    await ok(h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, { key: admin, body: { credits: null } }));
    const told = await extend(limited, { minutes: 10 }, uid('ext'));
    expect(told.status).toBe(400);
    expect(told.body.error.findings).toEqual([
      { field: 'runtimeId', message: 'is being terminated (spend_limit): an extension cannot keep it running' },
    ]);
    await terminated(accountId, runtimeId);
    await terminated(accountId, limited);
  });

  it("refuses a spend limit's userId that the limit could never have, in reading it as in setting it", async () => {
    const accountId = await fundedAccount(h, admin, { kind: 'organization' });
    const own = await h.key(`account:${accountId}`);
    const set = await h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, {
      key: own,
      body: { credits: '1.000000', scope: { userId: 'a b' } },
    });
    expect(set.body.error.findings).toEqual([{ field: 'scope.userId', message: 'must be a user id' }]);
    const read = await h.request('GET', `/v1/accounts/${accountId}/spend-limit?userId=a%20b`, { key: own });
    expect(read.status).toBe(400);
    expect(read.body.error.findings).toEqual([{ field: 'userId', message: 'must be a user id' }]);
  });

  it('reads an empty cursor (`ledger?cursor=`, as the contract writes it) as the first page, of the ledger and of the audit log', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '5.000000' });
    const own = await h.key(`account:${accountId}`);
    const first = await ok(h.request('GET', `/v1/accounts/${accountId}/ledger?limit=1`, { key: own }));
    const empty = await ok(h.request('GET', `/v1/accounts/${accountId}/ledger?cursor=&limit=1`, { key: own }));
    expect(empty).toEqual(first);
    expect(empty.items).toHaveLength(1);
    const audit = await ok(h.request('GET', `/v1/audit?accountId=${accountId}&cursor=`, { key: admin }));
    expect(audit.items.length).toBeGreaterThan(0);
    const bad = await h.request('GET', `/v1/accounts/${accountId}/ledger?cursor=x1`, { key: own });
    expect(bad.body.error.findings).toEqual([{ field: 'cursor', message: 'must be a cursor returned by this endpoint' }]);
  });

  it('reads the empty parameters of a URL as the contract writes it (`usage?from=&to=&groupBy=`) as absent, and still refuses an unknown one', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '5.000000' });
    const own = await h.key(`account:${accountId}`);
    const runtimeId = uid('rt');
    await ok(reserve({ accountId, runtimeId, ...SMALL }), 201);
    const start = new Date(Date.now() - 60_000);
    await events(
      h,
      cp,
      lifecycle(accountId, runtimeId, 'runtime.started', start, 1),
      lifecycle(accountId, runtimeId, 'runtime.terminated', new Date(start.getTime() + 30_000), 2, { reason: 'user' }),
    );
    const usage = await ok(h.request('GET', `/v1/accounts/${accountId}/usage`, { key: own }));
    expect(usage.total).toMatchObject({ runtimes: 1, seconds: 30 });
    expect(await ok(h.request('GET', `/v1/accounts/${accountId}/usage?from=&to=&groupBy=`, { key: own }))).toEqual(usage);
    const byDay = await ok(h.request('GET', `/v1/accounts/${accountId}/usage?groupBy=day`, { key: own }));
    expect(await ok(h.request('GET', `/v1/accounts/${accountId}/usage?from=&to=&groupBy=day`, { key: own }))).toEqual(byDay);
    const audit = await ok(h.request('GET', `/v1/audit?accountId=${accountId}`, { key: admin }));
    expect(await ok(h.request('GET', `/v1/audit?accountId=${accountId}&from=&to=`, { key: admin }))).toEqual(audit);
    const unknown = await h.request('GET', `/v1/accounts/${accountId}/usage?from=&since=`, { key: own });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.findings).toEqual([{ field: 'since', message: 'is not a parameter of this endpoint' }]);
  });

  it('names the parameter sent when a period is empty against the default of the one not sent (usage, reports)', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '1.000000' });
    const reportsKey = await h.key('reports');
    const month = new Date();
    const start = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), 1));
    const end = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1));
    const future = new Date(Date.UTC(month.getUTCFullYear() + 1, 0, 1)).toISOString();
    const past = new Date(Date.UTC(month.getUTCFullYear() - 1, 0, 1)).toISOString();
    for (const path of [`/v1/accounts/${accountId}/usage`, '/v1/reports/usage']) {
      const key = path.startsWith('/v1/reports') ? reportsKey : admin;
      const onlyFrom = await h.request('GET', `${path}?from=${future}`, { key });
      expect(onlyFrom.status).toBe(400);
      expect(onlyFrom.body.error.findings).toEqual([
        { field: 'from', message: `must be before to (not sent: the end of this month, ${end.toISOString()})` },
      ]);
      const onlyTo = await h.request('GET', `${path}?to=${past}&from=`, { key });
      expect(onlyTo.body.error.findings).toEqual([
        { field: 'to', message: `must be after from (not sent: the start of this month, ${start.toISOString()})` },
      ]);
      const both = await h.request('GET', `${path}?from=${future}&to=${past}`, { key });
      expect(both.body.error.findings).toEqual([{ field: 'to', message: 'must be after from' }]);
    }
  });
});
