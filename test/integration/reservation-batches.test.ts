import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerService } from '../../src/ledger/ledger.service';
import { ReservationsService } from '../../src/reservations/reservations.service';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';

/**
 * Reservations are group-committed: concurrent launches are decided together in one transaction,
 * each on counts kept current by the ones before it. These tests send many launches at once and
 * check that every check of the contract still holds exactly, whoever shares the batch.
 */
describe('reservations decided in batches', () => {
  let h: Harness;
  let admin: string;
  let cp: string;
  let reservations: ReservationsService;

  beforeAll(async () => {
    h = await startApp();
    admin = await h.key('admin');
    cp = await h.key('control-plane');
    reservations = h.app.get(ReservationsService);
  });
  afterAll(() => h.close());

  const reserve = (accountId: string, minutes = 60, extra: Record<string, unknown> = {}) =>
    h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: uid('rt'), ...SMALL, minutes, ...extra } });
  const wallet = async (accountId: string) => (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body;
  const codes = (answers: { status: number; body: { error?: { code: string } } }[]) =>
    answers
      .map((a) => (a.status === 201 ? 201 : a.body.error?.code))
      .reduce<Record<string, number>>((n, c) => ({ ...n, [String(c)]: (n[String(c)] ?? 0) + 1 }), {});

  it('credits, spend limits and quotas hold exactly when many launches of several accounts share batches', async () => {
    // Credits for exactly 5 one-hour launches of `small` (1 credit/h).
    const short = await fundedAccount(h, admin, { credits: '5.000000' });
    // Plenty of credits, an account spend limit of 3 credits a month.
    const limited = await fundedAccount(h, admin, { credits: '100.000000' });
    const limit = await h.request('PUT', `/v1/accounts/${limited}/spend-limit`, {
      key: admin,
      body: { credits: '3.000000', period: 'month', thresholds: [] },
    });
    expect(limit.status).toBe(200);
    // Free: 2 runtimes at once. Its first launch grants the period's allowance (on its own), then one slot is left.
    const free = await fundedAccount(h, admin, { plan: 'free' });
    expect((await reserve(free, 10)).status).toBe(201);

    const before = { ...reservations.stats };
    const launches = Array.from({ length: 12 }, (_, i) => [short, limited, ...(i < 4 ? [free] : [])]).flat();
    const answers = await Promise.all(launches.map((accountId) => reserve(accountId, accountId === free ? 10 : 60)));
    const of = (accountId: string) => codes(answers.filter((_, i) => launches[i] === accountId));
    expect(of(short)).toEqual({ 201: 5, DL_BILLING_INSUFFICIENT_CREDITS: 7 });
    expect(of(limited)).toEqual({ 201: 3, DL_BILLING_SPEND_LIMIT_REACHED: 9 });
    expect(of(free)).toEqual({ 201: 1, DL_BILLING_QUOTA_EXCEEDED: 3 });
    expect(await wallet(short)).toMatchObject({ held: '5.000000', available: '0.000000' });
    expect(await wallet(limited)).toMatchObject({ held: '3.000000', available: '97.000000' });
    const ledger = h.app.get(LedgerService);
    for (const accountId of [short, limited, free]) expect(await ledger.reconcile(accountId)).toEqual([]);

    // They were decided in batches (more launches than batches), none of which failed.
    expect(reservations.stats.decided - before.decided).toBeGreaterThan(reservations.stats.batches - before.batches);
    expect(reservations.stats.failedBatches).toBe(before.failedBatches);
  });

  it('leaves a launch that sends a notice to a transaction of its own: wallet.low_balance is sent once, with the right balance', async () => {
    // Enterprise's low-balance threshold is 1 credit: the second launch leaves 0.5 available.
    const accountId = await fundedAccount(h, admin, { credits: '2.500000' });
    const before = { ...reservations.stats };
    const answers = await Promise.all(Array.from({ length: 3 }, () => reserve(accountId)));
    expect(codes(answers)).toEqual({ 201: 2, DL_BILLING_INSUFFICIENT_CREDITS: 1 });
    expect(reservations.stats.alone - before.alone).toBeGreaterThan(0);
    const sent = await h.ds.query(
      `SELECT payload FROM outbox WHERE payload ->> 'type' = 'wallet.low_balance' AND payload ->> 'accountId' = $1`,
      [accountId],
    );
    expect(sent.map((r: { payload: { data: unknown } }) => r.payload.data)).toEqual([
      expect.objectContaining({ available: '0.500000', threshold: '1.000000' }),
    ]);
    expect(await wallet(accountId)).toMatchObject({ held: '2.000000', available: '0.500000' });
  });

  it('runs the launches of a batch that fails in the database one at a time: only the failing one is refused', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const poisoned = uid('rt_poisoned');
    // A runtime row the database refuses (as a constraint would), for one launch only.
    const fn = uid('refuse_runtime');
    await h.ds.query(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.runtime_id = '${poisoned}' THEN RAISE EXCEPTION 'runtime refused'; END IF; RETURN NEW; END $$`);
    await h.ds.query(`CREATE TRIGGER ${fn} BEFORE INSERT ON runtimes FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
    try {
      const before = { ...reservations.stats };
      const others = Array.from({ length: 5 }, () => uid('rt'));
      const send = (runtimeId: string) =>
        h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes: 60 } });
      const answers = await Promise.all([...others.slice(0, 2), poisoned, ...others.slice(2)].map(send));
      expect(answers.map((a) => a.status)).toEqual([201, 201, 500, 201, 201, 201]);
      expect(reservations.stats.failedBatches).toBeGreaterThan(before.failedBatches);
      // The five are held once each; the refused one holds nothing.
      expect(await wallet(accountId)).toMatchObject({ held: '5.000000', available: '5.000000' });
      const held = await h.ds.query(`SELECT id FROM holds WHERE account_id = $1 ORDER BY id`, [accountId]);
      expect(held.map((r: { id: string }) => r.id)).toEqual(others.map((r) => `hold_${r}`).sort());
      expect(await h.app.get(LedgerService).reconcile(accountId)).toEqual([]);
    } finally {
      await h.ds.query(`DROP TRIGGER ${fn} ON runtimes`);
      await h.ds.query(`DROP FUNCTION ${fn}()`);
    }
  });

  it("answers each launch of a shared batch as a launch on its own would: a runtime known from its events, another account's runtime, a replay", async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const other = await fundedAccount(h, admin, { credits: '1.000000' });
    const send = (runtimeId: string, minutes = 60) =>
      h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes } });
    // Known before its reservation (a heartbeat came first), of this account and of the other one.
    const [known, foreign] = [uid('rt_known'), uid('rt_foreign')];
    const heartbeats = [
      lifecycle(accountId, known, 'runtime.heartbeat', new Date(), 1),
      lifecycle(other, foreign, 'runtime.heartbeat', new Date(), 1),
    ];
    expect((await h.request('POST', '/v1/events', { key: cp, body: heartbeats })).status).toBe(200);
    const replayed = uid('rt_replayed');
    expect((await send(replayed)).status).toBe(201);

    const before = { ...reservations.stats };
    const fresh = [uid('rt'), uid('rt'), uid('rt')];
    const answers = await Promise.all([
      send(fresh[0]!),
      send(known),
      send(foreign),
      send(replayed),
      send(replayed, 20),
      send(fresh[1]!),
      send(fresh[2]!),
    ]);
    expect(answers.map((a) => a.status)).toEqual([201, 201, 409, 200, 409, 201, 201]);
    expect(answers[2]!.body.error).toMatchObject({
      code: 'DL_BILLING_IDEMPOTENCY_CONFLICT',
      findings: [{ field: 'runtimeId', message: 'is a runtime of another account' }],
    });
    expect(answers[3]!.body.reservationId).toBe(`res_${replayed}`);
    expect(answers[4]!.body.error.code).toBe('DL_BILLING_IDEMPOTENCY_CONFLICT');
    expect(reservations.stats.decided - before.decided).toBeGreaterThan(reservations.stats.batches - before.batches);

    // Five one-hour holds: the replay held nothing more, the refused ones nothing at all.
    expect(await wallet(accountId)).toMatchObject({ held: '5.000000', available: '5.000000' });
    expect(await wallet(other)).toMatchObject({ held: '0.000000', available: '1.000000' });
    const [row] = await h.ds.query(
      `SELECT account_id, reservation_id, reserved_amount::text AS reserved FROM runtimes WHERE runtime_id = $1`,
      [known],
    );
    expect(row).toEqual({ account_id: accountId, reservation_id: `res_${known}`, reserved: '1000000' });
    const ended = [known, foreign].map((id, i) =>
      lifecycle(i === 0 ? accountId : other, id, 'runtime.terminated', new Date(), 99, { reason: 'user' }),
    );
    expect((await h.request('POST', '/v1/events', { key: cp, body: ended })).status).toBe(200);
  });
  it("never lets a launch that names another account's reserved runtime bring that account's grants into its batch", async () => {
    // The other account's grant expires first, so it would come first in any wallet's burn order.
    const owner = await fundedAccount(h, admin);
    const soon = new Date(Date.now() + 3600_000).toISOString();
    const grant = await h.request('POST', `/v1/admin/accounts/${owner}/grants`, {
      key: admin,
      body: { credits: '10.000000', reason: 'expires first', expiresAt: soon },
    });
    expect(grant.status).toBe(201);
    const taker = await fundedAccount(h, admin, { credits: '5.000000' });
    const owned = uid('rt_owned');
    expect((await reserve(owner, 6, { runtimeId: owned })).status).toBe(201);
    const send = (runtimeId: string) =>
      h.request('POST', '/v1/reservations', { key: cp, body: { accountId: taker, runtimeId, ...SMALL, minutes: 6 } });
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => send(i % 2 === 0 ? owned : uid('rt'))));
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? 409 : 201)));
    // Each account paid its own holds: 0.1 credit per 6 minutes of small.
    expect(await wallet(owner)).toMatchObject({ total: '10.000000', held: '0.100000', available: '9.900000' });
    expect(await wallet(taker)).toMatchObject({ total: '5.000000', held: '0.800000', available: '4.200000' });
    const crossed = await h.ds.query(
      `SELECT a.hold_id FROM hold_allocations a JOIN holds ho ON ho.id = a.hold_id JOIN grants g ON g.id = a.grant_id
       WHERE ho.account_id IN ($1, $2) AND g.account_id <> ho.account_id`,
      [owner, taker],
    );
    expect(crossed).toEqual([]);
    const ledger = await h.request('GET', `/v1/accounts/${taker}/ledger?limit=50`, { key: admin });
    expect(ledger.body.items.map((e: { balanceAfter: string }) => e.balanceAfter)).toEqual(Array(9).fill('5.000000'));
  });

  it('refuses launches past the bound on those waiting (503, retry after 1 s), reserving nothing for them, and takes launches again once the queue drains', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '100.000000' });
    // The lane's first batch is held until the refusals are in: one launch runs, two wait, three are refused.
    const batches = (reservations as unknown as { batches: { inBatch: (batch: unknown[]) => Promise<unknown> } }).batches;
    const inBatch = batches.inBatch;
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    batches.inBatch = async (batch) => {
      await gate;
      return inBatch.call(batches, batch);
    };
    const bound = reservations.maxQueued;
    reservations.maxQueued = 2;
    try {
      const statuses: number[] = [];
      const answers = Array.from({ length: 6 }, () =>
        reserve(accountId).then((a) => {
          statuses.push(a.status);
          return a;
        }),
      );
      while (statuses.length < 3) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(statuses).toEqual([503, 503, 503]);
      release();
      const all = await Promise.all(answers);
      expect(all.map((a) => a.status).sort()).toEqual([201, 201, 201, 503, 503, 503]);
      for (const a of all.filter((x) => x.status === 503)) {
        expect(a.body.error).toMatchObject({ code: 'DL_BILLING_UNAVAILABLE', retryAfterSeconds: 1 });
        expect(a.headers['retry-after']).toBe('1');
      }
      // Only the three launches answered 201 hold credits.
      expect(await wallet(accountId)).toMatchObject({ held: '3.000000', available: '97.000000' });
    } finally {
      release();
      batches.inBatch = inBatch;
      reservations.maxQueued = bound;
    }
    expect((await reserve(accountId)).status).toBe(201);
    expect(await h.app.get(LedgerService).reconcile(accountId)).toEqual([]);
  });
});
