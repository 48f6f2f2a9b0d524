import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, SMALL } from '../support/accounts';
import { startApp, serviceTestEnv, uid, type Harness } from '../support/app';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';
import { FrozenProxy } from '../support/frozen-proxy';
import { freePort, startService } from '../support/service-process';
import { poolOf } from '../../src/common/database/pool';

/** The answer of `request`, or `'no answer'` if it has none after `ms`. */
async function within<T>(ms: number, request: Promise<T>): Promise<T | 'no answer'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'no answer'>((resolve) => (timer = setTimeout(() => resolve('no answer'), ms)));
  try {
    return await Promise.race([request, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Credits as the API writes them (`10.000000`), in micro-credits. */
const micros = (credits: string): bigint => BigInt(credits.replace('.', ''));

function expectUnavailable(answer: { status: number; body: any } | 'no answer'): void {
  expect(answer).not.toBe('no answer');
  const { status, body } = answer as { status: number; body: any };
  expect(status).toBe(503);
  expect(body.error).toMatchObject({ code: 'DL_BILLING_UNAVAILABLE', retryAfterSeconds: 1 });
}

/**
 * The database stops answering while the service runs (a frozen server, a network partition: a
 * proxy in front of it that passes nothing on). Requests get the contract's 503 within the bounds
 * of DATABASE_QUERY_TIMEOUT_MS and DATABASE_ACQUIRE_TIMEOUT_MS, nothing is half-written, and the
 * service serves again by itself once the database answers.
 */
describe('a frozen database', () => {
  let db: FreshDatabase;
  let proxy: FrozenProxy;
  let h: Harness;
  let admin: string;
  let cp: string;
  const QUERY_MS = 3_000;
  const ACQUIRE_MS = 1_000;
  const POOL = 3;

  beforeAll(async () => {
    db = await freshDatabase('frozen');
    proxy = await FrozenProxy.start(db.url, 3401);
    h = await startApp({
      env: {
        DATABASE_URL: proxy.url(),
        DATABASE_POOL_SIZE: String(POOL),
        DATABASE_QUERY_TIMEOUT_MS: String(QUERY_MS),
        DATABASE_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_MS),
      },
    });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(async () => {
    proxy?.thaw();
    await h?.close();
    await proxy?.close();
    await db?.drop();
  });

  /** Every connection of the pool opened before the freeze, so that requests take one and wait on their queries. */
  const warmPool = async () => {
    const pool = poolOf(h.ds);
    const clients = await Promise.all(Array.from({ length: POOL }, () => pool.connect()));
    for (const c of clients) c.release();
  };

  it('answers a reservation and a wallet read 503 DL_BILLING_UNAVAILABLE within the query bound, writes nothing half, and serves again once it thaws', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const first = await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: uid('rt'), ...SMALL } });
    expect(first.status).toBe(201);
    const walletBefore = (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body;
    await warmPool();

    proxy.freeze();
    const runtimeId = uid('rt');
    const started = Date.now();
    const [launch, wallet] = await Promise.all([
      within(QUERY_MS + 4_000, h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL } })),
      within(QUERY_MS + 4_000, h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })),
    ]);
    expectUnavailable(launch);
    expectUnavailable(wallet);
    // One bound, not one per attempt (a failed batch of reservations is not run again launch by launch).
    expect(Date.now() - started).toBeLessThan(QUERY_MS + 2_000);

    proxy.thaw();
    // Recovered by itself: the pool opens new connections in place of the ones it dropped.
    expect((await h.request('GET', '/health/ready')).status).toBe(200);
    // The reservation that got a 503 is wholly there or wholly absent: the retry (same runtimeId, its
    // idempotency key) makes it or finds it, and it holds once.
    const retried = await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL } });
    expect([200, 201]).toContain(retried.status);
    const holds = await db.ds.query(`SELECT count(*)::int AS n FROM holds WHERE reference = $1`, [runtimeId]);
    expect(holds[0].n).toBe(1);
    // The wallet holds exactly the two reservations: nothing of the 503's attempt beyond what the retry found.
    const walletAfter = (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body;
    expect(walletAfter.total).toBe(walletBefore.total);
    expect(micros(walletAfter.held)).toBe(micros(walletBefore.held) + micros(retried.body.reserved));
    const reconcile = await h.request('POST', '/v1/admin/jobs/ledger-reconcile/run', { key: admin });
    expect(reconcile.body).toMatchObject({ ran: true, result: { problems: 0 } });
  });

  it('answers 503 within the acquire bound when every connection of the pool is stuck, and serves again once it thaws', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    await warmPool();
    proxy.freeze();
    // Each takes a connection and waits on its query.
    const stuck = Array.from({ length: POOL }, () => h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin }));
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    const waiting = await within(ACQUIRE_MS + 3_000, h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin }));
    expectUnavailable(waiting);
    // Before the stuck ones' query bound frees a connection.
    expect(Date.now() - started).toBeLessThan(QUERY_MS);
    for (const answer of await Promise.all(stuck.map((r) => within(QUERY_MS + 4_000, r)))) expectUnavailable(answer);

    proxy.thaw();
    const again = await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: uid('rt'), ...SMALL } });
    expect(again.status).toBe(201);
    expect((await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).status).toBe(200);
  });
});

describe('a frozen database at SIGTERM', () => {
  it('lets the service answer the request in flight 503 and stop within its shutdown deadline', async () => {
    const db = await freshDatabase('frozen_stop');
    const proxy = await FrozenProxy.start(db.url, await freePort());
    try {
      const service = await startService(
        serviceTestEnv({ DATABASE_URL: proxy.url(), DATABASE_QUERY_TIMEOUT_MS: '3000', CRON_ENABLED: 'false' }),
      );
      try {
        const base = `http://127.0.0.1:${service.port}`;
        // Connections of the pool open before the freeze (readiness, the relay): a request takes one and waits on its query.
        for (let i = 0; i < 3; i++) expect((await fetch(`${base}/health/ready`)).status).toBe(200);
        proxy.freeze();
        // Any key: its check is the request's first query. A request cut off by the process' exit says so.
        const inFlight = fetch(`${base}/v1/accounts/acc_frozen/wallet`, {
          headers: { authorization: 'Bearer dlb_unknown_key_of_nobody_0000' },
        }).catch((error: unknown) => new Error(`no answer: ${String(error)}`));
        await new Promise((r) => setTimeout(r, 500));
        const stopping = Date.now();
        service.child.kill('SIGTERM');
        const exited = await within(20_000, service.exited);
        expect(exited).not.toBe('no answer');
        // The shutdown deadline is 15 s: past it the process exits 1 ("shutdown did not finish in time").
        expect(exited).toEqual({ code: 0, signal: null });
        expect(Date.now() - stopping).toBeLessThan(15_000);
        expect(service.output()).not.toMatch(/shutdown did not finish in time/);
        const answer = await inFlight;
        expect(answer).toBeInstanceOf(Response);
        if (!(answer instanceof Response)) return;
        expect(answer.status).toBe(503);
        expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('DL_BILLING_UNAVAILABLE');
      } finally {
        service.child.kill('SIGKILL');
        await service.exited;
      }
    } finally {
      proxy.thaw();
      await proxy.close();
      await db.drop();
    }
  });
});
