import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from 'src/common/canonical-json';
import { startApp, uid, type Harness } from '../support/app';

describe('API keys and scopes', () => {
  let h: Harness;
  const bootstrap = `admin-${uid('k')}-bootstrap`;

  beforeAll(async () => {
    h = await startApp({ env: { BILLING_ADMIN_API_KEY: bootstrap } });
  });
  afterAll(() => h.close());

  it('refuses a request without a key with the contract body', async () => {
    const res = await h.request('POST', '/v1/admin/api-keys', { body: { scopes: ['reports'] } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { code: 'DL_BILLING_UNAUTHENTICATED', message: expect.any(String) } });
  });

  it('refuses a wrong key', async () => {
    const res = await h.request('POST', '/v1/admin/api-keys', { key: 'dlb_wrong', body: { scopes: ['reports'] } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('DL_BILLING_UNAUTHENTICATED');
  });

  it('refuses a key of the wrong scope', async () => {
    const key = await h.key('control-plane');
    const res = await h.request('POST', '/v1/admin/api-keys', { key, body: { scopes: ['reports'] } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('DL_BILLING_FORBIDDEN');
  });

  it('bootstraps the admin key, creates a key shown once, and revokes it', async () => {
    const accountId = uid('acc');
    expect((await h.request('POST', '/v1/accounts', { key: bootstrap, body: { id: accountId, kind: 'user', plan: 'free' } })).status).toBe(
      201,
    );
    const created = await h.request('POST', '/v1/admin/api-keys', {
      key: bootstrap,
      body: { scopes: ['control-plane', `account:${accountId}`], name: 'cp' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^key_/), key: expect.stringMatching(/^dlb_/) });
    const stored = await h.ds.query('SELECT key_hash FROM api_keys WHERE id = $1', [created.body.id]);
    expect(stored[0].key_hash).not.toContain(created.body.key);

    const events = await h.request('POST', '/v1/events', { key: created.body.key, body: { events: [] } });
    expect(events.status).toBe(400); // authenticated, then refused for its body

    const revoked = await h.request('DELETE', `/v1/admin/api-keys/${created.body.id}`, { key: bootstrap });
    expect(revoked.status).toBe(200);
    // A revoked key is refused at once on this instance.
    const after = await h.request('POST', '/v1/events', { key: created.body.key, body: { events: [] } });
    expect(after.status).toBe(401);
  });

  it('refuses a key revoked on another instance once API_KEY_CACHE_TTL_MS has passed', async () => {
    const ttl = 300;
    const here = await startApp({ env: { API_KEY_CACHE_TTL_MS: String(ttl) } });
    try {
      const created = await h.request('POST', '/v1/admin/api-keys', { key: bootstrap, body: { scopes: ['control-plane'] } });
      expect(created.status).toBe(201);
      // Authenticated here, so the key is in this instance's cache; then revoked on the other one.
      expect((await here.request('POST', '/v1/events', { key: created.body.key, body: { events: [] } })).status).toBe(400);
      expect((await h.request('DELETE', `/v1/admin/api-keys/${created.body.id}`, { key: bootstrap })).status).toBe(200);
      await new Promise((r) => setTimeout(r, ttl + 100));
      const after = await here.request('POST', '/v1/events', { key: created.body.key, body: { events: [] } });
      expect(after.status).toBe(401);
      expect(after.body.error.code).toBe('DL_BILLING_UNAUTHENTICATED');
    } finally {
      await here.close();
    }
  });

  it('rotates BILLING_ADMIN_API_KEY: the previous value works until revoked by its id, and stays revoked after a restart', async () => {
    const idOf = async (key: string): Promise<string> =>
      (await h.ds.query('SELECT id FROM api_keys WHERE key_hash = $1', [sha256Hex(key)]))[0].id;
    const previous = `admin-${uid('k')}-previous`;
    const next = `admin-${uid('k')}-rotated`;
    const apps: Harness[] = [];
    try {
      apps.push(await startApp({ env: { BILLING_ADMIN_API_KEY: previous } }));
      const first = await idOf(previous);
      expect(first).toMatch(/^key_bootstrap_[0-9a-f]{12}$/);
      const rotated = await startApp({ env: { BILLING_ADMIN_API_KEY: next } });
      apps.push(rotated);
      expect(await idOf(next)).not.toBe(first);
      // Both values are admin keys until the previous one is revoked.
      for (const key of [previous, next]) expect((await rotated.request('GET', '/v1/audit?limit=1', { key })).status).toBe(200);
      expect((await rotated.request('DELETE', `/v1/admin/api-keys/${first}`, { key: next })).status).toBe(200);
      expect((await rotated.request('GET', '/v1/audit?limit=1', { key: previous })).status).toBe(401);
      expect((await rotated.request('GET', '/v1/audit?limit=1', { key: next })).status).toBe(200);
      // An instance started again with the revoked value does not revive it.
      const again = await startApp({ env: { BILLING_ADMIN_API_KEY: previous } });
      apps.push(again);
      expect((await again.request('GET', '/v1/audit?limit=1', { key: previous })).status).toBe(401);
      expect(await idOf(previous)).toBe(first);
    } finally {
      for (const app of apps) await app.close();
    }
  });

  it('refuses a key for an account that does not exist, naming the scope, and mints nothing', async () => {
    const nobody = uid('nobody');
    const res = await h.request('POST', '/v1/admin/api-keys', { key: bootstrap, body: { scopes: ['reports', `account:${nobody}`] } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'DL_BILLING_REQUEST_INVALID',
      findings: [{ field: 'scopes.1', message: `account ${nobody} does not exist` }],
    });
    expect((await h.ds.query('SELECT count(*)::int AS n FROM api_keys WHERE $1 = ANY(scopes)', [`account:${nobody}`]))[0].n).toBe(0);
  });

  it('lists every finding with its field when creating a key', async () => {
    const res = await h.request('POST', '/v1/admin/api-keys', {
      key: bootstrap,
      body: { scopes: ['root', 'account:'], name: '', extra: 1 },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('DL_BILLING_REQUEST_INVALID');
    const fields = res.body.error.findings.map((f: { field: string }) => f.field);
    expect(fields).toEqual(expect.arrayContaining(['scopes.0', 'scopes.1', 'name']));
    expect(res.body.error.findings).toHaveLength(4); // the unknown key `extra` is the fourth
  });

  it('answers unknown routes and malformed JSON with contract errors', async () => {
    const missing = await h.request('GET', '/v1/nothing-here', { key: bootstrap });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('DL_BILLING_NOT_FOUND');
    const bad = await h.request('POST', '/v1/admin/api-keys', { key: bootstrap, body: '{"scopes": [' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('DL_BILLING_REQUEST_INVALID');
  });

  it('serves health, metrics and the OpenAPI document without a key', async () => {
    expect((await h.request('GET', '/health/live')).status).toBe(200);
    const ready = await h.request('GET', '/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.checks.database.ok).toBe(true);
    const metrics = await h.request('GET', '/metrics');
    expect(String(metrics.body)).toContain('dl_billing_http_request_duration_seconds');
    const docs = await h.request('GET', '/docs');
    expect(docs.body.openapi).toBe('3.1.0');
    expect(Object.keys(docs.body.paths)).toContain('/v1/admin/api-keys');
  });
});
