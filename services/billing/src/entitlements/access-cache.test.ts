import { AccessCache } from './access-cache';

const scope = { tenantId: 't', environmentId: 'e' };
const other = { tenantId: 't', environmentId: 'sandbox' };

describe('AccessCache', () => {
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
    cache = new AccessCache(() => now);
  });

  it('serves a value until it is ttl old, then loads it again', async () => {
    expect(await cache.get(scope, 'c1', 'grants', 1000, load('a'))).toBe('a');
    now += 999;
    expect(await cache.get(scope, 'c1', 'grants', 1000, load('b'))).toBe('a');
    now += 1;
    expect(await cache.get(scope, 'c1', 'grants', 1000, load('c'))).toBe('c');
    expect(loads).toBe(2);
  });

  it('a change of a feature or entitlement drops every value of its tenant and environment, only those', async () => {
    await cache.get(scope, 'c1', 'grants', 1000, load('a'));
    await cache.get(scope, null, 'feature|x', 1000, load('f'));
    await cache.get(other, 'c1', 'grants', 1000, load('o'));
    cache.scopeChanged(scope);
    expect(await cache.get(scope, 'c1', 'grants', 1000, load('a2'))).toBe('a2');
    expect(await cache.get(scope, null, 'feature|x', 1000, load('f2'))).toBe('f2');
    expect(await cache.get(other, 'c1', 'grants', 1000, load('o2'))).toBe('o');
  });

  it("a subscription change drops that customer's grants only", async () => {
    await cache.get(scope, 'c1', 'grants', 1000, load('a'));
    await cache.get(scope, 'c2', 'grants', 1000, load('b'));
    cache.customerChanged(scope, 'c1');
    expect(await cache.get(scope, 'c1', 'grants', 1000, load('a2'))).toBe('a2');
    expect(await cache.get(scope, 'c2', 'grants', 1000, load('b2'))).toBe('b');
  });

  it('does not keep a value whose load began before a change (it may hold the old rows)', async () => {
    let release!: (v: string) => void;
    const slow = cache.get(scope, 'c1', 'grants', 1000, () => new Promise<string>((r) => (release = r)));
    cache.customerChanged(scope, 'c1');
    release('old');
    expect(await slow).toBe('old');
    expect(await cache.get(scope, 'c1', 'grants', 1000, load('new'))).toBe('new');
  });

  it('forgets the customer again when the writing transaction ends, committed or rolled back', async () => {
    for (const outcome of ['commit', 'rollback'] as const) {
      let end!: () => void;
      const executionPromise = new Promise<void>((resolve, reject) => (end = outcome === 'commit' ? resolve : () => reject(new Error('rolled back'))));
      const trx = { executionPromise } as unknown as Parameters<AccessCache['customerChangedAfter']>[0];
      cache.customerChangedAfter(trx, scope, 'c1');
      await cache.get(scope, 'c1', 'grants', 1000, load(`during-${outcome}`));
      end();
      await executionPromise.catch(() => undefined);
      await Promise.resolve();
      expect(await cache.get(scope, 'c1', 'grants', 1000, load(`after-${outcome}`))).toBe(`after-${outcome}`);
    }
  });

  it('concurrent reads of one key share one load; a read after a change loads anew', async () => {
    let release!: (v: string) => void;
    const slow = () => {
      loads += 1;
      return new Promise<string>((r) => (release = r));
    };
    const first = cache.get(scope, 'c1', 'grants', 1000, slow);
    const second = cache.get(scope, 'c1', 'grants', 1000, slow);
    expect(loads).toBe(1);
    cache.customerChanged(scope, 'c1');
    const third = cache.get(scope, 'c1', 'grants', 1000, load('fresh'));
    expect(loads).toBe(2);
    release('old');
    expect([await first, await second, await third]).toEqual(['old', 'old', 'fresh']);
  });

  it('a failed load is not kept and does not block the next one', async () => {
    await expect(cache.get(scope, 'c1', 'grants', 1000, () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await cache.get(scope, 'c1', 'grants', 1000, load('up'))).toBe('up');
  });
});
