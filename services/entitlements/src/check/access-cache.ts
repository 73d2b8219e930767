/**
 * One file, 400 lines and more: `AccessCache` is one class whose three kinds of entries
 * (grants and features, usage, customers) share its generations, its loads in flight, its
 * epoch and its refresh sweep; split, they would have to expose that state to each other, and
 * every invalidation rule (ADR 0022, 0025, 0026, 0028) would span files. Its timings, each with
 * the reason for its value, are in access-cache-timing.ts.
 */
import type { ConsumingState } from '@billstream/bus';
import type { Scope } from '@billstream/contracts';
import {
  GRANTS_TTL_MS,
  GRANTS_TTL_NOTIFIED_MS,
  USAGE_TTL_MS,
  USAGE_TTL_NOTIFIED_MS,
  USAGE_REFRESH_GRACE_MS,
  USAGE_LATE_HOLD_MS,
  MAX_ENTRIES,
  REFRESH_AHEAD_FROM,
  REFRESH_AHEAD_TO,
  REFRESH_GATHER_MS,
  REFRESH_SWEEP_MS,
} from './access-cache-timing';

interface Entry<T> {
  generation: number;
  loadedAt: number;
  value: T;
  /** The share of the lifetime after which a hit reads it again in the background. */
  refreshAfter?: number;
  /** When the sweep reads it again (`refreshDue`) if a check used it meanwhile. */
  refreshAt?: number;
  /** Whether a check used it since it was kept (a check's own read counts; a background reload's does not). */
  used?: boolean;
  /** Reads it again in the background with the read that filled it, kept as of `at`; nothing if a change made it old. */
  reload?: (at: number) => void;
}

interface UsageEntry<T> extends Entry<T> {
  /**
   * How the check that read it read it: a notice reads it again the same way. The key names
   * the meter and the window, so every check of it would read the same; keeping the first
   * read's closure (not each hit's) keeps a closure, its query and dates per check from
   * living for seconds in the entry (ADR 0029's scavenge cost).
   */
  load: () => Promise<T>;
  /** When a check was last answered with it. */
  servedAt: number;
  /** When a notice made it old, and the generation that notice started (-1: none). */
  noticedAt: number;
  noticedGeneration: number;
}

/** What a cache is made with; each has its default (tests give their own clock, draws and timers). */
export interface AccessCacheOptions {
  /** Milliseconds now (default `Date.now`). */
  now?: () => number;
  /** Draws in [0, 1) that spread refresh points (default `Math.random`). */
  random?: () => number;
  /** 0: each background reload goes out at once (default `REFRESH_GATHER_MS`). */
  refreshGatherMs?: number;
  /** 0: no timer; `refreshDue` is called by the owner (tests). Default `REFRESH_SWEEP_MS`. */
  sweepMs?: number;
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
  /** Usage by tenant, environment, external customer id and query; and those keys per customer. */
  private readonly usage = new Map<string, UsageEntry<unknown>>();
  private readonly usageKeys = new Map<string, Set<string>>();

  /** Bumped by `clear`: part of every generation. */
  private epoch = 0;
  /** Whether changes of other replicas reach this one (`AccessNotices` listening). */
  private notified = false;
  /** Tells the other replicas of a change made here (`AccessNotices.announce`). */
  private announce: (scope: Scope, customerId?: string) => void = () => undefined;
  /** Part of every usage generation: bumped when usage notices may have been missed. */
  private usageEpoch = 0;
  /** Where the usage notices' consumer stands (`UsageNotices`); absent: not heard. */
  private usageState?: () => ConsumingState;
  private usageSession = -1;
  private usageLateUntil = 0;
  /** Customer changes so far, and the count at each customer's last change: a read of a customer during which it changed is not kept. */
  private customerBumps = 0;
  private readonly customerChangedAt = new Map<string, number>();

  /** Background reloads waiting to go out together (`REFRESH_GATHER_MS`). */
  private readonly refreshes: Array<() => void> = [];
  private refreshTimer: NodeJS.Timeout | undefined;
  /** Kept entries by the `REFRESH_SWEEP_MS` slot of their refresh point (`refreshDue`). */
  private readonly due = new Map<number, Array<[string, Entry<unknown>]>>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private closed = false;

  private readonly now: () => number;
  private readonly random: () => number;
  private readonly refreshGatherMs: number;
  private readonly sweepMs: number;

  constructor(options: AccessCacheOptions = {}) {
    this.now = options.now ?? (() => Date.now());
    this.random = options.random ?? Math.random;
    this.refreshGatherMs = options.refreshGatherMs ?? REFRESH_GATHER_MS;
    this.sweepMs = options.sweepMs ?? REFRESH_SWEEP_MS;
  }

  /** Stops the sweep's timer (the service stops); kept values still serve. */
  close(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    this.due.clear();
    this.closed = true;
  }

  /**
   * Reads again, in the background and together (one batch per loader), every entry whose
   * refresh point has passed and that a check used since it was kept, though no check came
   * after that point. An entry no check used meanwhile is left to end: it is not in use. The
   * values are kept as of their refresh point, so the lifetime still bounds what they may
   * have missed.
   */
  refreshDue(): void {
    const slot = Math.floor(this.now() / REFRESH_SWEEP_MS);
    for (const [at, list] of this.due) {
      if (at >= slot) continue;
      this.due.delete(at);
      for (const [full, entry] of list) {
        if (this.entries.get(full) !== entry || !entry.used || entry.refreshAfter === undefined) continue;
        entry.refreshAfter = undefined;
        entry.reload?.(entry.refreshAt ?? this.now());
      }
    }
  }

  /**
   * Starts a background reload with the others due within `refreshGatherMs`. A failed reload
   * fails nobody: the entry serves until its lifetime ends, then a check reads for itself.
   */
  private refreshSoon(start: () => Promise<unknown>): void {
    const run = () => void start().catch(() => undefined);
    if (this.refreshGatherMs <= 0) return run();
    this.refreshes.push(run);
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      for (const go of this.refreshes.splice(0)) go();
    }, this.refreshGatherMs);
    this.refreshTimer.unref();
  }

  /** How long grants and features are kept: long while other replicas' changes are heard, 1 s otherwise. */
  grantsTtlMs(): number {
    return this.notified ? GRANTS_TTL_NOTIFIED_MS : GRANTS_TTL_MS;
  }

  /**
   * How long usage is kept: long while every usage notice reaches this replica (its consumer
   * is consuming, no notice came late lately), 1 s otherwise. A new consumer session (joined
   * anew, or fetching again after a gap) forgets all usage: notices may have been missed.
   */
  usageTtlMs(): number {
    if (!this.usageState) return USAGE_TTL_MS;
    const state = this.usageState();
    if (state.session !== this.usageSession) {
      this.usageSession = state.session;
      this.usageEpoch += 1;
    }
    return state.consuming && this.now() >= this.usageLateUntil ? USAGE_TTL_NOTIFIED_MS : USAGE_TTL_MS;
  }

  /** Called once, at the first usage read: `UsageNotices` starts hearing then. */
  private firstUsage?: () => void;

  /** Calls `start` at the first usage read (once). */
  onFirstUsage(start: () => void): void {
    this.firstUsage = start;
  }

  /** Connects the cache to the usage notices' consumer (`UsageNotices`); undefined disconnects. */
  hearUsage(state: (() => ConsumingState) | undefined): void {
    this.usageState = state;
    this.usageEpoch += 1;
  }

  /**
   * Usage of the customer (by external id) was stored: its usage read before counts no more.
   * What checks asked for within the notified lifetime is read again at once (`getUsage`);
   * the rest is dropped.
   */
  usageRecorded(scope: Scope, externalCustomerId: string): void {
    const gkey = usageKey(scope, externalCustomerId);
    this.bump(gkey);
    const keys = this.usageKeys.get(gkey);
    if (!keys) return;
    const g = this.usageGeneration(gkey);
    const at = this.now();
    for (const full of keys) {
      const entry = this.usage.get(full);
      if (!entry || at - entry.servedAt >= USAGE_TTL_NOTIFIED_MS) {
        this.usage.delete(full);
        keys.delete(full);
        continue;
      }
      entry.noticedAt = at;
      entry.noticedGeneration = g;
      // A failed read fails nobody here: the next check reads for itself.
      this.loadUsage(full, gkey, g, at, entry.load).catch(() => undefined);
    }
    if (keys.size === 0) this.usageKeys.delete(gkey);
  }

  /** Usage notices may have been missed (a reset), or came late: forget all usage; when late, keep it 1 s for a while. */
  forgetUsage(late = false): void {
    this.usageEpoch += 1;
    if (late) this.usageLateUntil = this.now() + USAGE_LATE_HOLD_MS;
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
    else this.customerChanged(scope, customerId);
  }

  /**
   * The value under `key` for `scope` (and `customerId`, when it depends on the customer's
   * subscriptions), loaded when missing or old; read again in the background when a hit finds
   * it past its refresh point (`REFRESH_AHEAD_FROM`..`_TO` of `ttlMs`).
   */
  async get<T>(scope: Scope, customerId: string | null, key: string, ttlMs: number, load: () => Promise<T>): Promise<T> {
    const full = `${scopeKey(scope)}|${customerId ?? ''}|${key}`;
    const generation = this.generation(scope, customerId);
    const at = this.now();
    const hit = this.entries.get(full) as Entry<T> | undefined;
    if (hit && hit.generation === generation && at - hit.loadedAt < ttlMs) {
      hit.used = true;
      if (at - hit.loadedAt >= ttlMs * (hit.refreshAfter ?? 1)) {
        hit.refreshAfter = undefined;
        // Kept as of `at` (before the read) and under `generation`: a change meanwhile is not undone.
        this.refreshSoon(() => this.shared(full, generation, () => this.load(full, scope, customerId, generation, at, ttlMs, false, load)));
      }
      return hit.value;
    }
    return this.shared(full, generation, () => this.load(full, scope, customerId, generation, at, ttlMs, true, load));
  }

  /** Concurrent reads of one key under one generation share one load. */
  private shared<T>(full: string, generation: number, start: () => Promise<T>): Promise<T> {
    const flight = `${full}|${generation}`;
    const pending = this.loading.get(flight) as Promise<T> | undefined;
    if (pending) return pending;
    const loaded = start();
    this.loading.set(flight, loaded);
    const landed = () => this.loading.delete(flight);
    loaded.then(landed, landed);
    return loaded;
  }

  /** `used`: a check's own read (the entry counts as used), not a background reload. */
  private async load<T>(full: string, scope: Scope, customerId: string | null, generation: number, at: number, ttlMs: number, used: boolean, load: () => Promise<T>): Promise<T> {
    const value = await load();
    if (this.generation(scope, customerId) === generation) {
      const reload = (from: number) => {
        if (this.generation(scope, customerId) !== generation) return;
        this.shared(full, generation, () => this.load(full, scope, customerId, generation, from, ttlMs, false, load)).catch(() => undefined);
      };
      this.keep(full, generation, at, value, ttlMs, used, reload);
    }
    return value;
  }

  private keep<T>(full: string, generation: number, loadedAt: number, value: T, ttlMs: number, used: boolean, reload: (at: number) => void): void {
    this.entries.delete(full);
    const refreshAfter = REFRESH_AHEAD_FROM + (REFRESH_AHEAD_TO - REFRESH_AHEAD_FROM) * this.random();
    const entry: Entry<T> = { generation, loadedAt, value, refreshAfter, refreshAt: loadedAt + ttlMs * refreshAfter, used, reload };
    this.entries.set(full, entry);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    const slot = Math.floor(entry.refreshAt! / REFRESH_SWEEP_MS);
    const list = this.due.get(slot);
    if (list) list.push([full, entry]);
    else this.due.set(slot, [[full, entry]]);
    if (this.sweepMs > 0 && !this.sweepTimer && !this.closed) {
      this.sweepTimer = setInterval(() => this.refreshDue(), this.sweepMs);
      this.sweepTimer.unref();
    }
  }

  /**
   * A customer's usage under `key`, kept `usageTtlMs()` and made old by a notice of the
   * customer's stored usage (`usageRecorded`), a reset or a new consumer session. A notice
   * reads anew, at once, the customer's usage that checks asked for lately (refresh ahead):
   * while that read is out, and for at most `USAGE_REFRESH_GRACE_MS` after the notice, a check
   * is answered with the value the notice made old rather than waiting for it. A reset, a new
   * session or a lost channel never leaves an old value to serve.
   */
  async getUsage<T>(scope: Scope, externalCustomerId: string, key: string, load: () => Promise<T>): Promise<T> {
    this.firstUsage?.();
    this.firstUsage = undefined;
    const ttl = this.usageTtlMs();
    const gkey = usageKey(scope, externalCustomerId);
    const full = `${gkey}|${key}`;
    const g = this.usageGeneration(gkey);
    const at = this.now();
    const entry = this.usage.get(full) as UsageEntry<T> | undefined;
    if (entry) {
      const fresh = at - entry.loadedAt < ttl;
      const current = entry.generation === g;
      const refreshing = entry.noticedGeneration === g && at - entry.noticedAt < USAGE_REFRESH_GRACE_MS && this.loading.has(`${full}|${g}`);
      if (fresh && (current || refreshing)) {
        entry.servedAt = at;
        return entry.value;
      }
    }
    return this.loadUsage(full, gkey, g, at, load);
  }

  private usageGeneration(gkey: string): number {
    return this.epoch + this.usageEpoch + (this.generations.get(gkey) ?? 0);
  }

  /** Reads usage under generation `g` (one read per key and generation); kept only if `g` still holds when it lands. */
  private loadUsage<T>(full: string, gkey: string, g: number, at: number, load: () => Promise<T>): Promise<T> {
    const flight = `${full}|${g}`;
    const pending = this.loading.get(flight) as Promise<T> | undefined;
    if (pending) return pending;
    const loaded = load().then((value) => {
      if (this.usageGeneration(gkey) === g) {
        const before = this.usage.get(full);
        this.usage.delete(full);
        this.usage.set(full, { generation: g, loadedAt: at, value, load, servedAt: before?.servedAt ?? at, noticedAt: 0, noticedGeneration: -1 });
        if (this.usage.size > MAX_ENTRIES) this.usage.delete(this.usage.keys().next().value!);
        let keys = this.usageKeys.get(gkey);
        if (!keys) this.usageKeys.set(gkey, (keys = new Set()));
        keys.add(full);
      }
      return value;
    });
    this.loading.set(flight, loaded);
    const landed = () => this.loading.delete(flight);
    loaded.then(landed, landed);
    return loaded;
  }

  /**
   * A live customer by reference (`refKey`: its id or external id), kept like grants and
   * dropped by any change of that customer's record or subscriptions (`customerChanged`,
   * here or heard from another replica). A read during which the customer it answered changed
   * is not kept (it could not tell whether its row was read before that change). Another
   * customer's change does not matter: a reference stops naming a customer only by a change of
   * that customer (its external id moved, or it was deleted), so an answer whose customer did
   * not change since the read began still holds. (Counting every customer's change here, as
   * before, kept no read of any customer while a period close changed thousands.)
   */
  async getCustomer<T extends { id: string }>(scope: Scope, refKey: string, load: () => Promise<T>): Promise<T> {
    const full = `${scopeKey(scope)}|ref|${refKey}`;
    const at = this.now();
    const ttl = this.grantsTtlMs();
    const hit = this.entries.get(full) as Entry<T> | undefined;
    if (hit && hit.generation === this.generation(scope, hit.value.id) && at - hit.loadedAt < ttl) {
      hit.used = true;
      if (at - hit.loadedAt >= ttl * (hit.refreshAfter ?? 1)) {
        hit.refreshAfter = undefined;
        this.refreshSoon(() => this.shared(full, -1, () => this.loadCustomer(full, scope, at, ttl, false, load)));
      }
      return hit.value;
    }
    return this.loadCustomer(full, scope, at, ttl, true, load);
  }

  private async loadCustomer<T extends { id: string }>(full: string, scope: Scope, at: number, ttlMs: number, used: boolean, load: () => Promise<T>): Promise<T> {
    const bumps = this.customerBumps;
    const epoch = this.epoch;
    const value = await load();
    if ((this.customerChangedAt.get(`${scopeKey(scope)}|${value.id}`) ?? -1) < bumps && this.epoch === epoch) {
      const generation = this.generation(scope, value.id);
      const reload = (from: number) => {
        if (this.generation(scope, value.id) !== generation) return;
        this.shared(full, -1, () => this.loadCustomer(full, scope, from, ttlMs, false, load)).catch(() => undefined);
      };
      this.keep(full, generation, at, value, ttlMs, used, reload);
    }
    return value;
  }

  /** A feature or entitlement of the tenant and environment changed: nothing read for it before counts. */
  scopeChanged(scope: Scope): void {
    this.bump(scopeKey(scope));
    this.announce(scope);
  }

  /** One of the customer's subscriptions, or its record in the projection, changed. */
  customerChanged(scope: Scope, customerId: string): void {
    const key = `${scopeKey(scope)}|${customerId}`;
    this.customerChangedAt.set(key, this.customerBumps);
    this.customerBumps += 1;
    this.bump(key);
  }

  /**
   * A change of the customer's subscriptions or record committed to the projection (its
   * consumer, after the batch's commit): nothing read of it before counts here, and the other
   * replicas hear of it (`AccessNotices`).
   */
  customerChangedCommitted(scope: Scope, customerId: string): void {
    this.customerChanged(scope, customerId);
    this.announce(scope, customerId);
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
const usageKey = (scope: Scope, externalCustomerId: string) => `${scopeKey(scope)}|usage|${externalCustomerId}`;
