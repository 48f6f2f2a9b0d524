import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fundedAccount, SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';

describe('security', () => {
  let h: Harness;
  const bootstrap = `admin-${uid('k')}-secret-bootstrap`;
  const metricsToken = `metrics-${uid('t')}-${uid('t')}-scraper`;
  const logged: string[] = [];

  beforeAll(async () => {
    const write = process.stdout.write.bind(process.stdout);
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: any, ...rest: any[]) => {
      logged.push(String(chunk));
      return write(chunk, ...rest);
    });
    h = await startApp({
      env: {
        BILLING_ADMIN_API_KEY: bootstrap,
        AUTH_FAILURES_PER_MINUTE: '5',
        LOG_LEVEL: 'debug',
        STRIPE_SECRET_KEY: 'sk_test_never_logged_123',
        STRIPE_WEBHOOK_SECRET: 'whsec_never_logged_456',
        METRICS_BEARER_TOKEN: metricsToken,
      },
    });
  });
  afterAll(async () => {
    await h.close();
    vi.restoreAllMocks();
  });

  it("ends the key's console sessions on the server at sign-out, not only the cookie; a forged sign-out ends nothing", async () => {
    const key = (await h.request('POST', '/v1/admin/api-keys', { key: bootstrap, body: { scopes: ['reports'] } })).body.key as string;
    const page = (cookie: string) => h.app.inject({ method: 'GET', url: '/admin/health', headers: { cookie } });
    const first = await h.consoleSession(key);
    await new Promise((r) => setTimeout(r, 5));
    const second = await h.consoleSession(key);
    expect((await page(first)).statusCode).toBe(200);
    const signOut = (cookie: string, csrf?: string) =>
      h.app.inject({
        method: 'POST',
        url: '/admin/logout',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: csrf ? new URLSearchParams({ csrf }).toString() : '',
      });
    // Without the session's token (a forged post from another site carries the cookie at most): the sessions stay.
    expect((await signOut(first)).statusCode).toBe(303);
    expect((await page(first)).statusCode).toBe(200);
    const csrf = /name="csrf" value="([^"]+)"/.exec((await page(first)).body)![1]!;
    expect((await signOut(first, csrf)).statusCode).toBe(303);
    // A copy of either cookie kept after the sign-out opens nothing: both sessions of the key are over.
    for (const cookie of [first, second]) {
      const after = await page(cookie);
      expect(after.statusCode).toBe(303);
      expect(after.headers.location).toBe('/admin/login');
    }
    // Signing in again works, even at once.
    expect((await page(await h.consoleSession(key))).statusCode).toBe(200);
  });

  it('never writes API keys or Stripe secrets to the logs', async () => {
    const created = await h.request('POST', '/v1/admin/api-keys', { key: bootstrap, body: { scopes: ['control-plane'] } });
    const cp = created.body.key as string;
    const accountId = await fundedAccount(h, bootstrap, { credits: '1.000000' });
    await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: uid('rt'), ...SMALL } });
    await h.request('POST', '/v1/reservations', { key: cp, body: { accountId: '', runtimeId: 'x' } });
    await h.request('GET', '/v1/nothing', { key: cp });
    const all = logged.join('');
    expect(all).toContain('"level"'); // the logs were captured
    for (const secret of [bootstrap, cp, 'sk_test_never_logged_123', 'whsec_never_logged_456']) expect(all).not.toContain(secret);
  });

  it('slows down API key guessing: past the limit of failures a client is refused with 429, even with a good key', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await h.request('GET', '/v1/audit', { key: `dlb_guess_${i}` })).status).toBe(401);
    }
    const limited = await h.request('GET', '/v1/audit', { key: bootstrap });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toMatchObject({ code: 'DL_BILLING_RATE_LIMITED', retryAfterSeconds: expect.any(Number) });
    expect(limited.headers['retry-after']).toBe(String(limited.body.error.retryAfterSeconds));
  });

  it("counts the console's failed sign-ins with the API's: past the limit both refuse the client, even with a good key", async () => {
    const signIn = (from: string, key: string) =>
      h.app.inject({
        method: 'POST',
        url: '/admin/login',
        remoteAddress: from,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `key=${encodeURIComponent(key)}`,
      });
    const api = (from: string, key: string) =>
      h.app.inject({ method: 'GET', url: '/v1/audit', remoteAddress: from, headers: { authorization: `Bearer ${key}` } });
    // Guesses at the sign-in page alone.
    for (let i = 0; i < 5; i++) expect((await signIn('198.51.100.7', `dlb_guess_${i}`)).statusCode).toBe(401);
    const limited = await signIn('198.51.100.7', bootstrap);
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.body).toContain('Too many failed sign-ins');
    expect(limited.headers['set-cookie']).toBeUndefined();
    expect((await api('198.51.100.7', bootstrap)).statusCode).toBe(429);
    // Guesses shared between the two: three at the API, two at the sign-in page.
    for (let i = 0; i < 3; i++) expect((await api('198.51.100.8', `dlb_guess_${i}`)).statusCode).toBe(401);
    for (let i = 0; i < 2; i++) expect((await signIn('198.51.100.8', `dlb_guess_${i}`)).statusCode).toBe(401);
    expect((await signIn('198.51.100.8', bootstrap)).statusCode).toBe(429);
    // Another client signs in as usual.
    expect((await signIn('198.51.100.9', bootstrap)).statusCode).toBe(303);
  });

  it('serves /metrics only with METRICS_BEARER_TOKEN when it is set; an API key, even admin, does not open it', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer wrong-token' },
      { authorization: `Bearer ${bootstrap}` },
      { authorization: `Basic ${metricsToken}` },
    ]) {
      const refused = await h.request('GET', '/metrics', { headers });
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ error: { code: 'DL_BILLING_UNAUTHENTICATED', message: expect.any(String) } });
      expect(String(refused.headers['content-type'])).toMatch(/^application\/json/);
    }
    const scraped = await h.request('GET', '/metrics', { headers: { authorization: `Bearer ${metricsToken}` } });
    expect(scraped.status).toBe(200);
    expect(String(scraped.body)).toContain('dl_billing_http_request_duration_seconds');
  });
});
