import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, SMALL } from '../support/accounts';
import { startAppOnFreshDatabase, uid, type Harness } from '../support/app';
import { StripeFake } from '../support/stripe-fake';
import { expectContractAnswer, hostileText, hostileValue } from '../support/hostile';
import {
  boundaryValues,
  pathsOf,
  resolve,
  validValue,
  withEdit,
  wrongTypes,
  type Schema,
  type SchemaContext,
} from '../support/schema-arbitrary';

/**
 * Property-based fuzzing derived from the OpenAPI document: for every operation of
 * docs/openapi.json, requests generated from its parameter and body schemas (valid values, values
 * at and past their bounds, wrong types, huge, deep and unicode values, NUL bytes, prototype keys,
 * a key twice) are sent with a key of a scope the operation names. Every answer must be documented
 * (the harness checks it against the document), below 500, and every 4xx a contract error body.
 * Good grants and reservations on another account are mixed into the stream and must be applied
 * exactly.
 *
 * Short form in `npm test` (FUZZ_OPENAPI_RUNS per operation, 8 by default); the long form:
 *   FUZZ_OPENAPI_RUNS=500 npx vitest run --project http test/http/openapi-fuzz.test.ts
 * A failure prints its seed (replay with FUZZ_OPENAPI_SEED=<seed>) and the request as a JSON line:
 * add that line to openapi-fuzz.regressions.json, which every run replays first (`{fuzzAccount}` in
 * its URL stands for the fuzzed account, which exists, so that a case can get past the lookup).
 */
const RUNS = Number(process.env.FUZZ_OPENAPI_RUNS ?? 8);
const SEED = process.env.FUZZ_OPENAPI_SEED === undefined ? undefined : Number(process.env.FUZZ_OPENAPI_SEED);

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

interface Operation {
  method: Method;
  template: string;
  operationId: string;
  scopes: string[];
  parameters: { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema: Schema }[];
  body?: Schema;
}

/** A request as sent, kept as a regression case when it fails. */
export interface FuzzRequest {
  operationId: string;
  method: Method;
  url: string;
  /** The scope of the key it is sent with; none for public operations. */
  scope?: string;
  headers: Record<string, string>;
  body?: string;
  /** Sent with a valid Stripe-Signature of its body, made when it is sent. */
  signed?: boolean;
  note?: string;
}

const doc = JSON.parse(readFileSync('docs/openapi.json', 'utf8')) as Schema;
const operations: Operation[] = Object.entries(doc.paths as Record<string, Record<string, Schema>>).flatMap(([template, methods]) =>
  Object.entries(methods).map(([method, op]) => ({
    method: method.toUpperCase() as Method,
    template,
    operationId: op.operationId as string,
    // A key of any scope will do where the document asks for none in particular (`bearer: []`).
    scopes: op.security?.length
      ? (op.security[0].bearer as string[]).length
        ? (op.security[0].bearer as string[])
        : ['control-plane']
      : [],
    parameters: op.parameters ?? [],
    body: op.requestBody?.content?.['application/json']?.schema,
  })),
);
const regressions = JSON.parse(readFileSync('test/http/openapi-fuzz.regressions.json', 'utf8')) as FuzzRequest[];

/** A value as it travels in a path, query or header: text as is, anything else as JSON. */
const asText = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));
/** A path segment: lone surrogates (which no URL can carry) become U+FFFD, everything else percent-encoded. */
const segment = (value: unknown): string =>
  encodeURIComponent(asText(value).replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'));
/** Header values are Latin-1 on the wire: other characters become `?`, lengths and junk stay. */
const headerText = (value: unknown): string => asText(value).replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');

type Edit =
  | { kind: 'valid' }
  | { kind: 'parameter'; which: number; value: unknown }
  | { kind: 'field'; which: number; value: unknown }
  | { kind: 'text'; pick: number }
  | { kind: 'body'; value: unknown };

describe('fuzzing every operation of the OpenAPI document', () => {
  const SECRET = 'whsec_openapi_fuzz_0123456789abcdef';
  let fake: StripeFake;
  let h: Harness;
  let ctx: SchemaContext;
  let fuzzAccount: string;
  let goodAccount: string;
  const keys = new Map<string, string>();
  const good = { grants: 0, reservations: 0 };

  beforeAll(async () => {
    // A database of its own: the fuzzer runs jobs, suspends accounts and revokes keys.
    fake = await new StripeFake().start();
    h = await startAppOnFreshDatabase('openapi_fuzz', {
      env: { ...fake.env(SECRET), STRIPE_TIMEOUT_MS: '1000', STRIPE_MAX_NETWORK_RETRIES: '1' },
    });
    const admin = await h.key('admin');
    keys.set('admin', admin);
    fuzzAccount = await fundedAccount(h, admin, { credits: '1000.000000', id: uid('fuzz') });
    goodAccount = await fundedAccount(h, admin, { credits: '1000.000000', id: uid('good') });
    // Ids that exist, so that valid requests get past the lookups; the good account is never among them.
    ctx = { doc, known: { id: [fuzzAccount], accountId: [fuzzAccount], environment: [SMALL.environment], variant: [SMALL.variant] } };
  });
  afterAll(async () => {
    await h?.close();
    await fake?.stop();
  });

  async function keyFor(scope: string | undefined): Promise<string | undefined> {
    if (scope === undefined) return undefined;
    const concrete = scope.replace('{id}', fuzzAccount);
    if (!keys.has(concrete)) keys.set(concrete, await h.key(concrete));
    return keys.get(concrete);
  }

  async function send(request: FuzzRequest): Promise<void> {
    const what = JSON.stringify(request).slice(0, 400);
    let res: { status: number; body: unknown };
    const headers = request.signed
      ? { ...request.headers, 'stripe-signature': StripeFake.sign(request.body ?? '', SECRET) }
      : request.headers;
    try {
      res = await h.request(request.method, request.url, {
        key: await keyFor(request.scope),
        headers,
        ...(request.body === undefined ? {} : { body: request.body }),
      });
    } catch (error) {
      throw new Error(`${(error as Error).message}\nregression case: ${JSON.stringify(request)}`, { cause: error });
    }
    try {
      expectContractAnswer(res, what);
    } catch (error) {
      throw new Error(`${(error as Error).message}\nregression case: ${JSON.stringify(request)}`, { cause: error });
    }
  }

  /** Good input mixed into the stream, alternately a grant of 1 credit and a 60-minute small reservation (1 credit held). */
  async function goodRequest(): Promise<void> {
    const admin = keys.get('admin')!;
    if ((good.grants + good.reservations) % 2 === 0) {
      const res = await h.request('POST', `/v1/admin/accounts/${goodAccount}/grants`, {
        key: admin,
        body: { credits: '1.000000', reason: 'good input' },
        headers: { 'idempotency-key': uid('good') },
      });
      expect(res.status).toBe(201);
      good.grants++;
    } else {
      const res = await h.request('POST', '/v1/reservations', {
        key: admin,
        body: { accountId: goodAccount, runtimeId: uid('rt_good'), ...SMALL, minutes: 60 },
      });
      expect(res.status).toBe(201);
      good.reservations++;
    }
  }

  function requestArbitrary(op: Operation): fc.Arbitrary<FuzzRequest> {
    const params = fc.record(Object.fromEntries(op.parameters.map((p) => [`${p.in}:${p.name}`, validValue(ctx, p.schema, p.name)])), {
      requiredKeys: op.parameters.filter((p) => p.in === 'path' || p.required).map((p) => `${p.in}:${p.name}`),
    });
    const body = op.body ? validValue(ctx, op.body) : fc.constant(undefined);
    const anyBad = (schema?: Schema) =>
      fc.oneof(
        hostileValue(),
        fc.constantFrom(...wrongTypes, undefined),
        ...(boundaryValues(ctx, schema).length ? [fc.constantFrom(...boundaryValues(ctx, schema))] : []),
      );
    const edits: fc.Arbitrary<Edit>[] = [fc.constant({ kind: 'valid' as const })];
    if (op.parameters.length) {
      edits.push(
        fc
          .nat(op.parameters.length - 1)
          .chain((which) => anyBad(op.parameters[which]!.schema).map((value) => ({ kind: 'parameter' as const, which, value }))),
      );
    }
    if (op.body) {
      edits.push(
        fc.record({ kind: fc.constant('field' as const), which: fc.nat(), value: anyBad() }),
        fc.record({ kind: fc.constant('text' as const), pick: fc.nat() }),
        fc.record({ kind: fc.constant('body' as const), value: hostileValue() }),
      );
    }
    // Webhook bodies are signed half of the time, so that what follows the signature check is fuzzed too.
    const signed = op.parameters.some((p) => p.name === 'stripe-signature') ? fc.boolean() : fc.constant(false);
    return fc
      .tuple(params, body, fc.oneof(...edits), op.scopes.length ? fc.constantFrom(...op.scopes) : fc.constant(undefined), signed)
      .map(([values, bodyValue, edit, scope, sign]) => {
        const v: Record<string, unknown> = { ...values };
        let b: unknown = bodyValue;
        let text: string | undefined;
        if (edit.kind === 'parameter') {
          const p = op.parameters[edit.which]!;
          v[`${p.in}:${p.name}`] = edit.value;
        } else if (edit.kind === 'field') {
          const paths = pathsOf(b);
          if (paths.length) b = withEdit(b, paths[edit.which % paths.length]!, edit.value);
        } else if (edit.kind === 'body') {
          b = edit.value;
        } else if (edit.kind === 'text') {
          const object = b && typeof b === 'object' && !Array.isArray(b) ? (b as Record<string, unknown>) : { value: b };
          text = fc.sample(hostileText(object), { numRuns: 1, seed: edit.pick })[0]!.text;
        }
        let url = op.template.replace(/\{(\w+)\}/g, (_, name: string) => segment(v[`path:${name}`]));
        const query = new URLSearchParams();
        const headers: Record<string, string> = {};
        for (const p of op.parameters) {
          const value = v[`${p.in}:${p.name}`];
          if (value === undefined || p.in === 'path') continue;
          if (p.in === 'query') query.append(p.name, asText(value));
          else headers[p.name] = headerText(value);
        }
        if (query.size) url += `?${query.toString()}`;
        const request: FuzzRequest = { operationId: op.operationId, method: op.method, url, headers, note: edit.kind };
        if (scope !== undefined) request.scope = scope;
        if (op.body) request.body = text ?? JSON.stringify(b) ?? '';
        if (sign) request.signed = true;
        return request;
      });
  }

  it('replays the regression cases kept from earlier failures', async () => {
    for (const request of regressions) await send({ ...request, url: request.url.replace('{fuzzAccount}', fuzzAccount) });
  });

  it.each(operations.map((op) => [`${op.method} ${op.template} (${op.operationId})`, op] as const))(
    '%s: no 5xx, every answer documented, every 4xx a contract error; good input mixed in applied',
    async (_, op) => {
      expect(resolve(ctx, op.body ?? {})).toBeDefined();
      await fc.assert(
        fc.asyncProperty(requestArbitrary(op), async (request) => {
          await send(request);
          await goodRequest();
        }),
        { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
      );
    },
    300_000,
  );

  it('applied every good grant and reservation exactly, whatever came between them', async () => {
    expect(good.grants + good.reservations).toBeGreaterThanOrEqual(operations.length * RUNS);
    const wallet = await h.request('GET', `/v1/accounts/${goodAccount}/wallet`, { key: keys.get('admin') });
    expect(wallet.status).toBe(200);
    expect(wallet.body).toMatchObject({
      total: `${1000 + good.grants}.000000`,
      held: `${good.reservations}.000000`,
      available: `${1000 + good.grants - good.reservations}.000000`,
    });
    const [{ n }] = await h.ds.query(`SELECT count(*)::int AS n FROM runtimes WHERE account_id = $1`, [goodAccount]);
    expect(n).toBe(good.reservations);
  });
});
