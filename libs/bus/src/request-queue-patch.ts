/**
 * kafkajs 2.2.4 (its last release) wakes every process that uses it about 1,000 times a second
 * while it has nothing to do (tulios/kafkajs#1556, open; ADR 0030).
 *
 * Each broker connection has a `RequestQueue`. After every response,
 * `checkPendingRequests` calls `scheduleCheckPendingRequests`. That arms a timer for
 * `throttledUntil - Date.now()` ms even when no request is pending and nothing is throttled.
 * `throttledUntil` is -1 then, so the delay is negative, which node runs as 1 ms. The timer
 * calls `checkPendingRequests` again, so every connection spins on a 1 ms timer for the life
 * of the process.
 *
 * Measured here: an idle billing process made ~8,300 such `setTimeout` calls and ~1,500
 * event-loop wakeups a second, and spent ~0.07 cores doing nothing. Every service's requests
 * also queued behind those timers.
 *
 * The patch keeps kafkajs's own method and changes one case. When nothing is pending and the
 * queue is not throttled, no check is scheduled. Nothing can be waiting then, and a request
 * pushed later schedules its own check (`push`). A response or timeout checks the queue
 * anyway. Pending requests and throttling are scheduled exactly as before, including the
 * 10 ms floor of tulios/kafkajs#1532.
 */

/** The shape of kafkajs's private RequestQueue that the patch reads. */
interface RequestQueueLike {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: unknown;
}

type Schedule = (this: RequestQueueLike) => void;

const PATCHED = Symbol.for('billstream.kafkajsRequestQueuePatched');
/** The kafkajs version whose RequestQueue this patch was written against. */
export const PATCHED_KAFKAJS_VERSION = '2.2.4';

export type PatchOutcome = 'patched' | 'already patched' | 'not applied';

/** The private class, or undefined where kafkajs is not the version this was written for. */
function requestQueueClass(): { prototype: { scheduleCheckPendingRequests: Schedule } & Record<symbol, unknown> } | undefined {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const version = (require('kafkajs/package.json') as { version: string }).version;
  if (version !== PATCHED_KAFKAJS_VERSION) return undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('kafkajs/src/network/requestQueue/index.js');
}

/**
 * Applies the patch once per process (idempotent). Returns 'not applied' when kafkajs is not
 * the 2.2.4 the patch was written against. The caller then says so: the patch is then
 * needless or wrong, and must be reviewed.
 */
export function patchKafkajsRequestQueue(): PatchOutcome {
  const RequestQueue = requestQueueClass();
  if (!RequestQueue) return 'not applied';
  const proto = RequestQueue.prototype;
  if (proto[PATCHED]) return 'already patched';
  const original = proto.scheduleCheckPendingRequests;
  proto.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueueLike) {
    if (this.pending.length === 0 && this.throttledUntil <= Date.now()) return;
    original.call(this);
  };
  proto[PATCHED] = true;
  return 'patched';
}
