import type { Scope } from '@billstream/contracts';
import type { Trx } from '@billstream/db';

/** How long a replica keeps what it read: bounds what a change made on another replica takes to count here (ADR 0022). */
export const GRANTS_TTL_MS = 1000;
/**
 * The same while the replica hears the other replicas' changes (`AccessNotices`, ADR 0025):
 * they invalidate at once, and this bounds only a change whose writer died between its commit
 * and its notice.
 */
export const GRANTS_TTL_NOTIFIED_MS = 15_000;
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
 * change never outlives it. Changes on other replicas count when the entry expires, or at
 * once while `AccessNotices` hears them (ADR 0025).
 */
export class AccessCache {
  private readonly entries = new Map<string, Entry<unknown>>();
  private readonly generations = new Map<string, number>();
  private readonly loading = new Map<string, Promise<unknown>>();

  /** Bumped by `clear`: part of every generation. */
  private epoch = 0;
  /** Whether changes of other replicas reach this one (`AccessNotices` listening). */
  private notified = false;
  /** Tells the other replicas of a change made here (`AccessNotices.announce`). */
  private announce: (scope: Scope, customerId?: string) => void = () => undefined;

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** How long grants and features are kept: long while other replicas' changes are heard, 1 s otherwise. */
  grantsTtlMs(): number {
    return this.notified ? GRANTS_TTL_NOTIFIED_MS : GRANTS_TTL_MS;
  }

  /** Connects the cache to the replicas' notice channel (`AccessNotices`). */
  connect(announce: (scope: Scope, customerId?: string) => void): void {
    this.announce = announce;
  }

  /**
   * Whether other replicas' changes are heard from now on. Either way nothing read before
   * counts: while not heard, changes may have been missed.
   */
  setNotified(notified: boolean): void {
    this.notified = notified;
    this.clear();
  }

  /** Nothing read so far counts (and loads in flight are not kept). */
  clear(): void {
    this.epoch += 1;
  }

  /** Another replica changed a feature or entitlement of the scope (`customerId` absent) or a subscription of the customer. */
  heard(scope: Scope, customerId?: string): void {
    if (customerId === undefined) this.bump(scopeKey(scope));
    else this.bump(`${scopeKey(scope)}|${customerId}`);
  }

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
    this.announce(scope);
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
    // The other replicas hear of it once it is committed (or rolled back: a harmless reload).
    const ended = () => {
      changed();
      this.announce(scope, customerId);
    };
    if (trx.executionPromise) trx.executionPromise.then(ended, ended);
    else this.announce(scope, customerId);
  }

  private generation(scope: Scope, customerId: string | null): number {
    const s = this.epoch + (this.generations.get(scopeKey(scope)) ?? 0);
    return customerId === null ? s : s + (this.generations.get(`${scopeKey(scope)}|${customerId}`) ?? 0);
  }

  private bump(key: string): void {
    this.generations.set(key, (this.generations.get(key) ?? 0) + 1);
  }
}

const scopeKey = (scope: Scope) => `${scope.tenantId}|${scope.environmentId}`;
