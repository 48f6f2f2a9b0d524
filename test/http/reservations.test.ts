import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startApp, startAppWithKeys, uid, type Harness } from '../support/app';

describe('reservations over HTTP', () => {
  let h: Harness, admin: string, cp: string;
  beforeAll(async () => ({ h, admin, cp } = await startAppWithKeys()));
  afterAll(() => h.close());

  const reserve = (body: unknown, key = cp) => h.request('POST', '/v1/reservations', { key, body });
  /**
   * Ends runtimes a test told to terminate: its commands are acknowledged, so that no other test
   * file's sweep (they share the database) settles them later under its own clock.
   */
  const terminate = async (accountId: string, runtimeIds: string[]) => {
    const body = runtimeIds.map((runtimeId) => ({
      ...lifecycle(accountId, runtimeId, 'runtime.terminated', new Date(), 99),
      type: 'runtime.terminated' as const,
      data: { reason: 'user' },
    }));
    // Through the typed client: the events body and its answer are the document's.
    const { data, response } = await h.client(cp).POST('/v1/events', { body });
    expect(response.status).toBe(200);
    expect(data!.accepted + data!.duplicates).toBe(runtimeIds.length);
  };

  it('lists every finding of a malformed request with its field', async () => {
    const res = await reserve({
      accountId: '',
      runtimeId: 'rt 1',
      variant: 'datalayer',
      environment: { sizeClass: 'huge' },
      minutes: 0,
      extra: true,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('DL_BILLING_REQUEST_INVALID');
    const fields = res.body.error.findings.map((f: { field: string }) => f.field);
    expect(fields).toEqual(expect.arrayContaining(['accountId', 'runtimeId', 'environment.name', 'environment.sizeClass', 'minutes']));
  });

  it('refuses GPUs on e2b as unsupported, an unknown account as not found, and an overdraw as insufficient credits', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '0.500000' });
    const api = h.client(cp);
    const gpu = await api.POST('/v1/reservations', {
      body: {
        accountId,
        runtimeId: uid('rt'),
        variant: 'e2b',
        environment: { name: 'x', sizeClass: 'gpu-small', accelerator: { type: 'H100', count: 1, cuda: '12.8' } },
      },
    });
    expect(gpu.response.status).toBe(422);
    expect(gpu.error?.error.code).toBe('DL_BILLING_CAPABILITY_UNSUPPORTED');
    const missing = await api.POST('/v1/reservations', { body: { accountId: uid('nobody'), runtimeId: uid('rt'), ...SMALL } });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error.code).toBe('DL_BILLING_NOT_FOUND');
    const tooMuch = await api.POST('/v1/reservations', { body: { accountId, runtimeId: uid('rt'), ...SMALL, minutes: 31 } });
    expect(tooMuch.response.status).toBe(402);
    expect(tooMuch.error?.error).toMatchObject({ code: 'DL_BILLING_INSUFFICIENT_CREDITS', available: '0.500000', required: '0.516667' });
    const wallet = await h.client(admin).GET('/v1/accounts/{id}/wallet', { params: { path: { id: accountId } } });
    expect(wallet.data).toMatchObject({ total: '0.500000', held: '0.000000', available: '0.500000' });
  });

  it('defaults to 10 minutes and is idempotent on runtimeId: the same body again is 200, another body 409', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '1.000000' });
    const runtimeId = uid('rt');
    const api = h.client(cp);
    const first = await api.POST('/v1/reservations', { body: { accountId, runtimeId, ...SMALL } });
    expect(first.response.status).toBe(201);
    expect(first.data).toMatchObject({ minutes: 10, reserved: '0.166667', balance: { available: '0.833333', held: '0.166667' } });
    const again = await api.POST('/v1/reservations', { body: { accountId, runtimeId, ...SMALL } });
    expect(again.response.status).toBe(200);
    expect(again.data?.reservationId).toBe(first.data?.reservationId);
    expect(again.data?.balance.held).toBe('0.166667');
    const other = await api.POST('/v1/reservations', { body: { accountId, runtimeId, ...SMALL, minutes: 20 } });
    expect(other.response.status).toBe(409);
    expect(other.error?.error).toMatchObject({ code: 'DL_BILLING_IDEMPOTENCY_CONFLICT', reservationId: first.data?.reservationId });
    const details = await api.GET('/v1/reservations/{runtimeId}', { params: { path: { runtimeId } } });
    expect(details.data).toMatchObject({ status: 'reserved', accountId, reserved: '0.166667', charged: '0.000000', commands: [] });
  });

  it('reserves once for concurrent copies of one request (the others are replays) and refuses a concurrent different one', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '2.000000' });
    const runtimeId = uid('rt');
    const copies = await Promise.all(Array.from({ length: 6 }, () => reserve({ accountId, runtimeId, ...SMALL })));
    expect(copies.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(new Set(copies.map((r) => r.body.reservationId))).toEqual(new Set([`res_${runtimeId}`]));
    const wallet = await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin });
    expect(wallet.body).toMatchObject({ held: '0.166667', available: '1.833333' });
    const other = uid('rt');
    const different = await Promise.all([
      reserve({ accountId, runtimeId: other, ...SMALL }),
      reserve({ accountId, runtimeId: other, ...SMALL, minutes: 20 }),
    ]);
    expect(different.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(different.find((r) => r.status === 409)!.body.error.code).toBe('DL_BILLING_IDEMPOTENCY_CONFLICT');
  });

  it('holds the whole reserved time rounded once: 10 + 20 + 30 minutes at 1/h hold 1.000000, not 1.000001', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '2.000000' });
    const runtimeId = uid('rt');
    expect((await reserve({ accountId, runtimeId, ...SMALL, minutes: 10 })).body.reserved).toBe('0.166667');
    const extend = (minutes: number) =>
      h.request('POST', `/v1/reservations/${runtimeId}/extend`, { key: cp, body: { minutes }, headers: { 'idempotency-key': uid('x') } });
    expect((await extend(20)).body).toMatchObject({ minutes: 30, reserved: '0.500000' });
    expect((await extend(30)).body).toMatchObject({
      minutes: 60,
      reserved: '1.000000',
      balance: { held: '1.000000', available: '1.000000' },
    });
    const wallet = await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin });
    expect(wallet.body).toMatchObject({ total: '2.000000', held: '1.000000', available: '1.000000' });
    await terminate(accountId, [runtimeId]);
  });

  it('extends a reservation once per Idempotency-Key', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '2.000000' });
    const runtimeId = uid('rt');
    await reserve({ accountId, runtimeId, ...SMALL, minutes: 30 });
    const extend = (minutes: number, key?: string) =>
      h.request('POST', `/v1/reservations/${runtimeId}/extend`, {
        key: cp,
        body: { minutes },
        headers: key ? { 'idempotency-key': key } : {},
      });
    expect((await extend(30)).status).toBe(400);
    const once = await extend(30, 'ext-1');
    expect(once.status).toBe(200);
    expect(once.body).toMatchObject({ minutes: 60, reserved: '1.000000', balance: { held: '1.000000', available: '1.000000' } });
    const replay = await extend(30, 'ext-1');
    expect(replay.body).toMatchObject({ minutes: 60, reserved: '1.000000' });
    const conflict = await extend(45, 'ext-1');
    expect(conflict.status).toBe(409);
    const tooMuch = await extend(61, 'ext-2');
    expect(tooMuch.status).toBe(402);
    expect(
      (
        await h.request('POST', `/v1/reservations/${uid('rt')}/extend`, {
          key: cp,
          body: { minutes: 5 },
          headers: { 'idempotency-key': 'k' },
        })
      ).status,
    ).toBe(404);
  });

  it('extended in parallel, holds what one reservation of the same minutes would; parallel copies of one extension replay it', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const runtimeId = uid('rt');
    expect((await reserve({ accountId, runtimeId, ...SMALL, minutes: 10 })).body).toMatchObject({ reserved: '0.166667' });
    const extend = (key: string) =>
      h.request('POST', `/v1/reservations/${runtimeId}/extend`, { key: cp, body: { minutes: 10 }, headers: { 'idempotency-key': key } });
    const distinct = await Promise.all(['p1', 'p2', 'p3', 'p4'].map(extend));
    expect(distinct.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    // 50 minutes at 1.000000 an hour, rounded up once: 0.833334 (five rounded tenths would be 0.833335).
    const view = await h.request('GET', `/v1/reservations/${runtimeId}`, { key: cp });
    expect(view.body).toMatchObject({ minutes: 50, reserved: '0.833334' });
    const copies = await Promise.all(Array.from({ length: 8 }, () => extend('same')));
    expect(copies.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(new Set(copies.map((r) => r.body.minutes))).toEqual(new Set([60]));
    expect((await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body).toMatchObject({ held: '1.000000' });
    await terminate(accountId, [runtimeId]);
  });

  it('extends a runtime of the longest id under the longest Idempotency-Key, once', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const runtimeId = `rt_${'x'.repeat(125)}`;
    const reserved = await reserve({ accountId, runtimeId, ...SMALL, minutes: 10 });
    expect(reserved.status, JSON.stringify(reserved.body)).toBe(201);
    const extend = () =>
      h.request('POST', `/v1/reservations/${runtimeId}/extend`, {
        key: cp,
        body: { minutes: 10 },
        headers: { 'idempotency-key': 'e'.repeat(200) },
      });
    expect((await extend()).body).toMatchObject({ minutes: 20, reserved: '0.333334' });
    expect((await extend()).body).toMatchObject({ minutes: 20, reserved: '0.333334' });
    await terminate(accountId, [runtimeId]);
  });

  it('audits every reservation, extension and terminate command, once, with who did it and the balances around it', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '2.000000' });
    const runtimeId = uid('rt');
    const stray = uid('rt');
    await reserve({ accountId, runtimeId, ...SMALL, minutes: 30 });
    await reserve({ accountId, runtimeId, ...SMALL, minutes: 30 }); // a replay changes nothing: no second row
    const extend = { key: cp, body: { minutes: 30 }, headers: { 'idempotency-key': 'ext-audit' } };
    await h.request('POST', `/v1/reservations/${runtimeId}/extend`, extend);
    await h.request('POST', `/v1/reservations/${runtimeId}/extend`, extend);
    await h.request('POST', '/v1/events', { key: cp, body: [lifecycle(accountId, stray, 'runtime.heartbeat', new Date(), 1)] });

    const audit = await h.request('GET', `/v1/audit?accountId=${accountId}`, { key: admin });
    const rows = (audit.body.items as { action: string; actor: string; before: unknown; after: Record<string, unknown> }[]).filter((r) =>
      ['hold.created', 'hold.increased', 'runtime.terminate_issued'].includes(r.action),
    );
    expect(rows.map((r) => r.action)).toEqual(['runtime.terminate_issued', 'hold.increased', 'hold.created']);
    const [command, increased, created] = rows;
    expect(created).toMatchObject({
      actor: expect.stringMatching(/^key:/),
      before: { total: '2.000000', available: '2.000000', held: '0.000000', debt: '0.000000' },
      after: {
        total: '2.000000',
        available: '1.500000',
        held: '0.500000',
        debt: '0.000000',
        hold: { id: `hold_${runtimeId}`, amount: '0.500000', reference: runtimeId },
        reason: expect.stringContaining('30 minutes of datalayer'),
      },
    });
    expect(increased).toMatchObject({
      actor: expect.stringMatching(/^key:/),
      before: { total: '2.000000', available: '1.500000', held: '0.500000', debt: '0.000000' },
      after: {
        total: '2.000000',
        available: '1.000000',
        held: '1.000000',
        debt: '0.000000',
        hold: { id: `hold_${runtimeId}`, increase: '0.500000', amount: '1.000000' },
      },
    });
    expect(command).toMatchObject({
      actor: 'system:metering',
      after: { runtimeId: stray, reason: 'unreserved', command: expect.stringMatching(/^cmd_/) },
    });
    await terminate(accountId, [stray]);
  });

  it("hides another account's reservation from an account key", async () => {
    const mine = await fundedAccount(h, admin, { credits: '1.000000' });
    const theirs = await fundedAccount(h, admin, { credits: '1.000000' });
    const runtimeId = uid('rt');
    await reserve({ accountId: theirs, runtimeId, ...SMALL });
    const myKey = await h.key(`account:${mine}`);
    // The same answer as for a runtime that does not exist: a key cannot tell whether another account's runtime id exists.
    const theirsSeen = await h.request('GET', `/v1/reservations/${runtimeId}`, { key: myKey });
    const missing = await h.request('GET', `/v1/reservations/${uid('rt')}`, { key: myKey });
    expect(theirsSeen.status).toBe(404);
    expect(theirsSeen.body.error.code).toBe('DL_BILLING_NOT_FOUND');
    expect(theirsSeen.body.error.message.replace(runtimeId, 'X')).toBe(missing.body.error.message.replace(/rt_\w+/, 'X'));
    expect((await h.request('GET', `/v1/accounts/${theirs}/usage`, { key: myKey })).status).toBe(403);
    expect((await reserve({ accountId: mine, runtimeId: uid('rt'), ...SMALL }, myKey)).status).toBe(403);
    const theirKey = await h.key(`account:${theirs}`);
    expect((await h.request('GET', `/v1/reservations/${runtimeId}`, { key: theirKey })).status).toBe(200);
    // Reserving their reserved runtime for my account: 409 on runtimeId, and nothing of their reservation in the body.
    for (const request of [{ ...SMALL }, { ...SMALL, minutes: 30 }]) {
      const taken = await reserve({ accountId: mine, runtimeId, ...request });
      expect(taken.status).toBe(409);
      expect(taken.body).toEqual({
        error: {
          code: 'DL_BILLING_IDEMPOTENCY_CONFLICT',
          message: `Runtime ${runtimeId} belongs to another account`,
          findings: [{ field: 'runtimeId', message: 'is a runtime of another account' }],
        },
      });
    }
    expect((await h.request('GET', `/v1/accounts/${mine}/wallet`, { key: admin })).body).toMatchObject({ held: '0.000000' });
  });

  it('reserves a runtime that started without a reservation on the fly, and tells one that cannot be reserved to terminate', async () => {
    const rich = await fundedAccount(h, admin, { credits: '1.000000' });
    const poor = await fundedAccount(h, admin, { credits: '0.010000' });
    const onTheFly = uid('rt');
    const refused = uid('rt');
    const now = new Date();
    const events = [
      lifecycle(rich, onTheFly, 'runtime.started', now, 1, { ...SMALL }),
      lifecycle(poor, refused, 'runtime.started', now, 1, { ...SMALL }),
    ];
    expect((await h.request('POST', '/v1/events', { key: cp, body: events })).body).toEqual({ accepted: 2, duplicates: 0 });
    const reserved = await h.request('GET', `/v1/reservations/${onTheFly}`, { key: cp });
    expect(reserved.body).toMatchObject({ status: 'running', minutes: 10, reserved: '0.166667', commands: [] });
    const told = await h.request('GET', `/v1/reservations/${refused}`, { key: cp });
    expect(told.body.commands).toEqual([
      expect.objectContaining({ type: 'runtime.terminate', reason: 'unreserved', acknowledgedAt: null }),
    ]);
    const outbox = await h.ds.query(`SELECT payload FROM outbox WHERE payload->>'runtimeId' = $1`, [refused]);
    expect(outbox).toHaveLength(1);
    expect(outbox[0].payload).toMatchObject({ type: 'runtime.terminate', reason: 'unreserved', accountId: poor });
    await terminate(rich, [onTheFly]);
    await terminate(poor, [refused]);
  });

  it('keeps a runtime with the account its first event named: events and reservations naming another account are refused', async () => {
    const owner = await fundedAccount(h, admin, { credits: '1.000000' });
    const other = await fundedAccount(h, admin, { credits: '1.000000' });
    const runtimeId = uid('rt');
    const first = await h.request('POST', '/v1/events', {
      key: cp,
      body: [lifecycle(owner, runtimeId, 'runtime.heartbeat', new Date(), 1)],
    });
    expect(first.body).toEqual({ accepted: 1, duplicates: 0 });

    const foreign = await h.request('POST', '/v1/events', {
      key: cp,
      body: [lifecycle(owner, runtimeId, 'runtime.heartbeat', new Date(), 2), lifecycle(other, runtimeId, 'runtime.paused', new Date(), 3)],
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toMatchObject({
      code: 'DL_BILLING_REQUEST_INVALID',
      findings: [{ field: 'events[1].accountId', message: `runtime ${runtimeId} belongs to another account` }],
    });
    // All or nothing: the valid heartbeat of that request was not applied either.
    expect((await h.ds.query(`SELECT events_count AS n FROM runtimes WHERE runtime_id = $1`, [runtimeId]))[0].n).toBe(1);

    const taken = await reserve({ accountId: other, runtimeId, ...SMALL });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({
      code: 'DL_BILLING_IDEMPOTENCY_CONFLICT',
      findings: [{ field: 'runtimeId', message: 'is a runtime of another account' }],
    });
    const otherWallet = await h.request('GET', `/v1/accounts/${other}/wallet`, { key: admin });
    expect(otherWallet.body).toMatchObject({ held: '0.000000', available: '1.000000' });

    const own = await reserve({ accountId: owner, runtimeId, ...SMALL });
    expect(own.status).toBe(201);
    expect((await h.request('GET', `/v1/accounts/${owner}/wallet`, { key: admin })).body).toMatchObject({ held: '0.166667' });
    const ownerKey = await h.key(`account:${owner}`);
    expect((await h.request('GET', `/v1/reservations/${runtimeId}`, { key: ownerKey })).body).toMatchObject({ accountId: owner });
    await terminate(owner, [runtimeId]);
  });

  it('tells a runtime that sends events without ever being reserved to terminate, and never shows it as reserved', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '1.000000' });
    const beating = uid('rt');
    const pausing = uid('rt');
    const res = await h.request('POST', '/v1/events', {
      key: cp,
      body: [
        lifecycle(accountId, beating, 'runtime.heartbeat', new Date(), 1),
        lifecycle(accountId, pausing, 'runtime.paused', new Date(), 1),
      ],
    });
    expect(res.body).toEqual({ accepted: 2, duplicates: 0 });
    for (const runtimeId of [beating, pausing]) {
      const view = await h.request('GET', `/v1/reservations/${runtimeId}`, { key: cp });
      expect(view.body.status).toBe('terminating');
      expect(view.body.commands).toEqual([
        expect.objectContaining({ type: 'runtime.terminate', reason: 'unreserved', acknowledgedAt: null }),
      ]);
    }
    // Nothing was held for them.
    expect((await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body).toMatchObject({ held: '0.000000' });
    await terminate(accountId, [beating, pausing]);
  });

  it('withdraws the unreserved command of a runtime whose reservation comes after its events, and charges its run on that hold', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '5.000000' });
    const runtimeId = uid('rt');
    const start = new Date(Date.now() - 60_000);
    // Its start says nothing of what it runs: told to terminate as unreserved.
    await h.request('POST', '/v1/events', { key: cp, body: [lifecycle(accountId, runtimeId, 'runtime.started', start, 1, {})] });
    expect((await h.request('GET', `/v1/reservations/${runtimeId}`, { key: cp })).body.status).toBe('terminating');
    const reserved = await reserve({ accountId, runtimeId, ...SMALL, minutes: 60 });
    expect(reserved.status).toBe(201);
    const view = (await h.request('GET', `/v1/reservations/${runtimeId}`, { key: cp })).body;
    expect(view.status).toBe('running');
    expect(view.commands).toEqual([expect.objectContaining({ reason: 'unreserved', acknowledgedAt: expect.any(String) })]);
    const audit = (await h.request('GET', `/v1/audit?accountId=${accountId}`, { key: admin })).body.items as { action: string }[];
    expect(audit.map((a) => a.action)).toContain('runtime.terminate_withdrawn');
    // Its termination settles the run on the new hold: charged from its start, the rest given back.
    await h.request('POST', '/v1/events', {
      key: cp,
      body: [lifecycle(accountId, runtimeId, 'runtime.terminated', new Date(start.getTime() + 36_000), 2, { reason: 'user' })],
    });
    const settled = (await h.request('GET', `/v1/reservations/${runtimeId}`, { key: cp })).body;
    expect(settled).toMatchObject({ status: 'settled', settlement: 'events', runningSeconds: 36, charged: '0.010000' });
    expect((await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body).toMatchObject({
      total: '4.990000',
      held: '0.000000',
    });
  });

  it('refuses to reserve a runtime whose events ended it first (nothing to hold that would ever be settled)', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '5.000000' });
    for (const ending of ['runtime.terminated', 'runtime.launch_failed'] as const) {
      const runtimeId = uid('rt');
      await h.request('POST', '/v1/events', {
        key: cp,
        body: [lifecycle(accountId, runtimeId, ending, new Date(), 1, { reason: 'user' })],
      });
      const late = await reserve({ accountId, runtimeId, ...SMALL, minutes: 30 });
      expect(late.status, ending).toBe(409);
      expect(late.body.error).toMatchObject({
        code: 'DL_BILLING_IDEMPOTENCY_CONFLICT',
        findings: [{ field: 'runtimeId', message: expect.stringContaining('has already ended') }],
      });
    }
    expect((await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body).toMatchObject({
      total: '5.000000',
      held: '0.000000',
    });
  });

  it('refuses a termination or a failed launch without a reason, naming each event by its place in either list form', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '1.000000' });
    const runtimeId = uid('rt');
    const started = lifecycle(accountId, runtimeId, 'runtime.started', new Date(), 1);
    const bored = lifecycle(accountId, runtimeId, 'runtime.terminated', new Date(), 2, { reason: '' });
    const silent = lifecycle(accountId, uid('rt'), 'runtime.launch_failed', new Date(), 1);
    for (const body of [[started, bored, silent], { events: [started, bored, silent] }]) {
      const res = await h.request('POST', '/v1/events', { key: cp, body });
      expect(res.status).toBe(400);
      expect(res.body.error.findings).toEqual([
        { field: 'events[1].data.reason', message: 'must be a string of 1-500 characters' },
        { field: 'events[2].data.reason', message: 'must be a string of 1-500 characters' },
      ]);
    }
    expect((await h.ds.query(`SELECT count(*)::int AS n FROM runtime_events WHERE runtime_id = $1`, [runtimeId]))[0].n).toBe(0);
  });

  it('reports usage by runtime, environment, day and user, agreeing with the settled charges', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const start = new Date(Date.now() - 2 * 3600_000);
    const at = (m: number) => new Date(start.getTime() + m * 60_000);
    const runs = [
      { runtimeId: uid('rt'), userId: 'alice', minutes: 6, environment: { name: 'python', sizeClass: 'small' } },
      { runtimeId: uid('rt'), userId: 'bob', minutes: 12, environment: { name: 'torch', sizeClass: 'medium' } },
      { runtimeId: uid('rt'), userId: 'alice', minutes: 3, environment: { name: 'torch', sizeClass: 'medium' } },
    ];
    for (const r of runs) {
      expect(
        (
          await reserve({
            accountId,
            runtimeId: r.runtimeId,
            userId: r.userId,
            variant: 'datalayer',
            environment: r.environment,
            minutes: 60,
          })
        ).status,
      ).toBe(201);
      await h.request('POST', '/v1/events', {
        key: cp,
        body: [
          lifecycle(accountId, r.runtimeId, 'runtime.started', at(0), 1),
          lifecycle(accountId, r.runtimeId, 'runtime.terminated', at(r.minutes), 2, { reason: 'user' }),
        ],
      });
    }
    // Dated as the statement dates it: in the period the charges were posted (now), not when the runtimes ran.
    const q = `from=${at(-1).toISOString()}&to=${new Date(Date.now() + 3600_000).toISOString()}`;
    const byEnv = await h.request('GET', `/v1/accounts/${accountId}/usage?groupBy=environment&${q}`, { key: admin });
    expect(byEnv.body.items).toEqual([
      { environment: 'python', runtimes: 1, seconds: 360, credits: '0.100000' },
      { environment: 'torch', runtimes: 2, seconds: 900, credits: '0.500000' },
    ]);
    expect(byEnv.body.total).toEqual({ runtimes: 3, seconds: 1260, credits: '0.600000' });
    const byUser = await h.request('GET', `/v1/accounts/${accountId}/usage?groupBy=user&${q}`, { key: admin });
    expect(byUser.body.items.map((i: any) => [i.user, i.credits])).toEqual([
      ['alice', '0.200000'],
      ['bob', '0.400000'],
    ]);
    const byDay = await h.request('GET', `/v1/accounts/${accountId}/usage?groupBy=day&${q}`, { key: admin });
    const settledOn = (await h.ds.query(
      `SELECT DISTINCT to_char(settled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM runtimes WHERE account_id = $1`,
      [accountId],
    )) as { day: string }[];
    expect(settledOn).toHaveLength(1);
    expect(byDay.body.items).toEqual([{ day: settledOn[0]!.day, runtimes: 3, seconds: 1260, credits: '0.600000' }]);
    const wallet = await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin });
    expect(wallet.body.total).toBe('9.400000');
    const bad = await h.request('GET', `/v1/accounts/${accountId}/usage?groupBy=planet`, { key: admin });
    expect(bad.status).toBe(400);
    expect(bad.body.error.findings[0].field).toBe('groupBy');

    // CSV as the reports give it: with ?format=csv, or with Accept: text/csv.
    const csv = `environment,runtimes,seconds,credits\r\npython,1,360,0.100000\r\ntorch,2,900,0.500000\r\n`;
    const byFormat = await h.request('GET', `/v1/accounts/${accountId}/usage?groupBy=environment&format=csv&${q}`, { key: admin });
    expect(byFormat.status).toBe(200);
    expect(byFormat.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(byFormat.headers['content-disposition']).toMatch(
      new RegExp(`^attachment; filename="usage_${accountId}_\\d{4}-\\d{2}-\\d{2}_\\d{4}-\\d{2}-\\d{2}\\.csv"$`),
    );
    expect(byFormat.body).toBe(csv);
    const byAccept = await h.request('GET', `/v1/accounts/${accountId}/usage?groupBy=environment&${q}`, {
      key: admin,
      headers: { accept: 'text/csv' },
    });
    expect(byAccept.body).toBe(csv);
    // A query parameter's finding names the parameter.
    const xml = await h.request('GET', `/v1/accounts/${accountId}/usage?format=xml`, { key: admin });
    expect(xml.status).toBe(400);
    expect(xml.body.error.findings.map((f: { field: string }) => f.field)).toEqual(['format']);
    const unknown = await h.request('GET', `/v1/accounts/${accountId}/usage?shape=wide`, { key: admin });
    expect(unknown.body.error.findings).toEqual([{ field: 'shape', message: 'is not a parameter of this endpoint' }]);
  });
});

describe('reservations whose client has gone', () => {
  let h: Harness;
  let admin: string;
  let cp: string;
  let port: number;

  beforeAll(async () => {
    // Two database connections: a third reservation waits for one while the first two are held up.
    h = await startApp({ env: { DATABASE_POOL_SIZE: '2' } });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
    await h.app.listen(0, '127.0.0.1');
    port = (h.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(() => h.close());

  /** POSTs a reservation over a real connection; `giveUpAfterMs` closes it before the answer. */
  const post = (body: object, giveUpAfterMs?: number) =>
    new Promise<number | 'gone'>((resolve, reject) => {
      const data = JSON.stringify(body);
      const req = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/reservations',
        agent: false,
        headers: { authorization: `Bearer ${cp}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', (error) => (giveUpAfterMs === undefined ? reject(error) : resolve('gone')));
      req.end(data);
      if (giveUpAfterMs !== undefined) setTimeout(() => req.destroy(), giveUpAfterMs);
    });
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('does not reserve for a client that closed its connection while the request waited, and serves those still waiting', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '5.000000' });
    const other = await fundedAccount(h, admin, { credits: '5.000000' });
    const waiting = uid('rt');
    const abandoned = uid('rt');
    // Another session holds both accounts' wallet locks: the first two reservations wait on them,
    // holding the service's two connections; the third waits for a connection.
    const blocker = new pg.Client({ connectionString: h.config.database.url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM wallets WHERE account_id = ANY($1) FOR UPDATE', [[accountId, other]]);
      const first = post({ accountId, runtimeId: waiting, ...SMALL, minutes: 60 });
      const second = post({ accountId: other, runtimeId: uid('rt'), ...SMALL, minutes: 60 });
      await pause(300);
      expect(await post({ accountId, runtimeId: abandoned, ...SMALL, minutes: 60 }, 300)).toBe('gone');
      await pause(200);
      await blocker.query('ROLLBACK');
      expect([await first, await second]).toEqual([201, 201]);
    } finally {
      await blocker.end();
    }
    // The abandoned request got a connection after them, and reserved nothing.
    await pause(500);
    expect((await h.request('GET', `/v1/reservations/${abandoned}`, { key: cp })).status).toBe(404);
    const wallet = await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin });
    expect(wallet.body).toMatchObject({ total: '5.000000', held: '1.000000', available: '4.000000' });
    // Asked again (same runtimeId), it is reserved as usual.
    expect(await post({ accountId, runtimeId: abandoned, ...SMALL, minutes: 60 })).toBe(201);
  });
});
