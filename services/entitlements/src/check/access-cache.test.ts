/** AccessCache's grants, features and customers; its usage entries are in access-cache-usage.test.ts. */
import { AccessCache } from './access-cache';
import { REFRESH_AHEAD_FROM, REFRESH_GATHER_MS, REFRESH_AHEAD_TO, REFRESH_SWEEP_MS } from './access-cache-timing';

const flush = () => new Promise((r) => setImmediate(r));

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
    // Every entry's refresh point at REFRESH_AHEAD_TO of its lifetime, unless a test says otherwise;
    // background reloads go out at once (gathering has a test of its own).
    cache = new AccessCache({ now: () => now, random: () => 1, refreshGatherMs: 0, sweepMs: 0 });
  });

  it('serves a value until it is ttl old, then loads it again', async () => {
    expect(await cache.get(scope, 'c1', 'grants', 1000, load('a'))).toBe('a');
    now += 1000 * REFRESH_AHEAD_TO - 1;
    expect(await cache.get(scope, 'c1', 'grants', 1000, load('b'))).toBe('a');
    now += 1000 - 1000 * REFRESH_AHEAD_TO + 1;
    expect(await cache.get(scope, 'c1', 'grants', 1000, load('c'))).toBe('c');
    expect(loads).toBe(2);
  });

  describe('refresh ahead', () => {
    const slowLoad = () => {
      let release!: (v: string) => void;
      let fail!: (e: Error) => void;
      const fn = () => {
        loads += 1;
        return new Promise<string>((resolve, reject) => {
          release = resolve;
          fail = reject;
        });
      };
      return { fn, release: (v: string) => release(v), fail: (e: Error) => fail(e) };
    };

    it('a hit past its refresh point is answered at once and reads the value again in the background, once', async () => {
      await cache.get(scope, 'c1', 'grants', 1000, load('a'));
      now += 1000 * REFRESH_AHEAD_TO;
      const reload = slowLoad();
      expect(await cache.get(scope, 'c1', 'grants', 1000, reload.fn)).toBe('a');
      expect(await cache.get(scope, 'c1', 'grants', 1000, reload.fn)).toBe('a');
      expect(loads).toBe(2);
      reload.release('b');
      await flush();
      // Kept from the reload's start: the refresh point again REFRESH_AHEAD_TO later.
      now += 1000 * REFRESH_AHEAD_TO - 1;
      expect(await cache.get(scope, 'c1', 'grants', 1000, load('never'))).toBe('b');
      expect(loads).toBe(2);
    });

    it('spreads the refresh points of entries loaded together over REFRESH_AHEAD_FROM..TO of the lifetime', async () => {
      const draws = [0, 0.5, 1];
      cache = new AccessCache({ now: () => now, random: () => draws.shift() ?? 1, refreshGatherMs: 0, sweepMs: 0 });
      for (const c of ['c0', 'c5', 'c1']) await cache.get(scope, c, 'grants', 1000, load('a'));
      const reloadedAt = async (ms: number) => {
        now = 1_000_000 + ms;
        const before = loads;
        for (const c of ['c0', 'c5', 'c1']) await cache.get(scope, c, 'grants', 1000, load('b'));
        return loads - before;
      };
      expect(await reloadedAt(1000 * REFRESH_AHEAD_FROM - 1)).toBe(0);
      expect(await reloadedAt(1000 * REFRESH_AHEAD_FROM)).toBe(1);
      expect(await reloadedAt(1000 * ((REFRESH_AHEAD_FROM + REFRESH_AHEAD_TO) / 2) + 1)).toBe(1);
      expect(await reloadedAt(1000 * REFRESH_AHEAD_TO)).toBe(1);
    });

    it('background reloads due within REFRESH_GATHER_MS go out together, as of when they were due', async () => {
      expect(REFRESH_GATHER_MS).toBeGreaterThan(0);
      cache = new AccessCache({ now: () => now, random: () => 1, refreshGatherMs: 40, sweepMs: 0 });
      for (const c of ['c1', 'c2']) await cache.get(scope, c, 'grants', 1000, load('a'));
      await cache.getCustomer(scope, 'ext|x1', async () => ({ id: 'c3', tag: 'a' }));
      now += 1000 * REFRESH_AHEAD_TO;
      const started: string[] = [];
      const reload = (c: string) => async () => {
        started.push(c);
        return 'b';
      };
      expect(await cache.get(scope, 'c1', 'grants', 1000, reload('c1'))).toBe('a');
      await new Promise((r) => setTimeout(r, 10));
      expect(await cache.get(scope, 'c2', 'grants', 1000, reload('c2'))).toBe('a');
      const ttl = cache.grantsTtlMs();
      now = 1_000_000 + ttl * REFRESH_AHEAD_TO;
      expect((await cache.getCustomer(scope, 'ext|x1', async () => (started.push('x1'), { id: 'c3', tag: 'b' }))).tag).toBe('a');
      expect(started).toEqual([]);
      now = 1_000_000 + 1000 * REFRESH_AHEAD_TO + 30;
      await new Promise((r) => setTimeout(r, 60));
      // All three in one turn of the event loop: one batch per loader.
      expect(started).toEqual(['c1', 'c2', 'x1']);
      // Kept as of when they were due (before the read), not of when the read went out 30 ms later.
      now = 1_000_000 + 1000 * REFRESH_AHEAD_TO + 1000 * REFRESH_AHEAD_TO - 1;
      expect(await cache.get(scope, 'c1', 'grants', 1000, load('never'))).toBe('b');
      now = 1_000_000 + 1000 * REFRESH_AHEAD_TO + 1000;
      expect(await cache.get(scope, 'c1', 'grants', 1000, load('c'))).toBe('c');
    });

    it('a failed reload leaves the value until its lifetime ends; then a check reads for itself', async () => {
      await cache.get(scope, 'c1', 'grants', 1000, load('a'));
      now += 1000 * REFRESH_AHEAD_TO;
      const reload = slowLoad();
      expect(await cache.get(scope, 'c1', 'grants', 1000, reload.fn)).toBe('a');
      reload.fail(new Error('down'));
      await flush();
      expect(await cache.get(scope, 'c1', 'grants', 1000, load('b'))).toBe('a');
      now = 1_000_000 + 1000;
      expect(await cache.get(scope, 'c1', 'grants', 1000, load('c'))).toBe('c');
    });

    it('a reload that began before a change is not kept, and the change is served at once', async () => {
      await cache.get(scope, 'c1', 'grants', 1000, load('a'));
      now += 1000 * REFRESH_AHEAD_TO;
      const reload = slowLoad();
      expect(await cache.get(scope, 'c1', 'grants', 1000, reload.fn)).toBe('a');
      cache.customerChanged(scope, 'c1');
      expect(await cache.get(scope, 'c1', 'grants', 1000, load('new'))).toBe('new');
      reload.release('old');
      await flush();
      expect(await cache.get(scope, 'c1', 'grants', 1000, load('never'))).toBe('new');
    });

    describe('the sweep (refreshDue)', () => {
      // Past an entry's refresh point (REFRESH_AHEAD_TO with the draw of 1) and its sweep slot.
      const pastRefresh = (ttl: number) => 1_000_000 + ttl * REFRESH_AHEAD_TO + REFRESH_SWEEP_MS;

      it('reads an entry a check used again at its refresh point, though no check comes after that point', async () => {
        await cache.get(scope, 'c1', 'grants', 1000, load('a'));
        await cache.get(scope, 'c1', 'grants', 1000, load('never'));
        now = pastRefresh(1000) - REFRESH_SWEEP_MS - 1;
        cache.refreshDue();
        expect(loads).toBe(1);
        now = pastRefresh(1000);
        // The read that filled the entry reads it again: no check's closure is needed.
        cache.refreshDue();
        await flush();
        expect(loads).toBe(2);
        // Kept as of its refresh point: served past the first value's end without a read.
        now = 1_000_000 + 1000 + 1;
        expect(await cache.get(scope, 'c1', 'grants', 1000, load('never'))).toBe('a');
        expect(loads).toBe(2);
        now = 1_000_000 + 1000 * REFRESH_AHEAD_TO + 1000;
        expect(await cache.get(scope, 'c1', 'grants', 1000, load('b'))).toBe('b');
        expect(loads).toBe(3);
      });

      it("a check's own read counts as a use; a value no check used since a background reload is left to end", async () => {
        await cache.get(scope, 'c1', 'grants', 1000, load('a'));
        now = pastRefresh(1000);
        cache.refreshDue();
        await flush();
        expect(loads).toBe(2);
        // Nobody used the reloaded value: its refresh point passes without a read.
        now += 1000;
        cache.refreshDue();
        await flush();
        expect(loads).toBe(2);
      });

      it('reads nothing that a change made old, or that a hit is already reading again', async () => {
        await cache.get(scope, 'c1', 'grants', 1000, load('a'));
        await cache.get(scope, 'c2', 'grants', 1000, load('a'));
        await cache.get(scope, 'c3', 'grants', 1000, load('a'));
        cache.customerChanged(scope, 'c1');
        now = 1_000_000 + 1000 * REFRESH_AHEAD_TO;
        expect(await cache.get(scope, 'c2', 'grants', 1000, load('b'))).toBe('a');
        await flush();
        expect(loads).toBe(4);
        now = pastRefresh(1000);
        cache.refreshDue();
        await flush();
        // c3 only: c1 was made old by the change, c2 is read again already.
        expect(loads).toBe(5);
      });

      it('customers too, and every due read goes out in one turn of the event loop', async () => {
        const ttl = cache.grantsTtlMs();
        const turns: number[] = [];
        let turn = 0;
        const tick = setInterval(() => (turn += 1), 0);
        try {
          await cache.getCustomer(scope, 'ext|x1', async () => (turns.push(turn), { id: 'c1', tag: 'a' }));
          await cache.getCustomer(scope, 'id|c2', async () => (turns.push(turn), { id: 'c2', tag: 'a' }));
          await cache.get(scope, 'c1', 'grants', ttl, async () => (turns.push(turn), 'g'));
          turns.length = 0;
          await new Promise((r) => setTimeout(r, 5));
          now = pastRefresh(ttl);
          cache.refreshDue();
          await flush();
          expect(turns).toHaveLength(3);
          expect(new Set(turns).size).toBe(1);
        } finally {
          clearInterval(tick);
        }
        now = 1_000_000 + ttl + 1;
        expect((await cache.getCustomer(scope, 'ext|x1', async () => ({ id: 'c1', tag: 'never' }))).tag).toBe('a');
      });

      it('with a sweep period, runs by itself', async () => {
        cache = new AccessCache({ now: () => now, random: () => 1, refreshGatherMs: 0, sweepMs: 5 });
        await cache.get(scope, 'c1', 'grants', 1000, load('a'));
        now = pastRefresh(1000);
        await new Promise((r) => setTimeout(r, 30));
        expect(loads).toBe(2);
        // Closed (the service stops): no timer, nothing read again.
        cache.close();
        await cache.get(scope, 'c2', 'grants', 1000, load('a'));
        now += 2000;
        await new Promise((r) => setTimeout(r, 30));
        expect(loads).toBe(3);
      });
    });

    it('customers too: a hit past its refresh point reads the customer again in the background; a change meanwhile is not undone', async () => {
      const ttl = cache.grantsTtlMs();
      await cache.getCustomer(scope, 'ext|x1', async () => ({ id: 'c1', tag: 'a' }));
      now += ttl * REFRESH_AHEAD_TO;
      let release!: (v: { id: string; tag: string }) => void;
      const slow = () => new Promise<{ id: string; tag: string }>((r) => (release = r));
      expect((await cache.getCustomer(scope, 'ext|x1', slow)).tag).toBe('a');
      release({ id: 'c1', tag: 'b' });
      await flush();
      expect((await cache.getCustomer(scope, 'ext|x1', async () => ({ id: 'c1', tag: 'never' }))).tag).toBe('b');
      now += ttl * REFRESH_AHEAD_TO;
      expect((await cache.getCustomer(scope, 'ext|x1', slow)).tag).toBe('b');
      cache.customerChanged(scope, 'c1');
      release({ id: 'c1', tag: 'old' });
      await flush();
      expect((await cache.getCustomer(scope, 'ext|x1', async () => ({ id: 'c1', tag: 'new' }))).tag).toBe('new');
    });
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

  it('forgets the customer once its consumer committed a change of it', async () => {
    await cache.get(scope, 'c1', 'grants', 1000, load('before'));
    cache.customerChangedCommitted(scope, 'c1');
    expect(await cache.get(scope, 'c1', 'grants', 1000, load('after'))).toBe('after');
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

  describe('customers (ADR 0026)', () => {
    const customer = (id: string, tag: string) => async () => {
      loads += 1;
      return { id, tag };
    };

    it('kept like grants; a change of that customer (its record or subscriptions, here or heard) drops it, not others', async () => {
      expect(await cache.getCustomer(scope, 'id|c1', customer('c1', 'a'))).toEqual({ id: 'c1', tag: 'a' });
      await cache.getCustomer(scope, 'ext|x1', customer('c1', 'a'));
      await cache.getCustomer(scope, 'ext|x2', customer('c2', 'a'));
      expect((await cache.getCustomer(scope, 'id|c1', customer('c1', 'b'))).tag).toBe('a');
      cache.customerChanged(scope, 'c1');
      expect((await cache.getCustomer(scope, 'id|c1', customer('c1', 'c'))).tag).toBe('c');
      expect((await cache.getCustomer(scope, 'ext|x1', customer('c1', 'c'))).tag).toBe('c');
      expect((await cache.getCustomer(scope, 'ext|x2', customer('c2', 'c'))).tag).toBe('a');
      cache.heard(scope, 'c2');
      expect((await cache.getCustomer(scope, 'ext|x2', customer('c2', 'd'))).tag).toBe('d');
      now += cache.grantsTtlMs();
      expect((await cache.getCustomer(scope, 'ext|x2', customer('c2', 'e'))).tag).toBe('e');
    });

    it('a read during which its customer changed is not kept; one during which only others changed is; a failed read is not kept', async () => {
      let release!: (v: { id: string; tag: string }) => void;
      const slow = () => new Promise<{ id: string; tag: string }>((r) => (release = r));
      const read = cache.getCustomer(scope, 'ext|x1', slow);
      cache.customerChanged(scope, 'c1');
      release({ id: 'c1', tag: 'old' });
      expect((await read).tag).toBe('old');
      expect((await cache.getCustomer(scope, 'ext|x1', customer('c1', 'new'))).tag).toBe('new');
      // The same customer in another scope, or another customer: the read is kept.
      const kept = cache.getCustomer(scope, 'ext|x2', slow);
      cache.customerChanged(scope, 'c9');
      cache.customerChanged(other, 'c2');
      release({ id: 'c2', tag: 'kept' });
      expect((await kept).tag).toBe('kept');
      expect((await cache.getCustomer(scope, 'ext|x2', customer('c2', 'never'))).tag).toBe('kept');
      // A change before the read began does not make it old.
      cache.customerChanged(scope, 'c3');
      expect((await cache.getCustomer(scope, 'id|c3', customer('c3', 'after'))).tag).toBe('after');
      expect((await cache.getCustomer(scope, 'id|c3', customer('c3', 'never'))).tag).toBe('after');
      await expect(cache.getCustomer(scope, 'id|c4', () => Promise.reject(new Error('404')))).rejects.toThrow('404');
      expect((await cache.getCustomer(scope, 'id|c4', customer('c4', 'ok'))).tag).toBe('ok');
    });

    it('a committed change is announced at once to the other replicas', () => {
      const announced: Array<string | undefined> = [];
      cache.connect((_s, c) => announced.push(c));
      cache.customerChangedCommitted(scope, 'c1');
      expect(announced).toEqual(['c1']);
    });
  });
});
