import type { Scope } from '@billstream/contracts';
import type { Trx } from '@billstream/db';

/** How long a replica keeps what it read: bounds what a change made on another replica takes to count here (ADR 0022). */
export const GRANTS_TTL_MS = 1000;
/** Usage read from the aggregator is served for at most this long (BILLING.md: usage at most 2 s old). */
export const USAGE_TTL_MS = 1000;
const MAX_ENTRIES = 100_000;

interface Entry<T> {
  generation: number;
  loadedAt: number;
  value: T;
}

/**
 * Values read for the hot path of the entitlement check, per replica: features by lookup key
 * and a customer's grants, kept `GRANTS_TTL_MS`, and meter usage, kept `USAGE_TTL_MS`.
 * A change on this replica invalidates at once by bumping a generation (of the tenant and
 * environment for features and entitlements, of the customer for its subscriptions) after
 * its commit; a load that began before the bump is not kept, so a read that raced the
 * change never outlives it. Changes on other replicas count when the entry expires.
 */
export class AccessCache {
  private readonly entries = new Map<string, Entry<unknown>>();
  private readonly generations = new Map<string, number>();
  private readonly loading = new Map<string, Promise<unknown>>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** The value under `key` for `scope` (and `customerId`, when it depends on the customer's subscriptions), loaded when missing or old. */
  async get<T>(scope: Scope, customerId: string | null, key: string, ttlMs: number, load: () => Promise<T>): Promise<T> {
    const full = `${scopeKey(scope)}|${customerId ?? ''}|${key}`;
    const generation = this.generation(scope, customerId);
    const at = this.now();
    const hit = this.entries.get(full) as Entry<T> | undefined;
    if (hit && hit.generation === generation && at - hit.loadedAt < ttlMs) return hit.value;
    // Concurrent checks of one key under one generation share one load.
    const flight = `${full}|${generation}`;
    const pending = this.loading.get(flight) as Promise<T> | undefined;
    if (pending) return pending;
    const loaded = this.load(full, scope, customerId, generation, at, load);
    this.loading.set(flight, loaded);
    const landed = () => this.loading.delete(flight);
    loaded.then(landed, landed);
    return loaded;
  }

  private async load<T>(full: string, scope: Scope, customerId: string | null, generation: number, at: number, load: () => Promise<T>): Promise<T> {
    const value = await load();
    if (this.generation(scope, customerId) === generation) {
      this.entries.delete(full);
      this.entries.set(full, { generation, loadedAt: at, value });
      if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    }
    return value;
  }

  /** A feature or entitlement of the tenant and environment changed: nothing read for it before counts. */
  scopeChanged(scope: Scope): void {
    this.bump(scopeKey(scope));
  }

  /** One of the customer's subscriptions changed. */
  customerChanged(scope: Scope, customerId: string): void {
    this.bump(`${scopeKey(scope)}|${customerId}`);
  }

  /**
   * `customerChanged` now and again once the transaction that wrote the subscription has ended
   * (committed or not): a load between the two saw the old rows and is not kept.
   */
  customerChangedAfter(trx: Trx, scope: Scope, customerId: string): void {
    const changed = () => this.customerChanged(scope, customerId);
    changed();
    if (trx.executionPromise) trx.executionPromise.then(changed, changed);
  }

  private generation(scope: Scope, customerId: string | null): number {
    const s = this.generations.get(scopeKey(scope)) ?? 0;
    return customerId === null ? s : s + (this.generations.get(`${scopeKey(scope)}|${customerId}`) ?? 0);
  }

  private bump(key: string): void {
    this.generations.set(key, (this.generations.get(key) ?? 0) + 1);
  }
}

const scopeKey = (scope: Scope) => `${scope.tenantId}|${scope.environmentId}`;
