import type { ConsumingState } from '@billstream/bus';
import { CachedHeldQuantity, HELD_TTL_HEARD_MS } from './held-cache';

const scope = { tenantId: 't', environmentId: 'e' };

/** A wallet that counts its calls and answers what `value` says now. */
function wallet() {
  const w = { calls: 0, value: '0', held: async () => ((w.calls += 1), w.value) };
  return w;
}

describe('CachedHeldQuantity (ADR 0070: held kept while the wallet events are heard)', () => {
  it('asks the wallet at each check while the events are not heard', async () => {
    const w = wallet();
    const cache = new CachedHeldQuantity(w);
    await cache.held(scope, 'c', 'f', 'r');
    await cache.held(scope, 'c', 'f', 'r');
    cache.hear(() => ({ consuming: false, session: 1 }));
    await cache.held(scope, 'c', 'f', 'r');
    expect(w.calls).toBe(3);
  });

  it('while heard: one call for many checks (concurrent ones share it), a new one after an event of the feature or past the TTL', async () => {
    const w = wallet();
    let now = 0;
    const state: ConsumingState = { consuming: true, session: 1 };
    const cache = new CachedHeldQuantity(w, () => now);
    cache.hear(() => state);
    expect(await Promise.all([1, 2, 3].map(() => cache.held(scope, 'c', 'f', 'r')))).toEqual(['0', '0', '0']);
    expect(w.calls).toBe(1);
    w.value = '10';
    // Another customer's or feature's event drops nothing here.
    cache.dropped(scope, 'c', 'other');
    cache.dropped(scope, 'd', 'f');
    expect(await cache.held(scope, 'c', 'f', 'r')).toBe('0');
    cache.dropped(scope, 'c', 'f');
    expect(await cache.held(scope, 'c', 'f', 'r')).toBe('10');
    expect(w.calls).toBe(2);
    w.value = '4';
    now += HELD_TTL_HEARD_MS - 1;
    expect(await cache.held(scope, 'c', 'f', 'r')).toBe('10');
    now += 1;
    expect(await cache.held(scope, 'c', 'f', 'r')).toBe('4');
    // A new session of the consumer may have missed events: everything is asked again.
    w.value = '5';
    state.session = 2;
    expect(await cache.held(scope, 'c', 'f', 'r')).toBe('5');
    expect(w.calls).toBe(4);
  });

  it('a drop while a call is on its way: the checks after it ask again; a failed call is not kept', async () => {
    let release!: (v: string) => void;
    let calls = 0;
    const slow = { held: () => ((calls += 1), calls === 1 ? new Promise<string>((r) => (release = r)) : calls === 2 ? Promise.reject(new Error('down')) : Promise.resolve('7')) };
    const cache = new CachedHeldQuantity(slow, () => 0);
    cache.hear(() => ({ consuming: true, session: 1 }));
    const first = cache.held(scope, 'c', 'f', 'r');
    cache.dropped(scope, 'c', 'f');
    await expect(cache.held(scope, 'c', 'f', 'r')).rejects.toThrow('down');
    expect(await cache.held(scope, 'c', 'f', 'r')).toBe('7');
    release('3');
    expect(await first).toBe('3');
    expect(await cache.held(scope, 'c', 'f', 'r')).toBe('7');
    expect(calls).toBe(3);
  });
});
