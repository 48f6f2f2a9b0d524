import { expect } from 'vitest';
import type { Harness } from './app';

/** The body of an answer, once its status is the one expected (the body is in the failure's message). */
export async function ok(res: Promise<{ status: number; body: any }>, status = 200): Promise<any> {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
}

/** Posts lifecycle or usage events as one batch with `key` (control-plane); the answer's body. */
export function events(h: Harness, key: string, ...batch: unknown[]): Promise<any> {
  return ok(h.request('POST', '/v1/events', { key, body: batch }));
}
