import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailureLimiter } from '../../src/accounts/auth/failure-limiter';
import { FailureStore } from '../../src/accounts/auth/failure-store';
import { startApp, uid, type Harness } from '../support/app';

const LIMIT = 5;
const SPRAY = 200_000;

describe('the failed-authentication limiter, shared by two instances through PostgreSQL', () => {
  let a: Harness;
  let b: Harness;
  let good: string;

  beforeAll(async () => {
    const env = { AUTH_FAILURES_PER_MINUTE: String(LIMIT) };
    a = await startApp({ env });
    b = await startApp({ env });
    good = await a.key('reports');
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  /** GET /v1/audit from an address, with a key (the good one or a guess). */
  const call = async (h: Harness, from: string, key: string) =>
    (await h.app.inject({ method: 'GET', url: '/v1/audit?limit=1', remoteAddress: from, headers: { authorization: `Bearer ${key}` } }))
      .statusCode;
  const guess = (from: string, h = a) => call(h, from, `dlb_guess_${uid('g')}`);

  it('counts a window from the first failure, refuses until it ends, and opens a new one after', async () => {
    let t = Date.parse('2026-12-04T10:00:00Z');
    const limiter = new FailureLimiter(uid('scope'), 3, a.app.get(FailureStore), { now: () => t, refreshMs: 0 });
    for (let i = 0; i < 3; i++) {
      expect(await limiter.retryAfter('192.0.2.1')).toBe(0);
      await limiter.fail('192.0.2.1');
      t += 1_000;
    }
    expect(await limiter.retryAfter('192.0.2.1')).toBe(57);
    expect(await limiter.retryAfter('192.0.2.2')).toBe(0);
    t += 57_000;
    expect(await limiter.retryAfter('192.0.2.1')).toBe(0);
    expect(await limiter.fail('192.0.2.1')).toBe(0); // the first failure of a new window
  });

  it('keeps the limit for an attacker after 200,000 other addresses failed, on both instances, with a bounded memory', async () => {
    // Fixed clocks: the spray may take longer than a minute on a loaded machine, and the point is
    // what the limiter remembers, not the attacker's window running out.
    const t = Date.now();
    const store = a.app.get(FailureStore);
    const scope = uid('scope');
    const one = new FailureLimiter(scope, LIMIT, store, { now: () => t });
    const two = new FailureLimiter(scope, LIMIT, b.app.get(FailureStore), { now: () => t + 1_000 });
    const attacker = '198.51.100.66';
    for (let i = 0; i < LIMIT; i++) await one.fail(attacker);
    expect(await one.retryAfter(attacker)).toBe(60);

    const started = Date.now();
    const concurrent = 2_000;
    await Promise.all(
      Array.from({ length: concurrent }, async (_, lane) => {
        for (let i = lane; i < SPRAY; i += concurrent) await one.fail(`10.${(i >> 16) & 0xff}.${(i >> 8) & 0xff}.${i & 0xff}`);
      }),
    );
    console.log(`${SPRAY} failures from distinct addresses in ${Date.now() - started} ms`);
    expect(one.localClients).toBe(10_000);
    const [{ n }] = await a.ds.query(`SELECT count(*)::int AS n FROM auth_failures WHERE scope = $1`, [scope]);
    expect(n).toBe(SPRAY + 1);

    // The attacker was forgotten locally long ago, and is still refused here and on the other instance.
    expect(await one.retryAfter(attacker)).toBe(60);
    expect(await two.retryAfter(attacker)).toBe(59);
    expect(await one.retryAfter('10.0.0.1')).toBe(0);
    expect(await one.retryAfter('198.51.100.67')).toBe(0);
  }, 300_000);

  it('counts every address of one IPv6 /64 as one client, and another /64 apart', async () => {
    const inside = (n: number) => `2001:db8:aa:bb:${n.toString(16)}:${(n * 7).toString(16)}::${(n * 13).toString(16)}`;
    for (let i = 1; i <= LIMIT; i++) expect(await guess(inside(i))).toBe(401);
    const limited = await a.app.inject({
      method: 'GET',
      url: '/v1/audit?limit=1',
      remoteAddress: inside(99),
      headers: { authorization: `Bearer ${good}` },
    });
    expect(limited.statusCode).toBe(429);
    expect(JSON.parse(limited.body).error).toMatchObject({ code: 'DL_BILLING_RATE_LIMITED', retryAfterSeconds: expect.any(Number) });
    expect(await call(b, '2001:db8:aa:bb:ffff:ffff:ffff:fffe', good)).toBe(429);
    expect(await call(a, '2001:db8:aa:bc::1', good)).toBe(200);
  });

  it('adds up the failures a client makes on two instances', async () => {
    const client = '203.0.113.77';
    for (let i = 0; i < 3; i++) expect(await guess(client, a)).toBe(401);
    for (let i = 0; i < LIMIT - 3; i++) expect(await guess(client, b)).toBe(401);
    // B saw the fifth failure; A sees it within its refresh interval (one second).
    expect(await call(b, client, good)).toBe(429);
    await new Promise((r) => setTimeout(r, 1_100));
    expect(await call(a, client, good)).toBe(429);
    // Past the limit, guesses are refused before the key is even looked at.
    expect(await guess(client, a)).toBe(429);
  });
});
