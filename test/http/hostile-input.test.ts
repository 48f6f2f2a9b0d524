import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';
import { startStripeApp, type StripeApp } from '../support/stripe-app';
import { expectContractAnswer, nestedArrays, nestedObjects } from '../support/hostile';
import { esc } from '../../src/admin/render';
import type { StripeFake } from '../support/stripe-fake';

const SECRET = 'whsec_hostile_input_secret';
const TOO_DEEP = {
  code: 'DL_BILLING_REQUEST_INVALID',
  message: 'The request body is refused',
  findings: [{ field: 'body', message: 'must not be nested more than 32 levels deep' }],
};

describe('hostile request bodies and headers', () => {
  let stripe: StripeApp;
  let h: Harness;
  let fake: StripeFake;
  let admin: string;
  let cp: string;

  beforeAll(async () => {
    stripe = await startStripeApp('hostile_input', SECRET);
    ({ h, fake, admin } = stripe);
    cp = await h.key('control-plane');
  });
  afterAll(() => stripe.close());

  const post = async (url: string, payload: string, headers: Record<string, string> = {}) => {
    const res = await h.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${cp}`, 'content-type': 'application/json', ...headers },
      payload,
    });
    return { status: res.statusCode, body: JSON.parse(res.body) as any, headers: res.headers };
  };
  const available = async (accountId: string) =>
    (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.available as string;

  it.each([
    ['/v1/events', 'arrays', 5_000],
    ['/v1/events', 'objects', 5_000],
    ['/v1/events', 'arrays', 100_000],
    ['/v1/events', 'objects', 100_000],
    ['/v1/reservations', 'arrays', 5_000],
    ['/v1/reservations', 'objects', 5_000],
    ['/v1/reservations', 'arrays', 100_000],
    ['/v1/reservations', 'objects', 100_000],
  ])('answers POST %s with %s nested %i levels deep with a 400 naming the body, never a 500', async (url, shape, depth) => {
    const res = await post(url, shape === 'arrays' ? nestedArrays(depth) : nestedObjects(depth));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: TOO_DEEP });
  });

  it('refuses a deep field inside a valid reservation, reserves nothing, and still reserves the same request without it', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const runtimeId = uid('rt');
    const valid = JSON.stringify({ accountId, runtimeId, ...SMALL, minutes: 60 });
    const deep = await post('/v1/reservations', `${valid.slice(0, -1)},"extra":{"name":${nestedArrays(5_000, '"x"')}}}`);
    expect(deep.body).toEqual({ error: TOO_DEEP });
    expect(await available(accountId)).toBe('10.000000');
    const good = await post('/v1/reservations', valid);
    expect(good.status).toBe(201);
    expect(await available(accountId)).toBe('9.000000');
  });

  it('names each key a body does not take by its own path, and reserves or records nothing', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const runtimeId = uid('rt');
    const reservation = {
      accountId,
      runtimeId,
      variant: SMALL.variant,
      environment: { ...SMALL.environment, color: 'red' },
      minutes: 60,
      note: 1,
      tag: 2,
    };
    const refused = await h.request('POST', '/v1/reservations', { key: cp, body: reservation });
    expect(refused.status).toBe(400);
    expect(refused.body.error.findings).toEqual([
      { field: 'environment.color', message: 'is not a known field', specCode: 'DL_ENV_SPEC_INVALID' },
      { field: 'note', message: 'is not a known field' },
      { field: 'tag', message: 'is not a known field' },
    ]);
    const event = { ...lifecycle(accountId, runtimeId, 'runtime.started', new Date(), 1), source: 'x' };
    for (const [body, field] of [
      [event, 'source'],
      [[event], 'events[0].source'],
      [{ events: [event] }, 'events[0].source'],
    ] as const) {
      const res = await h.request('POST', '/v1/events', { key: cp, body });
      expect(res.status).toBe(400);
      expect(res.body.error.findings).toEqual([{ field, message: 'is not a known field' }]);
    }
    expect(await available(accountId)).toBe('10.000000');
    expect((await h.ds.query(`SELECT count(*)::int AS n FROM runtime_events WHERE runtime_id = $1`, [runtimeId]))[0].n).toBe(0);
  });

  it.each([
    ['a key twice', (v: string) => `${v.slice(0, -1)},"minutes":1440}`, 'must not have the key "minutes" twice in one object'],
    ['a __proto__ key', (v: string) => `${v.slice(0, -1)},"__proto__":{"minutes":1}}`, 'must not have a __proto__ key'],
    ['an escaped NUL', (v: string) => v.replace('python-simple', 'python\\u0000simple'), 'must not contain NUL characters'],
    [
      'an escaped lone surrogate',
      (v: string) => v.replace('"minutes":60', '"minutes":60,"note":"\\udc00"'),
      'must not contain a lone UTF-16 surrogate (\\uD800-\\uDFFF not in a pair)',
    ],
  ])('refuses a reservation with %s before reading it', async (_what, edit, message) => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const res = await post('/v1/reservations', edit(JSON.stringify({ accountId, runtimeId: uid('rt'), ...SMALL, minutes: 60 })));
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'DL_BILLING_REQUEST_INVALID',
      message: 'The request body is refused',
      findings: [{ field: 'body', message }],
    });
    expect(await available(accountId)).toBe('10.000000');
  });

  it('refuses bytes that are not UTF-8 (a Latin-1 reason) instead of granting with U+FFFD in the reason', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const res = await h.app.inject({
      method: 'POST',
      url: `/v1/admin/accounts/${accountId}/grants`,
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json; charset=utf-8' },
      payload: Buffer.concat([Buffer.from('{"credits":"1.000000","reason":"cr'), Buffer.from([0xe9]), Buffer.from('dit"}')]),
    });
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body)).toEqual({
      error: {
        code: 'DL_BILLING_REQUEST_INVALID',
        message: 'The request body is refused',
        findings: [{ field: 'body', message: 'must be UTF-8 (bytes that are no UTF-8 character were found)' }],
      },
    });
    expect(await available(accountId)).toBe('10.000000');
  });

  it('refuses constructor.prototype and a body over the size limit with contract errors that name the body', async () => {
    const proto = await post('/v1/events', '{"constructor":{"prototype":{"admin":true}}}');
    expect(proto.status).toBe(400);
    expect(proto.body.error.findings).toEqual([{ field: 'body', message: expect.any(String) }]);
    const large = await post('/v1/events', `"${'x'.repeat(5 * 1024 * 1024)}"`);
    expect(large.status).toBe(413);
    expect(large.body.error).toMatchObject({
      code: 'DL_BILLING_PAYLOAD_TOO_LARGE',
      findings: [{ field: 'body', message: expect.any(String) }],
    });
    expectContractAnswer(large);
  });

  it('refuses a key beside `events` in the {events: [...]} form, naming it, and applies none of its events', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '1.000000' });
    const id = uid('evt');
    const heartbeat = {
      id,
      type: 'runtime.heartbeat',
      occurredAt: new Date().toISOString(),
      accountId,
      runtimeId: uid('rt'),
      seq: 1,
      data: {},
    };
    const res = await post('/v1/events', JSON.stringify({ events: [heartbeat], extra: 1 }));
    expect(res.status).toBe(400);
    expect(res.body.error.findings).toEqual([{ field: 'extra', message: 'is not a field of {events: [...]}' }]);
    expect((await post('/v1/events', JSON.stringify({ events: [heartbeat] }))).body).toEqual({ accepted: 1, duplicates: 0 });
  });

  describe('the Stripe webhook', () => {
    const deliver = async (payload: string, secret = SECRET) => {
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret });
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/stripe/webhooks',
        headers: { 'content-type': 'application/json', 'stripe-signature': signature },
        payload,
      });
      return { status: res.statusCode, body: JSON.parse(res.body) as any };
    };

    it('checks the signature of a deep body first (400 signature invalid), then refuses a correctly signed one with a 400 naming the body', async () => {
      for (const payload of [
        nestedObjects(5_000),
        nestedArrays(100_000),
        `{"id":"evt_x","type":"invoice.paid","data":${nestedObjects(100_000)}}`,
      ]) {
        const forged = await deliver(payload, 'whsec_forged');
        expect(forged.status).toBe(400);
        expect(forged.body.error.code).toBe('DL_BILLING_STRIPE_SIGNATURE_INVALID');
        const signed = await deliver(payload);
        expect(signed.status).toBe(400);
        expect(signed.body).toEqual({ error: TOO_DEEP });
      }
    });

    it('refuses a correctly signed event whose bytes are not UTF-8 with a 400 naming the body, after checking its signature', async () => {
      const bytes = Buffer.concat([
        Buffer.from('{"id":"evt_latin1","type":"invoice.paid","created":1,"data":{"object":{"note":"'),
        Buffer.from([0xe9]),
        Buffer.from('"}}}'),
      ]);
      // Stripe's SDK verifies the bytes as UTF-8 text (U+FFFD for what is not): signed the same way here.
      const sign = (secret: string) => Stripe.webhooks.generateTestHeaderString({ payload: bytes.toString('utf8'), secret });
      const send = (signature: string) =>
        h.app.inject({
          method: 'POST',
          url: '/v1/stripe/webhooks',
          headers: { 'content-type': 'application/json', 'stripe-signature': signature },
          payload: bytes,
        });
      expect(JSON.parse((await send(sign('whsec_forged'))).body).error.code).toBe('DL_BILLING_STRIPE_SIGNATURE_INVALID');
      const signed = await send(sign(SECRET));
      expect(signed.statusCode).toBe(400);
      expect(JSON.parse(signed.body).error).toEqual({
        code: 'DL_BILLING_REQUEST_INVALID',
        message: 'The request body is refused',
        findings: [{ field: 'body', message: 'must be UTF-8 (bytes that are no UTF-8 character were found)' }],
      });
    });

    it('refuses a signed event with a key twice, and still credits a good top-up event after the hostile ones', async () => {
      const accountId = await fundedAccount(h, admin, { plan: 'enterprise', credits: '5.000000' });
      const started = await h.request('POST', `/v1/accounts/${accountId}/top-ups`, { key: admin, body: { pack: 'credits-100' } });
      const event = fake.emit('checkout.session.completed', fake.pay(started.body.sessionId));
      const json = JSON.stringify(event);
      const twice = await deliver(`${json.slice(0, -1)},"type":"invoice.paid"}`);
      expect(twice.status).toBe(400);
      expect(twice.body.error.findings).toEqual([{ field: 'body', message: 'must not have the key "type" twice in one object' }]);
      expect(await available(accountId)).toBe('5.000000');
      const good = await deliver(json);
      expect(good.status).toBe(200);
      expect(await available(accountId)).toBe('105.000000');
    });
  });

  describe("a top-up's Idempotency-Key and Stripe's refusals", () => {
    const topUp = (accountId: string, pack: string, key?: string) =>
      h.request('POST', `/v1/accounts/${accountId}/top-ups`, {
        key: admin,
        body: { pack },
        headers: key === undefined ? {} : { 'idempotency-key': key },
      });

    it.each([
      ['10 KB long', 'k'.repeat(10_240)],
      ['with Latin-1 letters', 'clé-\xff'],
      ['with a space', 'a b'],
      ['256 characters long', 'k'.repeat(256)],
    ])('refuses a key %s with a 400 naming the header, before asking Stripe', async (_what, key) => {
      const accountId = await fundedAccount(h, admin, { plan: 'enterprise' });
      const sessions = fake.sessions.size;
      const res = await topUp(accountId, 'credits-100', key);
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({
        code: 'DL_BILLING_REQUEST_INVALID',
        message: 'The request is invalid',
        findings: [{ field: 'Idempotency-Key', message: 'must be 1-255 visible ASCII characters' }],
      });
      expect(fake.sessions.size).toBe(sessions);
    });

    it('takes a 255-character key on a 128-character account id (Stripe keeps 255: sent as a digest), the same session again, another pack a 409', async () => {
      const accountId = await fundedAccount(h, admin, { plan: 'enterprise', id: uid('acc').padEnd(128, 'x') });
      const key = `k${'0123456789'.repeat(25)}abcd`;
      const first = await topUp(accountId, 'credits-100', key);
      expect(first.status).toBe(201);
      expect(fake.requests.at(-1)).toMatchObject({
        path: '/v1/checkout/sessions',
        idempotencyKey: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      });
      const again = await topUp(accountId, 'credits-100', key);
      expect(again.body.sessionId).toBe(first.body.sessionId);
      const other = await topUp(accountId, 'credits-500', key);
      expect(other.status).toBe(409);
      // Stripe's own message (with the key it was sent) is not passed on.
      expect(other.body).toEqual({
        error: { code: 'DL_BILLING_IDEMPOTENCY_CONFLICT', message: 'This Idempotency-Key was used for a different request' },
      });
    });

    it('answers 503 unavailable, not 500, when Stripe cannot be reached', async () => {
      const down = await startApp({ env: { ...fake.env(SECRET), STRIPE_API_URL: 'http://127.0.0.1:9', STRIPE_MAX_NETWORK_RETRIES: '0' } });
      try {
        const key = await down.key('admin');
        const accountId = await fundedAccount(down, key, { plan: 'enterprise' });
        const res = await down.request('POST', `/v1/accounts/${accountId}/top-ups`, { key, body: { pack: 'credits-100' } });
        expect(res.status).toBe(503);
        expect(res.body).toEqual({ error: { code: 'DL_BILLING_UNAVAILABLE', message: 'Stripe cannot be reached now; try again later' } });
      } finally {
        await down.close();
      }
    });
  });

  it("refuses overrides 5,000 levels deep typed into the admin console's plan form (400 naming the field, plan unchanged)", async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'enterprise' });
    const cookie = await h.consoleSession(admin);
    const page = await h.app.inject({ method: 'GET', url: `/admin/accounts/${accountId}`, headers: { cookie } });
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
    for (const [overrides, message] of [
      [nestedObjects(5_000), 'must not be nested more than 32 levels deep'],
      [nestedArrays(5_000), 'must not be nested more than 32 levels deep'],
      ['{"concurrentRuntimes":5,"concurrentRuntimes":500}', 'must not have the key "concurrentRuntimes" twice in one object'],
    ]) {
      const res = await h.app.inject({
        method: 'POST',
        url: `/admin/accounts/${accountId}/plan`,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ csrf, plan: 'enterprise', overrides: overrides!, confirmed: 'yes' }).toString(),
      });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain(esc(message!));
    }
    const plan = await h.request('GET', `/v1/admin/accounts/${accountId}/plan`, { key: admin });
    expect(plan.body).toMatchObject({ plan: 'enterprise', overrides: null });
  });

  describe('x-request-id', () => {
    const audited = async (requestId: string | undefined) => {
      const accountId = await fundedAccount(h, admin);
      const headers: Record<string, string> = {
        'idempotency-key': uid('k'),
        ...(requestId === undefined ? {} : { 'x-request-id': requestId }),
      };
      const res = await h.request('POST', `/v1/admin/accounts/${accountId}/grants`, {
        key: admin,
        body: { credits: '1.000000', reason: 'r' },
        headers,
      });
      expect(res.status).toBe(201);
      const [row] = await h.ds.query(`SELECT correlation_id FROM audit_log WHERE account_id = $1 AND action = 'credits.granted'`, [
        accountId,
      ]);
      return { echoed: res.headers['x-request-id'], stored: row.correlation_id as string };
    };

    it('keeps a request id that looks like an id, in the answer and the audit row', async () => {
      const id = `trace-${uid('r')}:01J.x`;
      expect(await audited(id)).toEqual({ echoed: id, stored: id });
    });

    it.each([
      ['too long', 'r'.repeat(129)],
      ['with spaces and quotes', 'a b "c"'],
      ['with a forged log line', 'x\\n{"level":"error"}'],
      ['with unicode', 'réquête-\u202E'],
      ['empty', ''],
    ])('replaces one %s with a generated id, in the answer and the audit row', async (_what, id) => {
      const { echoed, stored } = await audited(id);
      expect(echoed).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(stored).toBe(echoed);
    });
  });
});
