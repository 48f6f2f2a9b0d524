import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';
import { expectContractAnswer, nestedArrays, nestedObjects } from '../support/hostile';
import { StripeFake } from '../support/stripe-fake';

const SECRET = 'whsec_hostile_input_secret';
const TOO_DEEP = {
  code: 'DL_BILLING_REQUEST_INVALID',
  message: 'The request body is refused',
  findings: [{ field: 'body', message: 'must not be nested more than 32 levels deep' }],
};

describe('hostile request bodies and headers', () => {
  let h: Harness;
  let fake: StripeFake;
  let admin: string;
  let cp: string;

  beforeAll(async () => {
    fake = await new StripeFake().start();
    h = await startApp({ env: fake.env(SECRET) });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(async () => {
    await h.close();
    await fake.stop();
  });

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

  it.each([
    ['a key twice', (v: string) => `${v.slice(0, -1)},"minutes":1440}`, 'must not have the key "minutes" twice in one object'],
    ['a __proto__ key', (v: string) => `${v.slice(0, -1)},"__proto__":{"minutes":1}}`, 'must not have a __proto__ key'],
    ['an escaped NUL', (v: string) => v.replace('python-simple', 'python\\u0000simple'), 'must not contain NUL characters'],
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
