import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount } from '../support/accounts';
import { startApp, type Harness } from '../support/app';

const PUBLIC = new Set(['/health/live', '/health/ready', '/metrics', '/v1/stripe/webhooks', '/docs', '/docs/openapi.json']);

/** Who may call what: every route of the OpenAPI document × every kind of key. */
describe('authorization matrix', () => {
  let h: Harness;
  let routes: { method: string; path: string }[];
  const keys: Record<string, string> = {};
  let own: string;
  let other: string;

  beforeAll(async () => {
    // The matrix fails authentication on purpose many times: lift the per-client limit.
    h = await startApp({ env: { AUTH_FAILURES_PER_MINUTE: '100000' } });
    keys.admin = await h.key('admin');
    own = await fundedAccount(h, keys.admin, { credits: '1.000000' });
    other = await fundedAccount(h, keys.admin, { credits: '1.000000' });
    keys['control-plane'] = await h.key('control-plane');
    keys.reports = await h.key('reports');
    keys.own = await h.key(`account:${own}`);
    keys.other = await h.key(`account:${other}`);
    const docs = await h.request('GET', '/docs');
    routes = Object.entries(docs.body.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })),
    );
  });
  afterAll(() => h.close());

  const url = (path: string) =>
    path
      .replace('{id}', own)
      .replace(/\{[A-Za-z]+\}/g, 'x1')
      .replace(/\*$/, '');
  const call = (method: string, path: string, key?: string) =>
    h.request(method as 'GET', url(path), { key, body: method === 'GET' || method === 'DELETE' ? undefined : {} });

  it('covers the routes of the contract', () => {
    const paths = routes.map((r) => `${r.method} ${r.path}`);
    for (const p of [
      'POST /v1/reservations',
      'GET /v1/accounts/{id}/wallet',
      'PUT /v1/accounts/{id}/spend-limit',
      'POST /v1/admin/api-keys',
      'GET /v1/audit',
    ]) {
      expect(paths).toContain(p);
    }
  });

  it('refuses every non-public route without a key, or with an unknown key, with 401', async () => {
    for (const r of routes.filter((r) => !PUBLIC.has(r.path) && !r.path.startsWith('/admin'))) {
      const none = await call(r.method, r.path);
      expect([r.method, r.path, none.status]).toEqual([r.method, r.path, 401]);
      expect(none.body.error.code).toBe('DL_BILLING_UNAUTHENTICATED');
      const wrong = await call(r.method, r.path, 'dlb_not_a_key');
      expect(wrong.status).toBe(401);
    }
  });

  it("never lets another account's key read or change this account, nor reach admin, reports or control-plane routes", async () => {
    for (const r of routes.filter((r) => !PUBLIC.has(r.path) && !r.path.startsWith('/admin'))) {
      const res = await call(r.method, r.path, keys.other);
      // Reads of a reservation check ownership after finding it: 404 for a runtime that does not exist.
      const allowed = r.path === '/v1/reservations/{runtimeId}' ? [403, 404] : [403];
      expect([r.method, r.path, allowed.includes(res.status)]).toEqual([r.method, r.path, true]);
    }
  });

  it("lets an account's own key use only its own account routes", async () => {
    for (const r of routes.filter((r) => !PUBLIC.has(r.path) && !r.path.startsWith('/admin'))) {
      const res = await call(r.method, r.path, keys.own);
      const ownRoute = r.path.startsWith('/v1/accounts/{id}') || r.path === '/v1/reservations/{runtimeId}';
      if (!ownRoute) expect([r.method, r.path, res.status]).toEqual([r.method, r.path, 403]);
      else expect([r.method, r.path, res.status === 401]).toEqual([r.method, r.path, false]);
    }
  });

  it('lets admin through every route (a 4xx then is about the request, never 401 or 403)', async () => {
    for (const r of routes.filter((r) => !PUBLIC.has(r.path) && !r.path.startsWith('/admin'))) {
      const res = await call(r.method, r.path, keys.admin);
      expect([
        r.method,
        r.path,
        [401, 403].includes(res.status) &&
          res.body?.error?.code !== 'DL_BILLING_ACCOUNT_SUSPENDED' &&
          res.body?.error?.code !== 'DL_BILLING_PLAN_FORBIDS',
      ]).toEqual([r.method, r.path, false]);
      // 503 only where an outside service (Stripe) is not configured on this instance.
      expect(res.status < 500 || res.body?.error?.code === 'DL_BILLING_UNAVAILABLE').toBe(true);
    }
  });

  it('keeps admin-only routes from the control plane and reports keys', async () => {
    const leaks: string[] = [];
    for (const r of routes.filter((r) => r.path.startsWith('/v1/admin/'))) {
      for (const who of ['control-plane', 'reports', 'own']) {
        // Reconciliation discrepancies are a report: the reports scope may read them.
        if (who === 'reports' && r.method === 'GET' && r.path.startsWith('/v1/admin/reconciliation/')) continue;
        const res = await call(r.method, r.path, keys[who]);
        if (res.status !== 403) leaks.push(`${who} ${r.method} ${r.path} → ${res.status}`);
      }
    }
    expect(leaks).toEqual([]);
  });
});
