import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { routesOf } from '../../src/api-docs/docs';
import { responseChecker, startApp, type Harness } from '../support/app';
import { UNDOCUMENTED } from '../support/openapi-check';

describe('the OpenAPI document and the docs page', () => {
  let h: Harness;
  let doc: { openapi: string; servers: unknown[]; paths: Record<string, Record<string, { operationId: string }>> };

  beforeAll(async () => {
    h = await startApp();
    doc = (await h.request('GET', '/openapi.json')).body;
  });
  afterAll(() => h.close());

  it('documents every route the router has, except the HTML admin pages and the docs themselves', () => {
    const routes = routesOf(h.app).filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS' && !UNDOCUMENTED.test(r.url));
    expect(routes.length).toBeGreaterThan(30);
    const missing = routes
      .map((r) => ({ method: r.method.toLowerCase(), path: r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}') }))
      .filter((r) => !doc.paths[r.path]?.[r.method])
      .map((r) => `${r.method.toUpperCase()} ${r.path}`);
    expect(missing).toEqual([]);
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/admin'))).toBe(false);
  });

  it('serves the document at /openapi.json, /docs/openapi.json and (to a client not asking for HTML) /docs', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toHaveLength(1);
    expect((await h.request('GET', '/docs/openapi.json')).body).toEqual(doc);
    expect((await h.request('GET', '/docs', { headers: { accept: 'application/json' } })).body).toEqual(doc);
  });

  it('serves the AsyncAPI document of the Kafka topics at /asyncapi.json, without a key, as checked in', async () => {
    const res = await h.request('GET', '/asyncapi.json');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(JSON.parse(readFileSync('docs/asyncapi.json', 'utf8')));
    expect(res.body.asyncapi).toBe('3.0.0');
  });

  it('serves a page a person can read at /docs, with its scripts from the npm package (no CDN)', async () => {
    const page = await h.request('GET', '/docs', { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(page.status).toBe(200);
    expect(String(page.headers['content-type'])).toContain('text/html');
    const sources = [...String(page.body).matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources.length).toBeGreaterThanOrEqual(3);
    for (const source of sources) {
      expect(source.startsWith('/docs/')).toBe(true);
      const asset = await h.request('GET', source);
      expect([source, asset.status]).toEqual([source, 200]);
      expect(String(asset.body).length).toBeGreaterThan(20);
    }
    expect(String((await h.request('GET', '/docs/docs.js')).body)).toContain("url: '/openapi.json'");
  });

  it('fails a response the document does not allow: an undocumented status, or a field outside the schema', async () => {
    const key = await h.key('admin');
    // The checker the harness runs on every response, given one the service never sends.
    const checker = await responseChecker(h.app);
    expect(() => checker.check('GET', '/v1/audit', 418, 'application/json', {})).toThrow(/status 418 is not documented for listAudit/);
    const real = await h.request('GET', '/v1/audit?limit=1', { key });
    expect(real.status).toBe(200);
    expect(() => checker.check('GET', '/v1/audit', 200, 'application/json', { ...real.body, extra: 1 })).toThrow(
      /must NOT have additional properties \(extra\)/,
    );
    expect(() => checker.check('GET', '/v1/audit', 200, 'text/csv', 'a,b')).toThrow(/documents application\/json/);
  });

  it("fails a test's own h.app.inject too, not only the harness' requests and the typed client's", async () => {
    const key = await h.key('admin');
    const checker = await responseChecker(h.app);
    const check = checker.check.bind(checker);
    // The check as the harness runs it, told the status were one the document lacks.
    const spy = vi.spyOn(checker, 'check').mockImplementation((method, url, _status, type, body) => check(method, url, 418, type, body));
    try {
      await expect(h.app.inject({ method: 'GET', url: '/v1/audit?limit=1', headers: { authorization: `Bearer ${key}` } })).rejects.toThrow(
        /GET \/v1\/audit → 418: status 418 is not documented for listAudit/,
      );
    } finally {
      spy.mockRestore();
    }
    expect((await h.app.inject({ method: 'GET', url: '/v1/audit?limit=1', headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(
      200,
    );
  });
});
