import type { Db } from '@billstream/db';
import { hashKey } from './key';
import { ApiKeyService } from './service';
import type { ApiKeyRecord, ApiKeyStore } from './store';

const KEY = 'bsk_test_key_0123456789';

/** A store whose lookups wait until released, counting them; `revoked` flips what they find. */
function fakeStore() {
  const state = { lookups: 0, revoked: false, waiting: [] as Array<() => void> };
  const record = (): ApiKeyRecord => ({
    id: 'key_1',
    tenantId: 't',
    environmentId: 'e',
    name: 'k',
    keyHash: hashKey(KEY),
    keyPrefix: 'bsk_test',
    permissions: ['*'],
    createdBy: 'test',
    createdAt: new Date(0),
    revokedAt: state.revoked ? new Date(1) : null,
  });
  const store = {
    // The row as it is when the lookup starts, answered when released.
    findByHash: async () => {
      state.lookups += 1;
      const row = record();
      await new Promise<void>((r) => state.waiting.push(r));
      return row;
    },
    revoke: async () => {
      state.revoked = true;
      return record();
    },
  } as unknown as ApiKeyStore;
  const release = async () => {
    for (const r of state.waiting.splice(0)) r();
    await new Promise((r) => setImmediate(r));
  };
  return { store, state, release };
}

describe('ApiKeyService.resolve', () => {
  let now: number;
  const ttl = 5000;

  beforeEach(() => {
    now = 1_000_000;
  });

  /** A service whose entries refresh at 90 % of their lifetime. */
  const service = (store: ApiKeyStore) => new ApiKeyService(null as unknown as Db, store, ttl, () => now, () => 1);

  /** A service that has resolved the key once (one lookup, at `now`). */
  async function resolvedOnce() {
    const fake = fakeStore();
    const keys = service(fake.store);
    const first = keys.resolve(KEY);
    await fake.release();
    await first;
    return { keys, ...fake };
  }

  it('concurrent resolves of a key share one lookup', async () => {
    const { store, state, release } = fakeStore();
    const keys = service(store);
    const resolving = Array.from({ length: 50 }, () => keys.resolve(KEY));
    expect(state.lookups).toBe(1);
    await release();
    const principals = await Promise.all(resolving);
    expect(principals.every((p) => p?.keyId === 'key_1')).toBe(true);
  });

  it('a key in use is looked up again in the background before it expires; requests never wait for it', async () => {
    const { keys, state, release } = await resolvedOnce();
    now += ttl * 0.9 - 1;
    expect((await keys.resolve(KEY))?.keyId).toBe('key_1');
    expect(state.lookups).toBe(1);
    now += 1;
    // Past the refresh point: answered from the cache at once, one lookup starts.
    expect((await keys.resolve(KEY))?.keyId).toBe('key_1');
    expect((await keys.resolve(KEY))?.keyId).toBe('key_1');
    expect(state.lookups).toBe(2);
    await release();
    // The refreshed entry lives from the refresh's start: no lookup until well past the first lifetime.
    now += ttl * 0.5;
    expect((await keys.resolve(KEY))?.keyId).toBe('key_1');
    expect(state.lookups).toBe(2);
  });

  it('the lifetime still bounds a key nobody refreshed: past it, the request waits for a lookup', async () => {
    const { keys, state, release } = await resolvedOnce();
    now += ttl;
    state.revoked = true;
    const again = keys.resolve(KEY);
    expect(state.lookups).toBe(2);
    await release();
    expect(await again).toBeNull();
  });

  it('a revoke through this gateway counts at once, and a background lookup that began before it is not kept', async () => {
    const { keys, state, release } = await resolvedOnce();
    now += ttl * 0.9;
    expect((await keys.resolve(KEY))?.keyId).toBe('key_1');
    expect(state.lookups).toBe(2);
    // The background lookup read the row before the revoke; it lands after it.
    const [waitingLookup] = state.waiting.splice(0);
    await keys.revoke('t', 'key_1');
    waitingLookup();
    await new Promise((r) => setImmediate(r));
    const after = keys.resolve(KEY);
    expect(state.lookups).toBe(3);
    await release();
    expect(await after).toBeNull();
  });
});
