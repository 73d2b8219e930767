import type { ApiKeyView, Permission } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { ForbiddenError, NotFoundError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import { displayPrefix, generateKey, hashKey, sameHash } from './key';
import type { ApiKeyRecord, ApiKeyStore } from './store';

export interface Principal {
  keyId: string;
  tenantId: string;
  environmentId: string;
  permissions: string[];
}

export interface CreateKeyInput {
  tenantId: string;
  environmentId: string;
  name: string;
  permissions: string[];
  createdBy: string;
}

export function hasPermission(permissions: string[], needed: Permission): boolean {
  return permissions.includes('*') || permissions.includes(needed);
}

export function toView(r: ApiKeyRecord): ApiKeyView {
  return {
    id: r.id,
    name: r.name,
    permissions: r.permissions,
    tenant_id: r.tenantId,
    environment_id: r.environmentId,
    key_prefix: r.keyPrefix,
    created_at: r.createdAt.toISOString(),
    revoked_at: r.revokedAt ? r.revokedAt.toISOString() : null,
  };
}

interface CacheEntry {
  principal: Principal | null;
  expires: number;
  /** After this, a hit looks the key up again in the background (once). */
  refreshAt: number;
}

/** A key in use is looked up again once this share of its lifetime is over, drawn per entry between the two. */
const REFRESH_FROM = 0.5;
const REFRESH_TO = 0.9;

/**
 * API keys: issue, resolve, list, revoke. Resolved keys are cached for `cacheTtlMs` (what a
 * revoke through another gateway replica takes to count here); a revoke through this gateway
 * drops the cache entry at once. Concurrent resolves of one key share one lookup, and a key in
 * use is looked up again in the background before it expires, so requests never wait for the
 * lookup of a key they keep using (before, every request of the few ms after each expiry
 * queried the database for itself: a wave of lookups every 5 s at 1,000 requests/s).
 */
export class ApiKeyService {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly lookups = new Map<string, Promise<Principal | null>>();
  /** Revokes through this replica so far: a lookup during which one happened is not kept. */
  private revokes = 0;

  constructor(
    private readonly db: Db,
    private readonly store: ApiKeyStore,
    private readonly cacheTtlMs = 5000,
    private readonly clock: () => number = () => Date.now(),
    private readonly random: () => number = Math.random,
  ) {}

  async create(input: CreateKeyInput, creator?: Principal): Promise<{ key: string; record: ApiKeyRecord }> {
    if (creator) {
      const missing = input.permissions.filter((p) =>
        p === '*' ? !creator.permissions.includes('*') : !hasPermission(creator.permissions, p as Permission),
      );
      if (missing.length > 0) {
        throw new ForbiddenError('A key cannot grant permissions its creator lacks', { field: 'permissions', missing });
      }
    }
    const key = generateKey();
    const record = await this.store.insert(this.db, {
      id: newId('apiKey'),
      tenantId: input.tenantId,
      environmentId: input.environmentId,
      name: input.name,
      keyHash: hashKey(key),
      keyPrefix: displayPrefix(key),
      permissions: [...new Set(input.permissions)],
      createdBy: input.createdBy,
    });
    return { key, record };
  }

  /** Ensures a given key exists (BOOTSTRAP_API_KEY); creates it with `*` when absent. */
  async ensure(key: string, tenantId: string, environmentId: string): Promise<ApiKeyRecord> {
    const existing = await this.store.findByHash(this.db, hashKey(key));
    if (existing) return existing;
    return this.store.insert(this.db, {
      id: newId('apiKey'),
      tenantId,
      environmentId,
      name: 'bootstrap',
      keyHash: hashKey(key),
      keyPrefix: displayPrefix(key),
      permissions: ['*'],
      createdBy: 'bootstrap',
    });
  }

  async resolve(key: string): Promise<Principal | null> {
    const hash = hashKey(key);
    const now = this.clock();
    const cached = this.cache.get(hash);
    if (cached && cached.expires > now) {
      if (now >= cached.refreshAt) {
        cached.refreshAt = Infinity;
        // A failed lookup fails no request: the entry serves until it expires, then a request looks up itself.
        this.lookup(hash).catch(() => undefined);
      }
      return cached.principal;
    }
    return this.lookup(hash);
  }

  /** One lookup of `hash` at a time; its answer is kept unless a revoke happened meanwhile. */
  private lookup(hash: string): Promise<Principal | null> {
    const pending = this.lookups.get(hash);
    if (pending) return pending;
    const startedAt = this.clock();
    const revokes = this.revokes;
    const looked = (async () => {
      const record = await this.store.findByHash(this.db, hash);
      const principal =
        record && !record.revokedAt && sameHash(record.keyHash, hash)
          ? {
              keyId: record.id,
              tenantId: record.tenantId,
              environmentId: record.environmentId,
              permissions: record.permissions,
            }
          : null;
      if (this.revokes === revokes) {
        if (this.cache.size > 10_000) this.cache.clear();
        const refreshAfter = REFRESH_FROM + (REFRESH_TO - REFRESH_FROM) * this.random();
        this.cache.set(hash, { principal, expires: startedAt + this.cacheTtlMs, refreshAt: startedAt + this.cacheTtlMs * refreshAfter });
      }
      return principal;
    })();
    this.lookups.set(hash, looked);
    const landed = () => this.lookups.delete(hash);
    looked.then(landed, landed);
    return looked;
  }

  async list(tenantId: string, limit: number, offset: number) {
    return this.store.list(this.db, tenantId, limit, offset);
  }

  async revoke(tenantId: string, id: string): Promise<void> {
    const record = await this.store.revoke(this.db, tenantId, id);
    if (!record) throw new NotFoundError(`API key ${id} not found`, { field: 'id', value: id });
    this.revokes += 1;
    this.cache.delete(record.keyHash);
  }
}
