/**
 * A fix of kafkajs 2.2.4 (unmaintained since 2023), applied to its request queue's prototype because
 * no public option reaches it. After a broker connection's first response, its request queue checks
 * for pending requests on a timer that re-arms itself whatever is pending, with a delay of
 * `-1 - Date.now()` that Node treats as 1 ms: every connection wakes the process about a thousand
 * times a second for as long as it lives, idle or not, and Node 24 warns about the negative delay
 * (kafkajs issues #1704 and #1751; the fix is the one proposed upstream in #1768's review). With it,
 * a check is armed only when a request waits or the broker throttles; a new request or a response
 * checks again, as before.
 *
 * Private code of a dependency: the version is pinned here and checked (a different one is left
 * unpatched and says so), and request-queue-fix.spec.ts tests the behaviour against the library's
 * own queue, so that an upgrade fails loudly instead of silently.
 */
import { dependencyRequire } from 'src/common/dependency-require';

export const PATCHED_KAFKAJS_VERSION = '2.2.4';

interface RequestQueueLike {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: unknown;
  scheduleCheckPendingRequests(): void;
}

const PATCHED = Symbol.for('dl-billing.kafkajs.request-queue-fix');

/**
 * Patches kafkajs' RequestQueue once; returns whether the fix is in place (false, with the reason,
 * when the installed kafkajs is not the version it was written for).
 */
export function fixKafkajsRequestQueue(): { applied: boolean; reason?: string } {
  const require = dependencyRequire();
  const version = (require('kafkajs/package.json') as { version: string }).version;
  if (version !== PATCHED_KAFKAJS_VERSION) {
    return { applied: false, reason: `kafkajs ${version} is not ${PATCHED_KAFKAJS_VERSION}: its request queue is left as it is` };
  }
  const RequestQueue = require('kafkajs/src/network/requestQueue') as { prototype: RequestQueueLike & { [PATCHED]?: true } };
  const proto = RequestQueue.prototype;
  if (proto[PATCHED]) return { applied: true };
  const original = proto.scheduleCheckPendingRequests;
  if (typeof original !== 'function') return { applied: false, reason: 'kafkajs has no RequestQueue.scheduleCheckPendingRequests' };
  proto.scheduleCheckPendingRequests = function (this: RequestQueueLike): void {
    // Nothing waits and nothing throttles: no check to arm.
    if (this.pending.length === 0 && !(this.throttledUntil > Date.now())) return;
    original.call(this);
  };
  proto[PATCHED] = true;
  return { applied: true };
}
