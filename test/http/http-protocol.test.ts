import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, SMALL } from '../support/accounts';
import { startAppWithKeys, uid, type Harness } from '../support/app';

describe('content types and methods over HTTP', () => {
  let h: Harness, admin: string, cp: string;
  beforeAll(async () => ({ h, admin, cp } = await startAppWithKeys()));
  afterAll(() => h.close());

  /** A request exactly as given: no content type is added to the payload. */
  const send = async (
    method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS',
    url: string,
    headers: Record<string, string> = {},
    payload?: string,
  ) => {
    const res = await h.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: Buffer.from(payload) }) });
    let body: unknown = res.body;
    try {
      body = JSON.parse(res.body);
    } catch {
      // HTML or empty
    }
    return { status: res.statusCode, headers: res.headers, body: body as any };
  };
  const unsupported = (message: string) => ({
    error: {
      code: 'DL_BILLING_UNSUPPORTED_MEDIA_TYPE',
      message: 'The request body must be JSON',
      findings: [{ field: 'content-type', message }],
    },
  });
  const reservation = (accountId = uid('acc')) => JSON.stringify({ accountId, runtimeId: uid('rt'), ...SMALL });

  describe('a body that is not JSON: 415 DL_BILLING_UNSUPPORTED_MEDIA_TYPE', () => {
    it('refuses text/plain, a form, a missing content type, application/*+json and a charset other than UTF-8', async () => {
      const auth = { authorization: `Bearer ${cp}` };
      const cases: [Record<string, string>, string][] = [
        [{ 'content-type': 'text/plain' }, 'must be application/json, not text/plain'],
        [{ 'content-type': 'text/plain; charset=utf-8' }, 'must be application/json, not text/plain'],
        [{ 'content-type': 'application/x-www-form-urlencoded' }, 'must be application/json, not application/x-www-form-urlencoded'],
        [{}, 'is required with a body: application/json'],
        [{ 'content-type': 'application/merge-patch+json' }, 'must be application/json, not application/merge-patch+json'],
        [{ 'content-type': 'application/json; charset=iso-8859-1' }, 'charset must be utf-8, not iso-8859-1'],
      ];
      for (const [headers, message] of cases) {
        const res = await send('POST', '/v1/reservations', { ...auth, ...headers }, reservation());
        expect({ headers, status: res.status, body: res.body }).toEqual({ headers, status: 415, body: unsupported(message) });
      }
    });

    it('on every JSON endpoint, before authentication (as 404 and 413 are), and nothing is done', async () => {
      const accountId = await fundedAccount(h, admin, { credits: '1.000000' });
      const limitBefore = await h.request('GET', `/v1/accounts/${accountId}/spend-limit`, { key: admin });
      const newAccount = uid('acc');
      const targets: ['POST' | 'PUT', string, string, string | undefined][] = [
        ['POST', '/v1/accounts', JSON.stringify({ id: newAccount, kind: 'user', plan: 'free' }), admin],
        ['PUT', `/v1/accounts/${accountId}/spend-limit`, JSON.stringify({ credits: '0.000000', period: 'month' }), admin],
        ['POST', `/v1/admin/accounts/${accountId}/grants`, JSON.stringify({ credits: '5.000000', reason: 'text' }), admin],
        ['POST', '/v1/events', JSON.stringify([]), cp],
        ['POST', '/v1/reservations', reservation(accountId), undefined],
      ];
      for (const [method, url, payload, key] of targets) {
        const res = await send(method, url, { 'content-type': 'text/plain', ...(key ? { authorization: `Bearer ${key}` } : {}) }, payload);
        expect({ url, status: res.status, body: res.body }).toEqual({
          url,
          status: 415,
          body: unsupported('must be application/json, not text/plain'),
        });
      }
      expect((await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body).toMatchObject({
        total: '1.000000',
        held: '0.000000',
      });
      expect((await h.request('GET', `/v1/accounts/${accountId}/spend-limit`, { key: admin })).body).toEqual(limitBefore.body);
      expect((await h.request('GET', `/v1/accounts/${newAccount}/wallet`, { key: admin })).status).toBe(404);
    });

    it('refuses a Stripe webhook whose body is not JSON (Stripe sends application/json; charset=utf-8)', async () => {
      const res = await send('POST', '/v1/stripe/webhooks', { 'content-type': 'text/plain', 'stripe-signature': 't=1,v1=00' }, '{}');
      expect(res).toMatchObject({ status: 415, body: unsupported('must be application/json, not text/plain') });
    });

    it('takes application/json with or without charset=utf-8, and a request without a body as before', async () => {
      const accountId = await fundedAccount(h, admin, { credits: '1.000000' });
      const auth = { authorization: `Bearer ${cp}` };
      for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset="UTF-8"']) {
        expect((await send('POST', '/v1/reservations', { ...auth, 'content-type': type }, reservation(accountId))).status).toBe(201);
      }
      // No body (content-length 0), whatever the content type: the route's own validation answers.
      const missing = {
        accountId: 'Invalid input: expected string, received undefined',
        runtimeId: 'Invalid input: expected string, received undefined',
        variant: 'is required',
        environment: 'is required',
      };
      for (const headers of [{}, { 'content-type': 'text/plain' }, { 'content-type': 'application/x-www-form-urlencoded' }] as Record<
        string,
        string
      >[]) {
        const res = await send('POST', '/v1/reservations', { ...auth, ...headers, 'content-length': '0' });
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('DL_BILLING_REQUEST_INVALID');
      }
      // Without a content type or with JSON's, the route's findings name each missing field.
      for (const headers of [{}, { 'content-type': 'application/json' }] as Record<string, string>[]) {
        const empty = await send('POST', '/v1/reservations', { ...auth, ...headers, 'content-length': '0' });
        expect(empty.body.error.findings).toEqual(Object.entries(missing).map(([field, message]) => ({ field, message })));
      }
      // A route that takes no body answers the same with or without a JSON content type (clients that always send it).
      const org = uid('org');
      expect(
        (await h.request('POST', '/v1/accounts', { key: admin, body: { id: org, kind: 'organization', plan: 'enterprise' } })).status,
      ).toBe(201);
      const members = `/v1/accounts/${org}/members/${uid('u')}`;
      for (const [method, type] of [
        ['PUT', 'application/json'],
        ['DELETE', 'application/json'],
        ['PUT', undefined],
      ] as const) {
        const headers: Record<string, string> = { ...auth, 'content-length': '0', ...(type ? { 'content-type': type } : {}) };
        expect((await send(method, members, headers)).status).toBe(200);
      }
      for (const headers of [{}, { 'content-type': 'application/json' }] as Record<string, string>[]) {
        const job = await send('POST', '/v1/admin/jobs/expiry-sweep/run', {
          authorization: `Bearer ${admin}`,
          'content-length': '0',
          ...headers,
        });
        expect(job).toMatchObject({ status: 200, body: { job: 'expiry-sweep', ran: true } });
      }
    });

    it('leaves the admin dashboard sign-in form (outside /v1) as it is', async () => {
      const res = await send('POST', '/admin/login', { 'content-type': 'application/x-www-form-urlencoded' }, 'key=not-a-key');
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      const xml = await send('POST', '/admin/login', { 'content-type': 'text/xml' }, '<key/>');
      expect(xml).toMatchObject({
        status: 415,
        body: { error: { code: 'DL_BILLING_UNSUPPORTED_MEDIA_TYPE', findings: [{ field: 'content-type', message: expect.any(String) }] } },
      });
    });
  });

  describe('a known path with another method: 405 DL_BILLING_METHOD_NOT_ALLOWED with Allow', () => {
    const notAllowed = (method: string, allowed: string) => ({
      error: {
        code: 'DL_BILLING_METHOD_NOT_ALLOWED',
        message: `Method ${method} is not allowed here (allowed: ${allowed})`,
        findings: [{ field: 'method', message: `must be one of ${allowed}` }],
      },
    });

    it('lists the methods of the path, with or without a key, as a 404 is answered before authentication', async () => {
      const cases: [Parameters<typeof send>[0], string, string][] = [
        ['DELETE', '/v1/reservations/rt_1', 'GET, HEAD'],
        ['PUT', '/v1/reservations', 'POST'],
        ['GET', '/v1/reservations', 'POST'],
        ['PATCH', '/v1/accounts/acc_1/wallet?x=1', 'GET, HEAD'],
        ['DELETE', '/v1/accounts/acc_1/spend-limit', 'GET, HEAD, PUT'],
        ['GET', '/v1/accounts/acc_1/members/u_1', 'PUT, DELETE'],
        ['OPTIONS', '/v1/stripe/webhooks', 'POST'],
      ];
      for (const [method, url, allowed] of cases) {
        for (const headers of [{ authorization: `Bearer ${admin}` }, {}] as Record<string, string>[]) {
          const res = await send(method, url, headers);
          expect({ method, url, status: res.status, allow: res.headers.allow, body: res.body }).toEqual({
            method,
            url,
            status: 405,
            allow: allowed,
            body: notAllowed(method, allowed),
          });
        }
      }
    });

    it('answers before reading the body', async () => {
      const res = await send(
        'DELETE',
        '/v1/reservations/rt_1',
        { authorization: `Bearer ${admin}`, 'content-type': 'text/plain' },
        'not json',
      );
      expect(res).toMatchObject({ status: 405, body: notAllowed('DELETE', 'GET, HEAD') });
    });

    it('keeps 404 for unknown paths', async () => {
      for (const [method, url] of [
        ['GET', '/v1/nothing'],
        ['DELETE', '/v1/reservations/rt_1/nothing'],
        ['GET', '/v1/reservations/rt_1/'],
      ] as const) {
        const res = await send(method, url, { authorization: `Bearer ${admin}` });
        expect({ url, status: res.status, allow: res.headers.allow, body: res.body }).toEqual({
          url,
          status: 404,
          allow: undefined,
          body: { error: { code: 'DL_BILLING_NOT_FOUND', message: 'Route not found' } },
        });
      }
    });
  });

  it('refuses a query parameter a route does not take, naming it, on routes that take none too (after authentication)', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '1.000000' });
    const auth = { authorization: `Bearer ${admin}` };
    const finding = (field: string) => ({ field, message: 'is not a parameter of this endpoint' });
    const wallet = await send('GET', `/v1/accounts/${accountId}/wallet?x=1&y=2`, auth);
    expect(wallet.status).toBe(400);
    expect((wallet.body as { error: { findings: unknown[] } }).error.findings).toEqual([finding('x'), finding('y')]);
    expect((await send('GET', `/v1/accounts/${accountId}/wallet?x=1`)).status).toBe(401);
    expect((await send('GET', `/v1/accounts/${accountId}/wallet`, auth)).status).toBe(200);
    // A route that takes some: the others, and a malformed one, are findings too.
    const discrepancies = async (query: string) => send('GET', `/v1/admin/reconciliation/discrepancies?${query}`, auth);
    expect(((await discrepancies('x=1')).body as { error: { findings: unknown[] } }).error.findings).toEqual([finding('x')]);
    for (const query of ['accountId=a%20b', 'accountId=a&accountId=b', `accountId=${'a'.repeat(200)}`]) {
      const res = await discrepancies(query);
      expect(res.status, query).toBe(400);
      expect((res.body as { error: { findings: { field: string }[] } }).error.findings[0]?.field, query).toBe('accountId');
    }
    expect((await discrepancies(`accountId=${accountId}`)).body).toEqual({ items: [] });
  });

  it("answers a URL the router cannot decode with the contract's error body, not Fastify's", async () => {
    for (const url of ['/v1/%E0%A4%A', '/v1/reservations/%zz']) {
      const res = await send('GET', url, { authorization: `Bearer ${cp}` });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: {
          code: 'DL_BILLING_REQUEST_INVALID',
          message: 'The request is invalid',
          findings: [{ field: 'url', message: 'is not a valid URL (malformed percent-encoding)' }],
        },
      });
    }
  });

  it('routes an id of 128 characters written percent-encoded (384), and refuses a longer path segment naming the URL', async () => {
    // The longest id the pattern allows, every character after the first a `:` written as `%3A`.
    const longest = `r${'%3A'.repeat(127)}`;
    const found = await send('GET', `/v1/reservations/${longest}`, { authorization: `Bearer ${cp}` });
    expect(found.status).toBe(404);
    expect(found.body.error.code).toBe('DL_BILLING_NOT_FOUND');
    const tooLong = await send('GET', `/v1/reservations/${'r'.repeat(385)}`, { authorization: `Bearer ${cp}` });
    expect(tooLong).toMatchObject({
      status: 400,
      body: {
        error: {
          code: 'DL_BILLING_REQUEST_INVALID',
          findings: [{ field: 'url', message: 'has a path segment longer than 384 characters' }],
        },
      },
    });
  });

  it("answers a malformed URL under /admin with the console's HTML error page, and keeps the API's JSON body elsewhere", async () => {
    const cookie = await h.consoleSession(admin);
    for (const url of ['/admin/%ZZ', '/admin/accounts/%E0%A4%A', '/admin/%ZZ?from=x']) {
      for (const headers of [{ cookie }, {}] as Record<string, string>[]) {
        const res = await send('GET', url, headers);
        expect(res.status, url).toBe(400);
        expect(res.headers['content-type'], url).toMatch(/^text\/html/);
        const html = String(res.body);
        expect(html, url).toMatch(/<div class="problem" role="alert">.*DL_BILLING_REQUEST_INVALID.*<code>url<\/code>: is not a valid URL/s);
        // The console's headers, as every console answer: no framing, no scripts, not cached.
        expect(res.headers['content-security-policy'], url).toContain("default-src 'none'");
        expect(res.headers['cache-control'], url).toBe('no-store');
      }
    }
    // A path that only starts like the console's, and the API, keep the contract's JSON body.
    for (const url of ['/administrator/%ZZ', '/admin%ZZ', '/v1/admin/%ZZ']) {
      const res = await send('GET', url, { authorization: `Bearer ${admin}` });
      expect(res.status, url).toBe(400);
      expect(res.headers['content-type'], url).toMatch(/^application\/json/);
      expect(res.body, url).toEqual({
        error: {
          code: 'DL_BILLING_REQUEST_INVALID',
          message: 'The request is invalid',
          findings: [{ field: 'url', message: 'is not a valid URL (malformed percent-encoding)' }],
        },
      });
    }
  });

  describe('what the HTTP parser refuses before there is a request: the contract body too, over a real connection', () => {
    let port: number;
    beforeAll(async () => {
      await h.app.listen(0, '127.0.0.1');
      port = (h.app.getHttpServer().address() as AddressInfo).port;
    });

    /** Sends the bytes as they are and reads the answer until the server closes the connection. */
    const raw = (bytes: string) =>
      new Promise<{ status: number; headers: string; body: any }>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        const chunks: Buffer[] = [];
        socket.on('data', (d: Buffer) => chunks.push(d));
        socket.on('error', reject);
        socket.on('close', () => {
          const text = Buffer.concat(chunks).toString('latin1');
          const [head = '', body = ''] = text.split('\r\n\r\n');
          resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: body ? JSON.parse(body) : null });
        });
        socket.write(bytes, 'latin1');
      });
    const get = (headers: string) => `GET /v1/accounts/acc_1/wallet HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${cp}\r\n${headers}\r\n`;
    const notHttp = {
      error: {
        code: 'DL_BILLING_REQUEST_INVALID',
        message: 'The request is not valid HTTP',
        findings: [{ field: 'request', message: 'is not a well-formed HTTP/1.1 request' }],
      },
    };

    it('answers headers over 16 KiB (a 20 KB header, a 100 KB URL) with 431 DL_BILLING_HEADERS_TOO_LARGE', async () => {
      const tooLarge = {
        error: {
          code: 'DL_BILLING_HEADERS_TOO_LARGE',
          message: 'The request line and headers are too large',
          findings: [{ field: 'headers', message: 'must be at most 16384 bytes with the request line' }],
        },
      };
      for (const bytes of [get(`x-junk: ${'a'.repeat(20_000)}\r\n`), `GET /v1/${'a/'.repeat(50_000)} HTTP/1.1\r\nhost: x\r\n\r\n`]) {
        const res = await raw(bytes);
        expect(res.status).toBe(431);
        expect(res.headers).toContain('content-type: application/json');
        expect(res.body).toEqual(tooLarge);
      }
    });

    it('answers malformed HTTP (junk, an unknown method, both content-length and chunked, a control character in a header, a bad chunk) with a 400 naming the request', async () => {
      const post = (headers: string, body: string) =>
        `POST /v1/events HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${cp}\r\ncontent-type: application/json\r\n${headers}\r\n${body}`;
      for (const bytes of [
        'garbage\r\n\r\n',
        'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
        `FOO /v1/events HTTP/1.1\r\nhost: x\r\n\r\n`,
        post('content-length: 7\r\ntransfer-encoding: chunked\r\n', '7\r\n{"a":1}\r\n0\r\n\r\n'),
        post('transfer-encoding: chunked\r\n', 'zz\r\n{"a":1}\r\n0\r\n\r\n'),
        get('idempotency-key: a\u0001b\r\n'),
      ]) {
        const res = await raw(bytes);
        expect({ bytes: bytes.slice(0, 40), status: res.status, body: res.body }).toEqual({
          bytes: bytes.slice(0, 40),
          status: 400,
          body: notHttp,
        });
      }
    });

    it('still answers a well-formed request on the same server', async () => {
      const res = await raw(get('connection: close\r\n'));
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('DL_BILLING_NOT_FOUND');
    });
  });
});
