import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { fixKafkajsRequestQueue, PATCHED_KAFKAJS_VERSION } from './request-queue-fix';

const require = createRequire(join(process.cwd(), 'package.json'));

interface Queue {
  pending: unknown[];
  inflight: Map<number, unknown>;
  throttleCheckTimeoutId: unknown;
  push(request: { entry: { correlationId: number }; expectResponse: boolean; sendRequest: () => void }): void;
  fulfillRequest(response: { correlationId: number; payload: Buffer; size: number }): void;
  maybeThrottle(ms: number): void;
}

/** kafkajs' own request queue, as a broker connection builds it. */
function queue(maxInFlightRequests: number | null = null): Queue {
  const RequestQueue = require('kafkajs/src/network/requestQueue') as new (options: object) => Queue;
  const logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
  return new RequestQueue({
    maxInFlightRequests,
    requestTimeout: 30_000,
    enforceRequestTimeout: false,
    clientId: 't',
    broker: 'b',
    logger,
  });
}

function request(correlationId: number, sent: number[]) {
  const entry = { correlationId, resolve: () => {}, reject: () => {} };
  return { entry, expectResponse: true, sendRequest: () => sent.push(correlationId) };
}

const response = (correlationId: number) => ({ correlationId, payload: Buffer.alloc(0), size: 0 });

describe('the fix of kafkajs request queue timer', () => {
  beforeAll(() => {
    expect(fixKafkajsRequestQueue()).toEqual({ applied: true });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is written for the installed kafkajs: an upgrade fails here, to be checked against the new code', () => {
    expect((require('kafkajs/package.json') as { version: string }).version).toBe(PATCHED_KAFKAJS_VERSION);
  });

  it('is applied once, whatever the number of calls', () => {
    const proto = (require('kafkajs/src/network/requestQueue') as { prototype: { scheduleCheckPendingRequests: unknown } }).prototype;
    const patched = proto.scheduleCheckPendingRequests;
    expect(fixKafkajsRequestQueue()).toEqual({ applied: true });
    expect(proto.scheduleCheckPendingRequests).toBe(patched);
  });

  it('arms no timer once a response leaves nothing waiting (kafkajs re-armed a 1-ms one for ever)', () => {
    const q = queue();
    const sent: number[] = [];
    q.push(request(1, sent));
    q.fulfillRequest(response(1));
    expect(sent).toEqual([1]);
    expect(q.throttleCheckTimeoutId).toBeNull();
  });

  it('still sends a request that waited for an in-flight slot, when the response frees it', () => {
    const q = queue(1);
    const sent: number[] = [];
    q.push(request(1, sent));
    q.push(request(2, sent));
    expect(sent).toEqual([1]);
    expect(q.pending).toHaveLength(1);
    q.fulfillRequest(response(1));
    expect(sent).toEqual([1, 2]);
    expect(q.pending).toHaveLength(0);
  });

  it('still sends a request held back by the broker throttling, once the throttle is over', () => {
    vi.useFakeTimers();
    const q = queue();
    const sent: number[] = [];
    q.maybeThrottle(500);
    q.push(request(1, sent));
    expect(sent).toEqual([]);
    expect(q.throttleCheckTimeoutId).not.toBeNull();
    vi.advanceTimersByTime(499);
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(2);
    expect(sent).toEqual([1]);
  });
});
