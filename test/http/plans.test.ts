import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditHash, GENESIS_HASH } from '../../src/audit/audit-hash';
import { ManualClock } from '../../src/infra/clock/clock';
import { LedgerService } from '../../src/ledger/ledger.service';
import { AllowancesService } from '../../src/plans/allowances.service';
import { lifecycle, SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';

// Note: the monthly reset grants every Free account of the database; the other HTTP test files
// use Enterprise accounts (no allowance), so running it here does not change their wallets.
const DEC = '2031-12-02T09:00:00.000Z';
const JAN_1 = '2032-01-01T00:00:00.000Z';
const FEB_1 = '2032-02-01T00:00:00.000Z';

describe('plans and quotas over HTTP', () => {
  let h: Harness;
  let clock: ManualClock;
  let admin: string;
  let cp: string;

  beforeAll(async () => {
    clock = new ManualClock(new Date(DEC));
    h = await startApp({ clock, env: { DATABASE_POOL_SIZE: '20' } });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(() => h.close());

  async function freeAccount(): Promise<string> {
    const id = uid('free');
    const res = await h.request('POST', '/v1/accounts', { key: admin, body: { id, kind: 'user', plan: 'free' } });
    expect(res.status).toBe(201);
    return id;
  }
  const reserve = (accountId: string, runtimeId = uid('rt'), extra: Record<string, unknown> = {}) =>
    h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes: 1, ...extra } });
  const events = (body: unknown) => h.request('POST', '/v1/events', { key: cp, body });
  /** Starts and terminates a runtime at once (charged 0): its run stays used, its concurrency slot is free. */
  const finish = async (accountId: string, runtimeIds: string[]) => {
    const now = clock.now();
    const res = await events(
      runtimeIds.flatMap((rt) => [
        lifecycle(accountId, rt, 'runtime.started', now, 1),
        lifecycle(accountId, rt, 'runtime.terminated', now, 2, { reason: 'user' }),
      ]),
    );
    expect(res.status).toBe(200);
  };
  const wallet = async (accountId: string) => (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body;
  const notifications = (accountId: string) =>
    h.ds.query(
      `SELECT payload->>'type' AS type, payload->'data' AS data FROM outbox WHERE key = $1 AND topic LIKE 'billing.notifications%' ORDER BY id`,
      [accountId],
    ) as Promise<{ type: string; data: Record<string, unknown> }[]>;

  /** Recomputes every hash of the account's audit chain (the rows the reset wrote in SQL included). */
  async function expectChainIntact(accountId: string): Promise<void> {
    const found: {
      seq: string;
      at: Date;
      actor: string;
      action: string;
      before: unknown;
      after: unknown;
      correlation_id: string | null;
      prev_hash: string;
      hash: string;
    }[] = await h.ds.query(
      `SELECT seq, at, actor, action, before, after, correlation_id, prev_hash, hash FROM audit_log WHERE chain = $1 ORDER BY seq`,
      [accountId],
    );
    expect(found.map((r) => r.action)).toContain('credits.granted');
    let prev = GENESIS_HASH;
    for (const [i, r] of found.entries()) {
      expect(Number(r.seq)).toBe(i + 1);
      expect(r.prev_hash).toBe(prev);
      const record = {
        chain: accountId,
        at: r.at.toISOString(),
        actor: r.actor,
        action: r.action,
        accountId,
        before: r.before ?? null,
        after: r.after ?? null,
        correlationId: r.correlation_id,
      };
      expect(auditHash(r.prev_hash, Number(r.seq), record)).toBe(r.hash);
      prev = r.hash;
    }
  }

  it('a Free account: 500 runs succeed, the 501st is refused until the month turns; a launch failure gives its run back', async () => {
    clock.set(DEC);
    const accountId = await freeAccount();
    const first = await reserve(accountId);
    expect(first.status).toBe(201);
    expect(first.body.runsRemaining).toBe(499);
    // The month's 50 credits were granted lazily by this first launch (1 minute of small = 0.016667 held).
    expect(first.body.balance).toEqual({ total: '50.000000', held: '0.016667', available: '49.983333' });
    await finish(accountId, [first.body.runtimeId]);
    for (let i = 1; i < 499; i += 2) {
      const a = await reserve(accountId);
      const b = await reserve(accountId);
      expect([a.status, b.status]).toEqual([201, 201]);
      await finish(accountId, [a.body.runtimeId, b.body.runtimeId]);
    }
    // 499 runs used. The 500th fails to launch: its run comes back.
    const failing = await reserve(accountId);
    expect(failing.status).toBe(201);
    expect(failing.body.runsRemaining).toBe(0);
    expect((await wallet(accountId)).runs).toMatchObject({ used: 500, included: 500, resetsAt: JAN_1 });
    const refusedBeforeFailure = await reserve(accountId);
    expect(refusedBeforeFailure.status).toBe(429);
    expect(
      (await events(lifecycle(accountId, failing.body.runtimeId, 'runtime.launch_failed', clock.now(), 1, { reason: 'image pull' })))
        .status,
    ).toBe(200);
    expect((await wallet(accountId)).runs).toMatchObject({ used: 499, included: 500 });

    const last = await reserve(accountId);
    expect(last.status).toBe(201);
    expect(last.body.runsRemaining).toBe(0);
    await finish(accountId, [last.body.runtimeId]);
    const refused = await reserve(accountId);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: {
        code: 'DL_BILLING_QUOTA_EXCEEDED',
        message: expect.stringContaining('500 runs'),
        quota: 'runs',
        limit: 500,
        used: 500,
        resetsAt: JAN_1,
      },
    });
    clock.set('2031-12-31T23:59:59.999Z');
    expect((await reserve(accountId)).status).toBe(429);

    clock.set(JAN_1);
    const nextMonth = await reserve(accountId);
    expect(nextMonth.status).toBe(201);
    expect(nextMonth.body.runsRemaining).toBe(499);
    expect((await wallet(accountId)).runs).toMatchObject({ used: 1, included: 500, resetsAt: FEB_1 });
    // The runs quota was announced once, when its last run was taken.
    const exhausted = (await notifications(accountId)).filter((n) => n.type === 'quota.exhausted');
    expect(exhausted).toEqual([{ type: 'quota.exhausted', data: expect.objectContaining({ quota: 'runs', limit: 500, resetsAt: JAN_1 }) }]);
  }, 300_000);

  it('a 4th distinct agent in the month is refused while the first three may launch again', async () => {
    clock.set(DEC);
    const accountId = await freeAccount();
    for (const agentId of ['agent-1', 'agent-2', 'agent-3']) {
      const r = await reserve(accountId, uid('rt'), { agentId });
      expect(r.status).toBe(201);
      await finish(accountId, [r.body.runtimeId]);
    }
    const fourth = await reserve(accountId, uid('rt'), { agentId: 'agent-4' });
    expect(fourth.status).toBe(429);
    expect(fourth.body.error).toMatchObject({ code: 'DL_BILLING_QUOTA_EXCEEDED', quota: 'agents', limit: 3, used: 3, resetsAt: JAN_1 });
    const again = await reserve(accountId, uid('rt'), { agentId: 'agent-1' });
    expect(again.status).toBe(201);
    await finish(accountId, [again.body.runtimeId]);
    // A launch without an agent id is not an agent.
    const anonymous = await reserve(accountId);
    expect(anonymous.status).toBe(201);
    await finish(accountId, [anonymous.body.runtimeId]);
    // Still refused: the quota counts agents, not launches.
    expect((await reserve(accountId, uid('rt'), { agentId: 'agent-4' })).status).toBe(429);
    expect((await notifications(accountId)).filter((n) => n.type === 'quota.exhausted')).toEqual([
      { type: 'quota.exhausted', data: expect.objectContaining({ quota: 'agents', limit: 3 }) },
    ]);
  });

  it('refuses GPUs and classes outside the Free plan with DL_BILLING_PLAN_FORBIDS and its findings', async () => {
    clock.set(DEC);
    const accountId = await freeAccount();
    const gpu = await reserve(accountId, uid('rt'), {
      variant: 'modal',
      environment: { name: 'torch', sizeClass: 'gpu-small', accelerator: { type: 'T4', count: 1, cuda: '12.8' } },
    });
    expect(gpu.status).toBe(403);
    expect(gpu.body.error.code).toBe('DL_BILLING_PLAN_FORBIDS');
    expect(gpu.body.error.findings).toEqual([
      { field: 'environment.sizeClass', message: expect.stringContaining('gpu-small') },
      { field: 'environment.accelerator', message: expect.stringContaining('GPUs') },
    ]);
    const large = await reserve(accountId, uid('rt'), { environment: { name: 'big', sizeClass: 'large' } });
    expect(large.status).toBe(403);
    expect(large.body.error.findings).toEqual([{ field: 'environment.sizeClass', message: expect.stringContaining('large') }]);
    // Nothing was reserved or used.
    expect((await wallet(accountId)).runs).toMatchObject({ used: 0, included: 500 });
  });

  it('allows 2 runtimes at once on Free: of 10 concurrent launches exactly 2 pass, the rest get quota concurrency without resetsAt', async () => {
    clock.set(DEC);
    const accountId = await freeAccount();
    const results = await Promise.all(Array.from({ length: 10 }, () => reserve(accountId)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(2);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(8);
    expect(refused[0]!.body.error).toEqual({
      code: 'DL_BILLING_QUOTA_EXCEEDED',
      message: expect.any(String),
      quota: 'concurrency',
      limit: 2,
      used: 2,
    });
    // A terminated runtime frees its slot.
    await finish(accountId, [results.find((r) => r.status === 201)!.body.runtimeId]);
    expect((await reserve(accountId)).status).toBe(201);
  });

  it('counts runs exactly under concurrency: 20 concurrent launches against 5 runs left get exactly 5', async () => {
    clock.set(DEC);
    const accountId = await freeAccount();
    const put = await h.request('PUT', `/v1/admin/accounts/${accountId}/plan`, {
      key: admin,
      body: { plan: 'free', overrides: { runsPerPeriod: 5, concurrentRuntimes: null } },
    });
    expect(put.status).toBe(200);
    const results = await Promise.all(Array.from({ length: 20 }, () => reserve(accountId)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(5);
    expect(results.filter((r) => r.status === 429).every((r) => r.body.error.quota === 'runs')).toBe(true);
    expect(
      results
        .filter((r) => r.status === 201)
        .map((r) => r.body.runsRemaining)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4]);
  });

  it('sets a plan with Enterprise overrides (audited), validates overrides, and 404s an unknown account', async () => {
    clock.set(DEC);
    const accountId = await freeAccount();
    const put = await h.request('PUT', `/v1/admin/accounts/${accountId}/plan`, {
      key: admin,
      body: { plan: 'enterprise', overrides: { includedCredits: '1000.000000', concurrentRuntimes: 50, runsPerPeriod: 100000 } },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      accountId,
      plan: 'enterprise',
      overrides: { includedCredits: '1000.000000', concurrentRuntimes: 50, runsPerPeriod: 100000 },
      effective: {
        id: 'enterprise',
        includedCredits: '1000.000000',
        concurrentRuntimes: 50,
        runsPerPeriod: 100000,
        agentsPerPeriod: null,
        gpus: true,
      },
      period: { from: '2031-12-01T00:00:00.000Z', to: JAN_1 },
    });
    // Free's 50 credits came with the account; the upgrade to the contract's 1000 gave the other 950 at once.
    expect(await wallet(accountId)).toMatchObject({ total: '1000.000000', available: '1000.000000' });
    const gpu = await reserve(accountId, uid('rt'), {
      variant: 'modal',
      environment: { name: 'torch', sizeClass: 'gpu-small', accelerator: { type: 'T4', count: 1, cuda: '12.8' } },
    });
    expect(gpu.status).toBe(201);
    expect((await wallet(accountId)).runs).toMatchObject({
      used: 1,
      included: 100000,
      allowance: { included: '1000.000000', granted: true },
    });
    // The allowance is both grants of the period: Free's 50 and the upgrade's 950, less what the launch holds.
    expect((await wallet(accountId)).runs.allowance.remaining).toBe((await wallet(accountId)).available);
    // Setting the same plan again grants nothing more.
    const same = await h.request('PUT', `/v1/admin/accounts/${accountId}/plan`, {
      key: admin,
      body: { plan: 'enterprise', overrides: { includedCredits: '1000.000000', concurrentRuntimes: 50, runsPerPeriod: 100000 } },
    });
    expect(same.status).toBe(200);
    expect((await wallet(accountId)).total).toBe(gpu.body.balance.total);
    // Each grant was announced once: Free's 50, then the upgrade's 950 expiring with the period.
    const granted = (await notifications(accountId)).filter((n) => n.type === 'credits.granted').map((n) => n.data);
    expect(granted).toEqual([
      expect.objectContaining({ source: 'plan_allowance', credits: '50.000000', expiresAt: JAN_1 }),
      expect.objectContaining({ source: 'plan_allowance', credits: '950.000000', expiresAt: JAN_1 }),
    ]);
    const audit = await h.request('GET', `/v1/audit?accountId=${accountId}`, { key: admin });
    const changed = audit.body.items.find((i: { action: string }) => i.action === 'plan.changed');
    expect(changed).toMatchObject({
      before: { plan: 'free', overrides: null },
      after: { plan: 'enterprise', overrides: { includedCredits: '1000.000000' } },
    });

    const bad = await h.request('PUT', `/v1/admin/accounts/${accountId}/plan`, {
      key: admin,
      body: { plan: 'enterprise', overrides: { runsPerPeriod: -1, gpus: 'yes', seats: 3 } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.findings.map((f: { field: string }) => f.field)).toEqual(
      expect.arrayContaining(['overrides.runsPerPeriod', 'overrides.gpus']),
    );
    expect((await h.request('PUT', `/v1/admin/accounts/nobody_${uid()}/plan`, { key: admin, body: { plan: 'free' } })).status).toBe(404);
    expect((await h.request('PUT', `/v1/admin/accounts/${accountId}/plan`, { key: cp, body: { plan: 'free' } })).status).toBe(403);
  });

  it("drops an Enterprise contract's overrides when POST /v1/accounts moves the account to another plan (audited)", async () => {
    clock.set(DEC);
    const accountId = await freeAccount();
    const overrides = { includedCredits: '1000.000000', concurrentRuntimes: 7 };
    expect(
      (await h.request('PUT', `/v1/admin/accounts/${accountId}/plan`, { key: admin, body: { plan: 'enterprise', overrides } })).status,
    ).toBe(200);
    // The same plan again keeps them.
    const again = await h.request('POST', '/v1/accounts', { key: cp, body: { id: accountId, kind: 'user', plan: 'enterprise' } });
    expect(again.status).toBe(200);
    expect((await h.request('GET', `/v1/admin/accounts/${accountId}/plan`, { key: admin })).body).toMatchObject({ overrides });
    const moved = await h.request('POST', '/v1/accounts', { key: cp, body: { id: accountId, kind: 'user', plan: 'free' } });
    expect(moved.status).toBe(200);
    const plan = (await h.request('GET', `/v1/admin/accounts/${accountId}/plan`, { key: admin })).body;
    expect(plan).toMatchObject({ plan: 'free', overrides: null, effective: { includedCredits: '50.000000', concurrentRuntimes: 2 } });
    const audit = (await h.request('GET', `/v1/audit?accountId=${accountId}`, { key: admin })).body.items as { action: string }[];
    expect(audit.find((a) => a.action === 'account.updated')).toMatchObject({
      before: { plan: 'enterprise', overrides },
      after: { plan: 'free', overrides: null },
    });
  });

  it('Team periods follow the billing cycle anchor on the account', async () => {
    clock.set(DEC);
    const accountId = await freeAccount();
    const put = await h.request('PUT', `/v1/admin/accounts/${accountId}/plan`, {
      key: admin,
      body: { plan: 'team', billingCycleAnchor: '2031-10-31T12:00:00.000Z' },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      billingCycleAnchor: '2031-10-31T12:00:00.000Z',
      period: { from: '2031-11-30T12:00:00.000Z', to: '2031-12-31T12:00:00.000Z' },
    });
    // Team's 500 credits come with its paid invoice (not granted here): fund it to launch.
    await h.request('POST', `/v1/admin/accounts/${accountId}/grants`, {
      key: admin,
      body: { credits: '5.000000', reason: 'test' },
      headers: { 'idempotency-key': uid('g') },
    });
    const r = await reserve(accountId);
    expect(r.status).toBe(201);
    expect(r.body.runsRemaining).toBe(4999);
    expect((await wallet(accountId)).runs).toMatchObject({
      used: 1,
      included: 5000,
      resetsAt: '2031-12-31T12:00:00.000Z',
      allowance: { granted: false },
    });
  });

  it("a new Free account's wallet shows the month's 50 credits at once (granted once, audited after the creation); moving to a plan with credits grants them", async () => {
    clock.set('2031-12-15T12:00:00.000Z');
    const accountId = await freeAccount();
    const w = await wallet(accountId);
    expect(w).toMatchObject({ total: '50.000000', held: '0.000000', available: '50.000000' });
    expect(w.grants).toEqual([expect.objectContaining({ source: 'plan_allowance', remaining: '50.000000', expiresAt: JAN_1 })]);
    expect(w.runs).toMatchObject({ used: 0, included: 500, allowance: { granted: true, remaining: '50.000000' } });
    // Declaring the account again, and its first launch, grant nothing more.
    expect((await h.request('POST', '/v1/accounts', { key: admin, body: { id: accountId, kind: 'user', plan: 'free' } })).status).toBe(200);
    expect((await reserve(accountId)).body.balance).toEqual({ total: '50.000000', held: '0.016667', available: '49.983333' });
    // Free's 50 credits are not Team's allowance, which comes with its paid invoice.
    const moved = uid('free');
    await h.request('POST', '/v1/accounts', { key: admin, body: { id: moved, kind: 'user', plan: 'free' } });
    await h.request('PUT', `/v1/admin/accounts/${moved}/plan`, { key: admin, body: { plan: 'team' } });
    expect((await wallet(moved)).runs.allowance).toEqual({
      included: '500.000000',
      granted: false,
      grantId: null,
      remaining: null,
      expiresAt: null,
    });
    const audit = await h.request('GET', `/v1/audit?accountId=${accountId}`, { key: admin });
    expect(audit.body.items.map((r: { action: string }) => r.action).reverse()).toEqual([
      'account.created',
      'credits.granted',
      'hold.created',
    ]);

    // An account created on Team (credits come with its paid invoice) gets nothing here; moved to an
    // Enterprise contract with 200 included credits, it gets them at once.
    const org = uid('org');
    expect((await h.request('POST', '/v1/accounts', { key: admin, body: { id: org, kind: 'organization', plan: 'team' } })).status).toBe(
      201,
    );
    expect(await wallet(org)).toMatchObject({ total: '0.000000', grants: [] });
    const set = await h.request('PUT', `/v1/admin/accounts/${org}/plan`, {
      key: admin,
      body: { plan: 'enterprise', overrides: { includedCredits: '200.000000' } },
    });
    expect(set.status).toBe(200);
    expect(await wallet(org)).toMatchObject({ total: '200.000000', available: '200.000000' });
  });

  it('the monthly reset expires what is left of the 50 credits and grants 50 new; credits held across the boundary are neither lost nor counted twice', async () => {
    clock.set('2031-12-31T23:30:00.000Z');
    const accountId = await freeAccount();
    const rt = uid('rt');
    const held = await reserve(accountId, rt, { minutes: 60 });
    expect(held.status).toBe(201);
    expect(held.body.balance).toEqual({ total: '50.000000', held: '1.000000', available: '49.000000' });
    expect((await events(lifecycle(accountId, rt, 'runtime.started', clock.now(), 1))).status).toBe(200);

    clock.set(JAN_1);
    const run = await h.request('POST', '/v1/admin/jobs/monthly-reset/run', { key: admin });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ job: 'monthly-reset', ran: true, result: { period: { from: JAN_1, to: FEB_1 } } });
    expect(run.body.result.accounts).toBeGreaterThanOrEqual(1);
    let w = await wallet(accountId);
    expect(w).toMatchObject({ total: '51.000000', held: '1.000000', available: '50.000000' });
    expect(w.grants).toEqual([expect.objectContaining({ source: 'plan_allowance', remaining: '50.000000', expiresAt: FEB_1 })]);
    expect(w.runs).toMatchObject({
      used: 0,
      included: 500,
      resetsAt: FEB_1,
      allowance: { included: '50.000000', granted: true, remaining: '50.000000' },
    });

    // Run twice: nothing more is granted.
    const again = await h.request('POST', '/v1/admin/jobs/monthly-reset/run', { key: admin });
    expect(again.body.result.accounts).toBe(0);
    expect(await wallet(accountId)).toMatchObject({ total: '51.000000', available: '50.000000' });

    // The runtime ran 30 minutes: 0.5 charged from December's hold, the other 0.5 of it expires at once.
    clock.set('2032-01-01T00:20:00.000Z');
    expect(
      (await events(lifecycle(accountId, rt, 'runtime.terminated', new Date('2032-01-01T00:00:00.000Z'), 2, { reason: 'user' }))).status,
    ).toBe(200);
    w = await wallet(accountId);
    expect(w).toMatchObject({ total: '50.000000', held: '0.000000', available: '50.000000' });
    const ledger = h.app.get(LedgerService);
    expect(await ledger.reconcile(accountId)).toEqual([]);
    const sums: { ledger_account: string; total: string }[] = await h.ds.query(
      `SELECT e.ledger_account, sum(e.amount)::text AS total FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
       WHERE t.account_id = $1 AND e.ledger_account IN ('issued', 'consumption', 'expired') GROUP BY 1 ORDER BY 1`,
      [accountId],
    );
    // 100 issued = 0.5 consumed + 49.5 expired (49 at the reset, 0.5 released after it) + 50 left.
    expect(sums).toEqual([
      { ledger_account: 'consumption', total: '500000' },
      { ledger_account: 'expired', total: '49500000' },
      { ledger_account: 'issued', total: '-100000000' },
    ]);
    const notes = await notifications(accountId);
    expect(notes.filter((n) => n.type.startsWith('credits.'))).toEqual([
      { type: 'credits.granted', data: expect.objectContaining({ credits: '50.000000', expiresAt: JAN_1 }) },
      { type: 'credits.expired', data: expect.objectContaining({ credits: '49.000000', source: 'plan_allowance' }) },
      { type: 'credits.granted', data: expect.objectContaining({ credits: '50.000000', expiresAt: FEB_1 }) },
      // The 0.5 released after the reset is announced as it expires: 49 + 0.5 announced = 49.5 expired.
      { type: 'credits.expired', data: expect.objectContaining({ credits: '0.500000', source: 'plan_allowance', expiredAt: JAN_1 }) },
    ]);
    await expectChainIntact(accountId);
    const audit = await h.request('GET', `/v1/audit?accountId=${accountId}`, { key: admin });
    const reset = audit.body.items.find(
      (i: { action: string; actor: string }) => i.action === 'credits.granted' && i.actor === 'system:monthly-reset',
    );
    expect(reset.after).toMatchObject({
      available: '50.000000',
      held: '1.000000',
      total: '51.000000',
      expired: { credits: '49.000000' },
      grant: { amount: '50.000000', expiresAt: FEB_1 },
    });
  });

  it('grants once when the reset runs concurrently, and when two app instances run it on the same database', async () => {
    clock.set('2032-01-15T10:00:00.000Z');
    const accounts = await Promise.all(Array.from({ length: 30 }, () => freeAccount()));
    clock.set(FEB_1);
    // Concurrent runs through the job endpoint: one holds the advisory lock, the other is told so.
    const both = await Promise.all([1, 2].map(() => h.request('POST', '/v1/admin/jobs/monthly-reset/run', { key: admin })));
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    const ran = both.filter((r) => r.body.ran === true);
    expect(ran.length).toBeGreaterThanOrEqual(1);

    // Without the lock at all: two instances' reset code at once, small batches interleaving.
    const clock2 = new ManualClock(new Date('2032-03-01T00:00:00.000Z'));
    const h2 = await startApp({ clock: clock2 });
    try {
      clock.set('2032-03-01T00:00:00.000Z');
      const [a, b] = await Promise.all([
        h.app.get(AllowancesService).monthlyReset(clock.now(), { batchSize: 7, workers: 2 }),
        h2.app.get(AllowancesService).monthlyReset(clock2.now(), { batchSize: 5, workers: 2 }),
      ]);
      expect(a.accounts + b.accounts).toBeGreaterThanOrEqual(accounts.length);
    } finally {
      await h2.close();
    }
    const grants: { account_id: string; n: number }[] = await h.ds.query(
      `SELECT account_id, count(*)::int AS n FROM grants WHERE source = 'plan_allowance' AND account_id = ANY($1)
       AND expires_at IN ($2, $3) GROUP BY account_id`,
      [accounts, '2032-03-01T00:00:00.000Z', '2032-04-01T00:00:00.000Z'],
    );
    // February's and March's allowance, once each, for every account.
    expect(grants).toHaveLength(accounts.length);
    expect(grants.every((g) => g.n === 2)).toBe(true);
    for (const id of accounts.slice(0, 3)) {
      expect(await wallet(id)).toMatchObject({ total: '50.000000', available: '50.000000' });
      expect(await h.app.get(LedgerService).reconcile(id)).toEqual([]);
    }
    const granted: { n: number }[] = await h.ds.query(
      `SELECT count(*)::int AS n FROM outbox WHERE payload->>'type' = 'credits.granted' AND key = ANY($1)`,
      [accounts],
    );
    // January's with the account's creation, February's and March's by the resets.
    expect(granted[0]!.n).toBe(accounts.length * 3);
  });
  it('the reset walks every window of accounts whatever lies between, and grants once with the lazy grant at reservation time', async () => {
    clock.set('2032-04-20T10:00:00.000Z');
    const prefix = uid('win');
    // Team accounts (no allowance from here) between Free ones, in id order: windows of 2 with nothing to grant in between.
    const create = async (suffix: string, plan: 'free' | 'team') => {
      const res = await h.request('POST', '/v1/accounts', { key: admin, body: { id: `${prefix}_${suffix}`, kind: 'user', plan } });
      expect(res.status).toBe(201);
      return `${prefix}_${suffix}`;
    };
    const early = await create('0', 'free');
    for (const s of ['1', '2', '3', '4', '5']) await create(s, 'team');
    const late = await create('6', 'free');
    const lazy = await create('7', 'free');

    // May: the first launch of one account grants its allowance before the job runs.
    const MAY_1 = '2032-05-01T00:00:00.000Z';
    clock.set(MAY_1);
    expect((await reserve(lazy)).status).toBe(201);
    const result = await h.app.get(AllowancesService).monthlyReset(clock.now(), { batchSize: 2, workers: 2 });
    expect(result.period.from).toBe(MAY_1);
    const again = await h.app.get(AllowancesService).monthlyReset(clock.now(), { batchSize: 2, workers: 2 });
    expect(again.accounts).toBe(0);

    const granted: { account_id: string; n: number }[] = await h.ds.query(
      `SELECT account_id, count(*)::int AS n FROM grants WHERE source = 'plan_allowance' AND account_id LIKE $1 || '%' AND expires_at = $2
       GROUP BY account_id ORDER BY account_id`,
      [prefix, '2032-06-01T00:00:00.000Z'],
    );
    expect(granted).toEqual([early, late, lazy].map((account_id) => ({ account_id, n: 1 })));
    for (const id of [early, late, lazy]) {
      expect((await wallet(id)).runs.allowance).toMatchObject({
        granted: true,
        included: '50.000000',
        expiresAt: '2032-06-01T00:00:00.000Z',
      });
      expect(await h.app.get(LedgerService).reconcile(id)).toEqual([]);
      await expectChainIntact(id);
      const notes = (await notifications(id)).filter(
        (n) => n.type === 'credits.granted' && n.data.expiresAt === '2032-06-01T00:00:00.000Z',
      );
      expect(notes).toHaveLength(1);
    }
    // The job's audit row for an account it granted: balances, the grant, what expired.
    const audit = await h.request('GET', `/v1/audit?accountId=${late}`, { key: admin });
    const row = audit.body.items.find(
      (i: { action: string; actor: string }) => i.action === 'credits.granted' && i.actor === 'system:monthly-reset',
    );
    expect(row.after).toMatchObject({
      available: '50.000000',
      total: '50.000000',
      expired: { credits: '50.000000' },
      grant: { amount: '50.000000', expiresAt: '2032-06-01T00:00:00.000Z' },
    });
  });
});
