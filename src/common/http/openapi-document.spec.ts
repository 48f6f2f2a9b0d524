import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ResponseChecker } from '../../../test/support/openapi-check';
// Loading the app module loads every controller, and with them their @Doc entries.
import '../../app.module';
import { buildOpenApiDocument } from './openapi-document';
import { RECORDED_EXAMPLES } from './openapi-examples';

const REGENERATE = 'run `npm run openapi` after changing a route or a schema';

describe('the OpenAPI document', () => {
  const doc = JSON.parse(JSON.stringify(buildOpenApiDocument(RECORDED_EXAMPLES))) as {
    paths: Record<string, Record<string, { operationId: string; tags: string[] }>>;
  };

  it(`is the checked-in docs/openapi.json (${REGENERATE})`, () => {
    expect(JSON.parse(readFileSync('docs/openapi.json', 'utf8')), REGENERATE).toEqual(doc);
  });

  it(`is what the typed client was generated from (${REGENERATE})`, async () => {
    const generator = '../../../scripts/openapi-client.mjs';
    const { clientTypes } = (await import(generator)) as { clientTypes: (doc: unknown) => Promise<string> };
    expect(readFileSync('clients/typescript/src/schema.ts', 'utf8'), REGENERATE).toBe(await clientTypes(doc));
  }, 60_000);

  it('holds the examples recorded from a test run to the schemas as they are now (record them again when they drift)', () => {
    const checker = new ResponseChecker(doc as unknown as ConstructorParameters<typeof ResponseChecker>[0]);
    const keys = Object.keys(RECORDED_EXAMPLES);
    for (const key of keys) checker.checkExample(key, RECORDED_EXAMPLES[key]);
    expect(() => checker.checkExample('getWallet 200', { ...(RECORDED_EXAMPLES['getWallet 200'] as object), extra: 1 })).toThrow(
      /additional properties/,
    );
    // Nested objects are closed too: a report row with a column its report does not have.
    const usage = RECORDED_EXAMPLES['usageReport 200'] as { columns: string[]; items: object[] };
    expect(() => checker.checkExample('usageReport 200', { ...usage, items: [{ ...usage.items[0], gpuSeconds: 1 }] })).toThrow(
      /\/items\/0 must NOT have additional properties \(gpuSeconds\)/,
    );
    // The operations a control plane calls most have a real example of their success, and of the
    // errors it must handle: findings, and the detail fields of credits, a spend limit and a quota.
    for (const key of [
      'createReservation 201',
      'getReservation 200',
      'postEvents 200',
      'getWallet 200',
      'getLedger 200',
      'upsertAccount 201',
      'usageReport 200',
      'createReservation 400 DL_BILLING_REQUEST_INVALID',
      'createReservation 402 DL_BILLING_INSUFFICIENT_CREDITS',
      'createReservation 402 DL_BILLING_SPEND_LIMIT_REACHED',
      'createReservation 429 DL_BILLING_QUOTA_EXCEEDED',
    ]) {
      expect(keys).toContain(key);
    }
    // An error example is shown under its status, named by its code.
    const reservations = doc.paths['/v1/reservations'] as any;
    const spendLimit = reservations.post.responses['402'].content['application/json'].examples.DL_BILLING_SPEND_LIMIT_REACHED.value;
    expect(Object.keys(spendLimit.error)).toEqual(expect.arrayContaining(['code', 'remaining', 'resetsAt']));
    // A list of plain values is shown whole: a report's columns name every key of its items.
    for (const item of usage.items) expect(Object.keys(item)).toEqual(usage.columns);
  }, 60_000);

  it('gives every operation a unique id and one tag, and leaves the HTML admin pages out', () => {
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.values(methods).map((o) => ({ path, ...o })));
    expect(operations.length).toBeGreaterThan(30);
    expect(new Set(operations.map((o) => o.operationId)).size).toBe(operations.length);
    for (const o of operations) expect(o.tags).toHaveLength(1);
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/admin') || p.startsWith('/docs'))).toEqual([]);
  });
});
