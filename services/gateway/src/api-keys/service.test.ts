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
  const service = (store: ApiKeyStore) => new ApiKeyService(null as unknown as Db, store, { cacheTtlMs: ttl, clock: () => now, random: () => 1 });

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
    await keys.revoke({ tenantId: 't' }, 'key_1');
    waitingLookup();
    await new Promise((r) => setImmediate(r));
    const after = keys.resolve(KEY);
    expect(state.lookups).toBe(3);
    await release();
    expect(await after).toBeNull();
  });
});

describe('ApiKeyService cache bound and lookup gate', () => {
  /** A store that answers at once, knows every key of `valid`, and counts lookups per hash. */
  function countingStore(valid: string[]) {
    const lookups = new Map<string, number>();
    const store = {
      findByHash: async (_db: unknown, hash: string) => {
        lookups.set(hash, (lookups.get(hash) ?? 0) + 1);
        const key = valid.find((k) => hashKey(k) === hash);
        if (!key) return undefined;
        return { id: `key_${key}`, tenantId: 't', environmentId: 'e', name: 'k', keyHash: hash, keyPrefix: 'bsk_', permissions: ['*'], createdBy: 'test', createdAt: new Date(0), revokedAt: null };
      },
    } as unknown as ApiKeyStore;
    return { store, lookupsOf: (key: string) => lookups.get(hashKey(key)) ?? 0 };
  }

  it('past cacheMax drops the least recently used key only, never every key at once', async () => {
    const keys = ['bsk_a_0123456789abcdef', 'bsk_b_0123456789abcdef', 'bsk_c_0123456789abcdef'];
    const { store, lookupsOf } = countingStore(keys);
    const service = new ApiKeyService(null as unknown as Db, store, { cacheMax: 2 });
    const [a, b, c] = keys;
    await service.resolve(a);
    await service.resolve(b);
    await service.resolve(a);
    // c takes b's place (used least recently); a stays cached.
    await service.resolve(c);
    await service.resolve(a);
    await service.resolve(c);
    expect([lookupsOf(a), lookupsOf(b), lookupsOf(c)]).toEqual([1, 1, 1]);
    await service.resolve(b);
    expect(lookupsOf(b)).toBe(2);
  });

  it('runs beforeLookup only when the call would query the store, and a throw refuses without a lookup', async () => {
    const good = 'bsk_good_0123456789abcdef';
    const { store, lookupsOf } = countingStore([good]);
    const service = new ApiKeyService(null as unknown as Db, store);
    let gated = 0;
    const gate = () => {
      gated += 1;
    };
    await service.resolve(good, gate);
    await service.resolve(good, gate);
    expect(gated).toBe(1);
    await expect(
      service.resolve('bsk_unknown_0123456789abcdef', () => {
        throw new Error('limited');
      }),
    ).rejects.toThrow('limited');
    expect(lookupsOf('bsk_unknown_0123456789abcdef')).toBe(0);
  });
});

describe('ApiKeyService.create scope', () => {
  const inserted: unknown[] = [];
  const store = {
    insert: async (_db: unknown, record: Record<string, unknown>) => {
      inserted.push(record);
      return { ...record, createdAt: new Date(0), revokedAt: null };
    },
  } as unknown as ApiKeyStore;
  const service = new ApiKeyService(null as unknown as Db, store);
  const input = (environmentId: string) => ({ tenantId: 't', environmentId, name: 'k', permissions: ['customers:read'], createdBy: 'key_1' });
  const creator = (permissions: string[]) => ({ keyId: 'key_1', tenantId: 't', environmentId: 'production', permissions });

  it('a key creates keys of its own environment only, unless it holds api_keys:tenant (or *)', async () => {
    const writer = creator(['api_keys:write', 'customers:read']);
    await expect(service.create(input('staging'), writer)).rejects.toMatchObject({
      kind: 'forbidden',
      details: { field: 'environment_id', permission: 'api_keys:tenant' },
    });
    expect(inserted).toHaveLength(0);
    await expect(service.create(input('production'), writer)).resolves.toMatchObject({ record: { environmentId: 'production' } });
    await expect(service.create(input('staging'), creator(['api_keys:write', 'api_keys:tenant', 'customers:read']))).resolves.toMatchObject({
      record: { environmentId: 'staging' },
    });
    await expect(service.create(input('staging'), creator(['*']))).resolves.toMatchObject({ record: { environmentId: 'staging' } });
    await expect(service.create({ ...input('production'), tenantId: 'other' }, creator(['*']))).rejects.toMatchObject({ kind: 'forbidden' });
  });

  it('a key without api_keys:tenant cannot grant it', async () => {
    await expect(
      service.create({ ...input('production'), permissions: ['api_keys:tenant'] }, creator(['api_keys:write'])),
    ).rejects.toMatchObject({ kind: 'forbidden', details: { field: 'permissions', missing: ['api_keys:tenant'] } });
  });
});

describe('ApiKeyService.ensure (ADR 0058)', () => {
  const key = 'bsk_boot_0123456789abcdef';
  function storeWith(record: Record<string, unknown> | undefined) {
    const restored: Array<[string, string[]]> = [];
    const store = {
      findByHash: async () => record && { keyHash: hashKey(key), createdAt: new Date(0), ...record },
      restore: async (_db: unknown, id: string, permissions: string[]) => {
        restored.push([id, permissions]);
        return { ...record, permissions, revokedAt: null };
      },
      insert: async (_db: unknown, r: Record<string, unknown>) => ({ ...r, createdAt: new Date(0), revokedAt: null }),
    } as unknown as ApiKeyStore;
    return { service: new ApiKeyService(null as unknown as Db, store), restored };
  }
  const existing = { id: 'key_boot', tenantId: 't', environmentId: 'e', permissions: ['*'], revokedAt: null };

  it('creates an absent key with *, keeps a usable one, restores a revoked or narrowed one', async () => {
    expect((await storeWith(undefined).service.ensure(key, 't', 'e')).outcome).toBe('created');
    const kept = storeWith(existing);
    expect((await kept.service.ensure(key, 't', 'e')).outcome).toBe('kept');
    expect(kept.restored).toEqual([]);
    for (const was of [{ revokedAt: new Date(1) }, { permissions: ['customers:read'] }]) {
      const { service, restored } = storeWith({ ...existing, ...was });
      await expect(service.ensure(key, 't', 'e')).resolves.toMatchObject({ outcome: 'restored', record: { permissions: ['*'], revokedAt: null } });
      expect(restored).toEqual([['key_boot', ['*']]]);
    }
  });

  it('leaves a key of another tenant or environment as it is and says why', async () => {
    const { service, restored } = storeWith({ ...existing, environmentId: 'staging', revokedAt: new Date(1) });
    await expect(service.ensure(key, 't', 'e')).resolves.toMatchObject({ outcome: 'refused', reason: expect.stringContaining('environment staging') });
    expect(restored).toEqual([]);
  });
});
