import { PATCHED_KAFKAJS_VERSION, patchKafkajsRequestQueue } from './request-queue-patch';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as new (options: object) => {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  destroy(): void;
};

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const made: Array<InstanceType<typeof RequestQueue>> = [];
const queue = () => {
  const q = new RequestQueue({ maxInFlightRequests: null, requestTimeout: 1000, enforceRequestTimeout: false, clientId: 'c', broker: 'b', logger: silent });
  made.push(q);
  return q;
};

/** ADR 0030: kafkajs 2.2.4's request queue no longer spins on a 1 ms timer when it has nothing to do. */
describe('kafkajs request queue patch (ADR 0030)', () => {
  beforeAll(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    expect((require('kafkajs/package.json') as { version: string }).version).toBe(PATCHED_KAFKAJS_VERSION);
    expect(['patched', 'already patched']).toContain(patchKafkajsRequestQueue());
    expect(patchKafkajsRequestQueue()).toBe('already patched');
  });

  // Unpatched, a queue's timer re-arms itself for good: stop each one, or the run never ends.
  afterEach(() => made.splice(0).forEach((q) => q.destroy()));

  it('schedules no check when nothing is pending and nothing is throttled', () => {
    const q = queue();
    q.checkPendingRequests();
    expect(q.throttleCheckTimeoutId).toBeNull();
  });

  it('still checks a throttled queue when the throttle ends, pending requests or not', async () => {
    const q = queue();
    const sent: string[] = [];
    q.throttledUntil = Date.now() + 30;
    q.pending.push({ send: () => sent.push('a'), expectResponse: true, correlationId: 1 });
    q.checkPendingRequests();
    expect(sent).toEqual([]);
    expect(q.throttleCheckTimeoutId).not.toBeNull();
    await new Promise((r) => setTimeout(r, 80));
    expect(sent).toEqual(['a']);
    // Sent and nothing left: no further timer.
    expect(q.throttleCheckTimeoutId).toBeNull();
  });

  it('checks a pending request that could not go out at once after the 10 ms floor (tulios/kafkajs#1532)', async () => {
    const q = queue();
    const sent: string[] = [];
    q.throttledUntil = Date.now() - 1;
    // As when the request was queued behind a throttle that has just ended.
    q.pending.push({ send: () => sent.push('b'), expectResponse: true, correlationId: 2 });
    (q as unknown as { scheduleCheckPendingRequests(): void }).scheduleCheckPendingRequests();
    expect(q.throttleCheckTimeoutId).not.toBeNull();
    await new Promise((r) => setTimeout(r, 40));
    expect(sent).toEqual(['b']);
    expect(q.throttleCheckTimeoutId).toBeNull();
  });
});
