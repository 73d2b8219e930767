/** AccessCache's usage entries (ADR 0026); its grants, features and customers are in access-cache.test.ts. */
import type { ConsumingState } from '@billstream/bus';
import { AccessCache } from './access-cache';
import { USAGE_LATE_HOLD_MS, USAGE_REFRESH_GRACE_MS, USAGE_TTL_MS, USAGE_TTL_NOTIFIED_MS } from './access-cache-timing';

const flush = () => new Promise((r) => setImmediate(r));

const scope = { tenantId: 't', environmentId: 'e' };
const other = { tenantId: 't', environmentId: 'sandbox' };

describe('AccessCache: usage', () => {
  let now = 0;
  let cache: AccessCache;
  let loads = 0;
  const load = (value: string) => async () => {
    loads += 1;
    return value;
  };
  beforeEach(() => {
    now = 1_000_000;
    loads = 0;
    // Every entry's refresh point at REFRESH_AHEAD_TO of its lifetime, unless a test says otherwise;
    // background reloads go out at once (gathering has a test of its own).
    cache = new AccessCache({ now: () => now, random: () => 1, refreshGatherMs: 0, sweepMs: 0 });
  });

  describe('usage (ADR 0026)', () => {
    let state: ConsumingState;
    const usage = (customer: string, value: string) => cache.getUsage(scope, customer, 'meter|from|to', load(value));
    beforeEach(() => {
      state = { consuming: true, session: 1 };
    });

    it('without usage notices: kept 1 s', async () => {
      expect(cache.usageTtlMs()).toBe(USAGE_TTL_MS);
      expect(await usage('x', 'a')).toBe('a');
      now += USAGE_TTL_MS - 1;
      expect(await usage('x', 'b')).toBe('a');
      now += 1;
      expect(await usage('x', 'c')).toBe('c');
    });

    it('while notices are heard: kept long, and a notice of the customer reads its usage anew, only its', async () => {
      cache.hearUsage(() => state);
      expect(cache.usageTtlMs()).toBe(USAGE_TTL_NOTIFIED_MS);
      const source: Record<string, string> = { x: 'x1', y: 'y1' };
      const read = (c: string, s = scope) =>
        cache.getUsage(s, c, 'meter|from|to', async () => {
          loads += 1;
          return source[c];
        });
      expect([await read('x'), await read('y')]).toEqual(['x1', 'y1']);
      source.x = 'x2';
      source.y = 'y2';
      now += USAGE_TTL_NOTIFIED_MS - 1;
      expect([await read('x'), await read('y')]).toEqual(['x1', 'y1']);
      expect(loads).toBe(2);
      cache.usageRecorded(scope, 'x');
      // Read again at once (refresh ahead), before any check asks.
      expect(loads).toBe(3);
      await flush();
      expect([await read('x'), await read('y')]).toEqual(['x2', 'y1']);
      expect(loads).toBe(3);
      // The same external id in another environment is another customer.
      await cache.getUsage(other, 'y', 'meter|from|to', load('o1'));
      cache.usageRecorded(other, 'y');
      await flush();
      expect(await read('y')).toBe('y1');
      now += 1;
      expect(await read('y')).toBe('y2');
    });

    it('a notice reads again with the read that filled the entry: a hit does not keep its own read (its closure would live in the entry)', async () => {
      cache.hearUsage(() => state);
      const reads: string[] = [];
      const read = (by: string) =>
        cache.getUsage(scope, 'x', 'meter|from|to', async () => {
          reads.push(by);
          return `v${reads.length}`;
        });
      expect(await read('first')).toBe('v1');
      expect(await read('second')).toBe('v1');
      expect(await read('third')).toBe('v1');
      cache.usageRecorded(scope, 'x');
      await flush();
      expect(reads).toEqual(['first', 'first']);
      expect(await read('fourth')).toBe('v2');
    });

    it('while the notice\'s read is out, a check gets the value it made old, for at most the grace; then it waits for the read', async () => {
      cache.hearUsage(() => state);
      let release: (v: string) => void = () => undefined;
      let reads = 0;
      const slow = () =>
        cache.getUsage(scope, 'x', 'k', () => {
          reads += 1;
          return new Promise<string>((r) => (release = r));
        });
      const first = slow();
      release('v1');
      expect(await first).toBe('v1');
      cache.usageRecorded(scope, 'x');
      expect(reads).toBe(2);
      expect(await slow()).toBe('v1');
      now += USAGE_REFRESH_GRACE_MS - 1;
      expect(await slow()).toBe('v1');
      now += 1;
      const waiting = slow();
      expect(reads).toBe(2);
      release('v2');
      expect(await waiting).toBe('v2');
      expect(await slow()).toBe('v2');
      expect(reads).toBe(2);
    });

    it('a reset during the notice\'s read leaves no old value to serve', async () => {
      cache.hearUsage(() => state);
      await usage('x', 'x1');
      let release: (v: string) => void = () => undefined;
      // Served from the cache; the notice reads again the way this check would have (slowly).
      expect(await cache.getUsage(scope, 'x', 'meter|from|to', () => new Promise<string>((r) => (release = r)))).toBe('x1');
      cache.usageRecorded(scope, 'x');
      cache.forgetUsage();
      expect(await usage('x', 'x2')).toBe('x2');
      release('late');
    });

    it('usage no check asked for within the notified lifetime is dropped by a notice, not read again', async () => {
      cache.hearUsage(() => state);
      await usage('x', 'x1');
      now += USAGE_TTL_NOTIFIED_MS;
      cache.usageRecorded(scope, 'x');
      expect(loads).toBe(1);
      expect(await usage('x', 'x2')).toBe('x2');
      expect(loads).toBe(2);
    });

    it('a load that began before the notice is not kept', async () => {
      cache.hearUsage(() => state);
      let release!: (v: string) => void;
      const slow = cache.getUsage(scope, 'x', 'k', () => new Promise<string>((r) => (release = r)));
      cache.usageRecorded(scope, 'x');
      release('old');
      expect(await slow).toBe('old');
      expect(await cache.getUsage(scope, 'x', 'k', load('new'))).toBe('new');
    });

    it('while the consumer is not consuming: 1 s; a new session (rejoined, or fetching after a gap) forgets all usage', async () => {
      cache.hearUsage(() => state);
      await usage('x', 'x1');
      state = { consuming: false, session: 1 };
      expect(cache.usageTtlMs()).toBe(USAGE_TTL_MS);
      now += USAGE_TTL_MS;
      expect(await usage('x', 'x2')).toBe('x2');
      // Consuming again in the same session (a short pause): long again, nothing missed.
      state = { consuming: true, session: 1 };
      now += 5000;
      expect(await usage('x', 'x3')).toBe('x2');
      // A new session: notices may have been missed in between, even if nobody asked meanwhile.
      state = { consuming: true, session: 2 };
      expect(await usage('x', 'x4')).toBe('x4');
      expect(await usage('x', 'x5')).toBe('x4');
    });

    it('a reset forgets all usage; a late notice also keeps usage 1 s for a while', async () => {
      cache.hearUsage(() => state);
      await usage('x', 'x1');
      cache.forgetUsage();
      expect(await usage('x', 'x2')).toBe('x2');
      expect(cache.usageTtlMs()).toBe(USAGE_TTL_NOTIFIED_MS);
      cache.forgetUsage(true);
      expect(await usage('x', 'x3')).toBe('x3');
      expect(cache.usageTtlMs()).toBe(USAGE_TTL_MS);
      now += USAGE_LATE_HOLD_MS;
      expect(cache.usageTtlMs()).toBe(USAGE_TTL_NOTIFIED_MS);
    });

    it('grants and features are not touched by usage notices', async () => {
      cache.hearUsage(() => state);
      await cache.get(scope, 'c1', 'grants', 1000, load('g1'));
      cache.usageRecorded(scope, 'x');
      cache.forgetUsage(true);
      expect(await cache.get(scope, 'c1', 'grants', 1000, load('g2'))).toBe('g1');
    });
  });
});
