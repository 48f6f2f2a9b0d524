import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/common/errors/error-codes';
import { fundedAccount, SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';
import { expectContractAnswer, hostileText, hostileValue, nestedArrays } from '../support/hostile';

/** Short in CI; `FUZZ_RUNS=2000 npx vitest run --project http test/http/fuzz.test.ts` for the long form. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
/** A seed reproduces a failing run (fast-check prints it): `FUZZ_SEED=<seed>`. */
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

const CODES = new Set(Object.keys(ERROR_STATUS));

/** Bodies that are almost right: valid requests with fields dropped, retyped or replaced by junk. */
function mutated(valid: Record<string, unknown>) {
  const junk = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.string(),
    fc.constant(''),
    fc.constant('9999-99-99T99:99:99Z'),
    fc.constant(-1),
    fc.constant(1e308),
    fc.array(fc.anything(), { maxLength: 3 }),
    fc.dictionary(fc.string(), fc.anything(), { maxKeys: 3 }),
  );
  return fc
    .array(
      fc.tuple(
        fc.constantFrom(...Object.keys(valid), 'extra', 'environment.sizeClass', 'environment.accelerator'),
        fc.option(junk, { nil: undefined }),
      ),
      {
        minLength: 1,
        maxLength: 4,
      },
    )
    .map((edits) => {
      const body: Record<string, any> = structuredClone(valid);
      for (const [path, value] of edits) {
        const [head, tail] = path.split('.') as [string, string | undefined];
        if (tail) {
          if (typeof body[head] !== 'object' || body[head] === null) body[head] = {};
          if (value === undefined) delete body[head][tail];
          else body[head][tail] = value;
        } else if (value === undefined) delete body[head];
        else body[head] = value;
      }
      return body;
    });
}

describe('fuzzing the HTTP API with malformed input', () => {
  let h: Harness;
  let admin: string;
  let cp: string;
  let accountId: string;

  beforeAll(async () => {
    h = await startApp();
    admin = await h.key('admin');
    cp = await h.key('control-plane');
    accountId = await fundedAccount(h, admin, { credits: '1000.000000' });
  });
  afterAll(() => h.close());

  const expectContractError = (res: { status: number; body: any }) => {
    expect(res.status).toBeLessThan(500);
    if (res.status >= 400) {
      expect(CODES.has(res.body?.error?.code)).toBe(true);
      expect(typeof res.body.error.message).toBe('string');
    }
  };

  it('never answers a malformed reservation, event, grant or spend limit with a 5xx, and never loses the good input mixed in', async () => {
    const reservation = { accountId, runtimeId: 'rt', ...SMALL, minutes: 10 };
    const event = {
      id: 'e',
      type: 'runtime.heartbeat',
      occurredAt: new Date().toISOString(),
      accountId,
      runtimeId: 'rt',
      seq: 1,
      data: {},
    };
    let goodEvents = 0;
    await fc.assert(
      fc.asyncProperty(
        mutated(reservation),
        mutated(event),
        mutated({ credits: '1.000000', reason: 'x' }),
        mutated({ credits: '5.000000', thresholds: [50] }),
        async (r, e, g, s) => {
          expectContractError(
            await h.request('POST', '/v1/reservations', {
              key: cp,
              body: { ...r, runtimeId: typeof r.runtimeId === 'string' ? uid('rt') : r.runtimeId },
            }),
          );
          expectContractError(await h.request('POST', '/v1/events', { key: cp, body: e }));
          expectContractError(
            await h.request('POST', `/v1/admin/accounts/${accountId}/grants`, {
              key: admin,
              body: g,
              headers: { 'idempotency-key': uid('k') },
            }),
          );
          expectContractError(await h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, { key: admin, body: s }));
          // A good event next to the junk is applied.
          const good = await h.request('POST', '/v1/events', {
            key: cp,
            body: { ...event, id: uid('evt'), runtimeId: 'rt_fuzz_good', seq: goodEvents + 1 },
          });
          expect(good.status).toBe(200);
          goodEvents++;
        },
      ),
      { numRuns: 60 },
    );
    // Spend limits set by the fuzzer must not block the good input check below.
    await h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, { key: admin, body: { credits: null } });
    // Heartbeats are counted by their runtime (not stored), each new seq once.
    const counted = await h.ds.query(`SELECT events_count AS n FROM runtimes WHERE runtime_id = 'rt_fuzz_good'`);
    expect(counted[0].n).toBe(goodEvents);
  });

  it('answers raw junk bodies, wrong content types and odd paths with contract errors', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 200 }),
        fc.constantFrom('/v1/reservations', '/v1/events', `/v1/accounts/${accountId}/spend-limit`, '/v1/admin/api-keys'),
        async (raw, path) => {
          const res = await h.app.inject({
            method: path.endsWith('spend-limit') ? 'PUT' : 'POST',
            url: path,
            headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
            payload: raw,
          });
          expect(res.statusCode).toBeLessThan(500);
          if (res.statusCode >= 400) expect(CODES.has(JSON.parse(res.body).error.code)).toBe(true);
        },
      ),
      { numRuns: 100 },
    );
    for (const url of [
      '/v1/reservations/%00',
      '/v1/accounts/../../etc/wallet',
      `/v1/accounts/${'x'.repeat(5000)}/wallet`,
      '/v1/accounts/a%2Fb/usage?from=nope',
    ]) {
      const res = await h.request('GET', url, { key: admin });
      expect(res.status).toBeLessThan(500);
    }
    const nul = await h.request('POST', '/v1/events', {
      key: cp,
      body: {
        id: 'evt\u0000',
        type: 'runtime.heartbeat',
        occurredAt: new Date().toISOString(),
        accountId,
        runtimeId: 'rt',
        seq: 1,
        data: { x: '\u0000' },
      },
    });
    expect(nul.status).toBe(400);
    expect(nul.body.error.findings).toEqual([{ field: 'body', message: 'must not contain NUL characters' }]);
    const text = await h.app.inject({
      method: 'POST',
      url: '/v1/reservations',
      headers: { authorization: `Bearer ${cp}`, 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(text.statusCode).toBeLessThan(500);
    expect(CODES.has(JSON.parse(text.body).error.code)).toBe(true);
  });

  it('answers hostile values in any field and hostile texts with contract errors, and still applies the good reservations mixed in exactly', async () => {
    const bystander = await fundedAccount(h, admin, { credits: '1000.000000' });
    const operations = [
      {
        method: 'POST' as const,
        url: '/v1/reservations',
        key: () => cp,
        valid: () => ({ accountId, runtimeId: uid('rt'), ...SMALL, minutes: 10 }),
      },
      {
        method: 'POST' as const,
        url: '/v1/events',
        key: () => cp,
        valid: () => ({
          id: uid('evt'),
          type: 'runtime.heartbeat',
          occurredAt: new Date().toISOString(),
          accountId,
          runtimeId: 'rt',
          seq: 1,
          data: {},
        }),
      },
      {
        method: 'POST' as const,
        url: `/v1/admin/accounts/${accountId}/grants`,
        key: () => admin,
        valid: () => ({ credits: '1.000000', reason: 'x' }),
      },
      {
        method: 'PUT' as const,
        url: `/v1/accounts/${accountId}/spend-limit`,
        key: () => admin,
        valid: () => ({ credits: '5.000000', thresholds: [50] }),
      },
      { method: 'POST' as const, url: '/v1/admin/api-keys', key: () => admin, valid: () => ({ scopes: ['reports'], name: 'n' }) },
    ];
    const send = async (op: (typeof operations)[number], payload: string) => {
      const res = await h.app.inject({
        method: op.method,
        url: op.url,
        headers: { authorization: `Bearer ${op.key()}`, 'content-type': 'application/json', 'idempotency-key': uid('k') },
        payload,
      });
      let body: unknown = res.body;
      try {
        body = JSON.parse(res.body);
      } catch {
        // checked below: an error answer must be JSON
      }
      return { status: res.statusCode, body };
    };
    let good = 0;
    const attack = fc.tuple(
      fc.nat(operations.length - 1),
      fc.oneof(
        fc.record({ kind: fc.constant('value' as const), field: fc.nat(7), value: hostileValue() }),
        fc.record({ kind: fc.constant('text' as const), pick: fc.nat() }),
      ),
    );
    await fc.assert(
      fc.asyncProperty(attack, async ([index, edit]) => {
        const op = operations[index]!;
        const valid = op.valid();
        let payload: string;
        if (edit.kind === 'value') {
          const fields = [...Object.keys(valid), 'extra'];
          payload = JSON.stringify({ ...valid, [fields[edit.field % fields.length]!]: edit.value });
        } else {
          const texts = fc.sample(hostileText(valid), { numRuns: 1, seed: edit.pick });
          payload = texts[0]!.text;
        }
        expectContractAnswer(await send(op, payload), `${op.method} ${op.url} ${payload.slice(0, 120)}`);
        // A good reservation for another account, mixed in: reserved exactly (1 credit/hour for 60 minutes).
        const reserved = await h.request('POST', '/v1/reservations', {
          key: cp,
          body: { accountId: bystander, runtimeId: uid('rt_good'), ...SMALL, minutes: 60 },
        });
        expect(reserved.status).toBe(201);
        good++;
      }),
      {
        numRuns: RUNS,
        ...(SEED === undefined ? {} : { seed: SEED }),
        // Regression cases: inputs that once answered 500 (a body 5,000 levels deep reached a recursive JSON.stringify).
        examples: [
          [[0, { kind: 'text' as const, pick: 0 }]],
          [[1, { kind: 'value' as const, field: 6, value: JSON.parse(nestedArrays(31, '1')) as unknown }]],
        ],
      },
    );
    const wallet = await h.request('GET', `/v1/accounts/${bystander}/wallet`, { key: admin });
    expect(wallet.body.available).toBe(`${1000 - good}.000000`);
    const [{ n }] = await h.ds.query(`SELECT count(*)::int AS n FROM runtimes WHERE account_id = $1`, [bystander]);
    expect(n).toBe(good);
  }, 300_000);
});
