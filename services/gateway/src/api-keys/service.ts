import type { ApiKeyView, Permission } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { LRUCache } from 'lru-cache';
import { ForbiddenError, NotFoundError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import { displayPrefix, generateKey, hashKey, sameHash } from './key';
import type { ApiKeyRecord, ApiKeyStore, KeyScope } from './store';

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

/** Of `permissions`, those `principal` does not hold (`*` is held only by `*`). */
export function missingPermissions(principal: Principal, permissions: string[]): string[] {
  return permissions.filter((p) => (p === '*' ? !principal.permissions.includes('*') : !hasPermission(principal.permissions, p as Permission)));
}

/** What `ensure` did to a key: created, kept as it was, restored to `*`, or refused (why in `reason`). */
export type EnsuredKey =
  | { record: ApiKeyRecord; outcome: 'created' | 'kept' }
  | { record: ApiKeyRecord; outcome: 'restored'; was: { revokedAt: Date | null; permissions: string[] } }
  | { record: ApiKeyRecord; outcome: 'refused'; reason: string };

/** The keys `principal` may create, list and revoke. */
export function keyScopeOf(principal: Principal): KeyScope {
  return hasPermission(principal.permissions, 'api_keys:tenant')
    ? { tenantId: principal.tenantId }
    : { tenantId: principal.tenantId, environmentId: principal.environmentId };
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

export interface ApiKeyCacheOptions {
  /** How long a resolved key is kept (default 5 s). */
  cacheTtlMs?: number;
  /** Keys kept at most (default 10,000); past it the least recently used one is dropped. */
  cacheMax?: number;
  clock?: () => number;
  random?: () => number;
}

/**
 * API keys: issue, resolve, list, revoke. Resolved keys are cached for `cacheTtlMs` (what a
 * revoke through another gateway replica takes to count here); a revoke through this gateway
 * drops the cache entry at once. Concurrent resolves of one key share one lookup, and a key in
 * use is looked up again in the background before it expires, so requests never wait for the
 * lookup of a key they keep using (before, every request of the few ms after each expiry
 * queried the database for itself: a wave of lookups every 5 s at 1,000 requests/s). The cache
 * holds at most `cacheMax` keys and drops the least recently used one past it (ADR 0032; it
 * used to drop every key at once, so a flood of unknown keys sent every client to the database).
 */
export class ApiKeyService {
  private readonly cache: LRUCache<string, CacheEntry>;
  private readonly lookups = new Map<string, Promise<Principal | null>>();
  /** Revokes through this replica so far: a lookup during which one happened is not kept. */
  private revokes = 0;
  private readonly cacheTtlMs: number;
  private readonly clock: () => number;
  private readonly random: () => number;

  constructor(
    private readonly db: Db,
    private readonly store: ApiKeyStore,
    options: ApiKeyCacheOptions = {},
  ) {
    this.cacheTtlMs = options.cacheTtlMs ?? 5000;
    this.clock = options.clock ?? (() => Date.now());
    this.random = options.random ?? Math.random;
    this.cache = new LRUCache({ max: options.cacheMax ?? 10_000 });
  }

  /**
   * A new key. With a `creator` (a key through the API): in the creator's environment unless it
   * holds `api_keys:tenant`, and with no permission the creator lacks (403 otherwise).
   */
  async create(input: CreateKeyInput, creator?: Principal): Promise<{ key: string; record: ApiKeyRecord }> {
    if (creator) {
      const scope = keyScopeOf(creator);
      if (input.tenantId !== scope.tenantId || (scope.environmentId !== undefined && input.environmentId !== scope.environmentId)) {
        throw new ForbiddenError(
          `This API key creates keys of its own environment (${creator.environmentId}) only; another environment needs the api_keys:tenant permission`,
          { field: 'environment_id', permission: 'api_keys:tenant' },
        );
      }
      const missing = missingPermissions(creator, input.permissions);
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

  /**
   * Ensures a given key (BOOTSTRAP_API_KEY, the development key) is usable with `*`: created when
   * absent, restored (revocation lifted, permissions `*`) when a caller revoked or narrowed it
   * (ADR 0058). A key of another tenant or environment than the one given is left as it is:
   * `refused` says why.
   */
  async ensure(key: string, tenantId: string, environmentId: string): Promise<EnsuredKey> {
    const existing = await this.store.findByHash(this.db, hashKey(key));
    if (existing) {
      if (existing.tenantId !== tenantId || existing.environmentId !== environmentId) {
        return {
          record: existing,
          outcome: 'refused',
          reason: `the key belongs to tenant ${existing.tenantId}, environment ${existing.environmentId}, not ${tenantId}/${environmentId}`,
        };
      }
      const whole = existing.permissions.length === 1 && existing.permissions[0] === '*';
      if (!existing.revokedAt && whole) return { record: existing, outcome: 'kept' };
      const restored = await this.store.restore(this.db, existing.id, ['*']);
      this.revokes += 1;
      this.cache.delete(existing.keyHash);
      return { record: restored ?? existing, outcome: 'restored', was: { revokedAt: existing.revokedAt, permissions: existing.permissions } };
    }
    const record = await this.store.insert(this.db, {
      id: newId('apiKey'),
      tenantId,
      environmentId,
      name: 'bootstrap',
      keyHash: hashKey(key),
      keyPrefix: displayPrefix(key),
      permissions: ['*'],
      createdBy: 'bootstrap',
    });
    return { record, outcome: 'created' };
  }

  /**
   * The principal of `key`, or null for an unknown or revoked key. `beforeLookup` runs (and may
   * throw, refusing the request) only when this call would start a store lookup of its own: not
   * for a cached key nor for one whose lookup is already under way.
   */
  async resolve(key: string, beforeLookup?: () => void): Promise<Principal | null> {
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
    if (beforeLookup && !this.lookups.has(hash)) beforeLookup();
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

  async list(scope: KeyScope, limit: number, offset: number) {
    return this.store.list(this.db, scope, limit, offset);
  }

  /**
   * 404 for a key outside `scope`, as for one that does not exist. With a `revoker` (a key
   * through the API): 403 unless it holds every permission of the target key (`*` only by
   * `*`), as for creating it (ADR 0058); nothing changes then.
   */
  async revoke(scope: KeyScope, id: string, revoker?: Principal): Promise<void> {
    if (revoker) {
      const target = await this.store.get(this.db, scope, id);
      if (!target) throw new NotFoundError(`API key ${id} not found`, { field: 'id', value: id });
      const missing = missingPermissions(revoker, target.permissions);
      if (missing.length > 0) {
        throw new ForbiddenError(`A key can revoke only keys whose permissions it holds: this one lacks ${missing.join(', ')}`, {
          field: 'id',
          permission: missing[0],
          missing,
        });
      }
    }
    const record = await this.store.revoke(this.db, scope, id);
    if (!record) throw new NotFoundError(`API key ${id} not found`, { field: 'id', value: id });
    this.revokes += 1;
    this.cache.delete(record.keyHash);
  }
}
