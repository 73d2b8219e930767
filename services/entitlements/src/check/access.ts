import type { Scope, UsageResetPeriod } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { NotFoundError } from '@billstream/errors';
import { exact, exactSum, toDecimalString } from '@billstream/money';
import type { CustomerDirectory } from '../projection/directory';
import type { CustomerRef, Entitlement, Feature, GrantingSubscription, KnownCustomer } from '../projection/domain';
import type { ProjectionStore } from '../projection/store';
import type { Meters } from '../upstreams/meters';
import type { AccessCache } from './access-cache';
import { Coalescer } from '../shared/coalescer';
import { usageInBatch, type AskedUsage, type MeterQuery } from './usage-batch';
import { combinedWindow, resetWindow, type UsageWindow } from './windows';

/** One entitlement of one of the customer's active or trialing subscriptions. */
export interface GrantSource {
  subscription: GrantingSubscription;
  entitlement: Entitlement;
}

/**
 * A customer's grants, as the check cache keeps them for seconds (ADR 0028): its active and
 * trialing subscriptions (only what a check needs of them) and, shared by every customer loaded
 * in the same batch, their plans' entitlements per feature. A check builds the few `GrantSource`s
 * of its feature as it goes; they die young instead of outliving scavenges (ADR 0029, amended).
 */
export class CustomerGrants {
  constructor(
    private readonly subscriptions: readonly GrantingSubscription[],
    private readonly ofPlan: ReadonlyMap<string, ReadonlyMap<string, readonly Entitlement[]>>,
  ) {}

  /** The grants of one feature: per subscription (in id order), its plan's entitlements to it (in id order). */
  of(featureId: string): GrantSource[] {
    const sources: GrantSource[] = [];
    for (const subscription of this.subscriptions) {
      for (const entitlement of this.ofPlan.get(subscription.planId)?.get(featureId) ?? []) sources.push({ subscription, entitlement });
    }
    return sources;
  }

  /** The features granted, each once, in the order their first grant comes. */
  featureIds(): string[] {
    const ids = new Set<string>();
    for (const subscription of this.subscriptions) for (const featureId of this.ofPlan.get(subscription.planId)?.keys() ?? []) ids.add(featureId);
    return [...ids];
  }
}

/** A feature as a customer holds it over all its subscriptions (docs/api/entitlements.md). */
export interface CustomerFeature {
  feature: Feature;
  isEnabled: boolean;
  /** METERED: the sum of the enabled grants' limits; null when one of them is unlimited (or none is enabled). */
  usageLimit: string | null;
  isSoftLimit: boolean;
  staticValue: string | null;
  usageResetPeriod: UsageResetPeriod | null;
  /** METERED and enabled: where usage counts. */
  window: UsageWindow | null;
  /** METERED and enabled: the meter's value over the window. */
  usage: string | null;
  sources: GrantSource[];
}

/** A far end for windows that never reset: every event from the start counts. */
const OPEN_END = new Date('9999-01-01T00:00:00Z');

/**
 * Combines the grants of one feature: enabled if any enabled entitlement grants it; limits of
 * the enabled grants add up and one unlimited grant makes it unlimited; soft when any enabled
 * grant is soft; the static value of the newest subscription's enabled grant; usage counts
 * from the latest start of the enabled grants' reset periods.
 */
export function combine(feature: Feature, sources: GrantSource[], now: Date): Omit<CustomerFeature, 'usage'> {
  const enabled = sources.filter((s) => s.entitlement.isEnabled);
  const base = { feature, isEnabled: enabled.length > 0, sources, usageLimit: null, isSoftLimit: false, staticValue: null, usageResetPeriod: null, window: null };
  if (enabled.length === 0) return base;
  if (feature.type === 'STATIC') {
    const newest = [...enabled].sort((a, b) => a.subscription.createdAt.getTime() - b.subscription.createdAt.getTime() || a.subscription.id.localeCompare(b.subscription.id)).at(-1)!;
    return { ...base, staticValue: newest.entitlement.staticValue };
  }
  if (feature.type !== 'METERED') return base;
  const limits = enabled.map((s) => s.entitlement.usageLimit);
  const windows = enabled.map((s) => ({ period: s.entitlement.usageResetPeriod!, window: resetWindow(s.entitlement.usageResetPeriod!, s.subscription, now) }));
  const window = combinedWindow(windows.map((w) => w.window));
  return {
    ...base,
    usageLimit: limits.some((l) => l === null) ? null : toDecimalString(exactSum(limits as string[])),
    isSoftLimit: enabled.some((s) => s.entitlement.isSoftLimit),
    usageResetPeriod: windows.find((w) => w.window.start.getTime() === window.start.getTime())!.period,
    window,
  };
}

export interface CheckResult {
  allowed: boolean;
  feature: Feature;
  usage: string | null;
  /** METERED with a hard limit: the quantity held by the customer's live reservations of the feature (ADR 0070); else null. */
  held: string | null;
  limit: string | null;
  remaining: string | null;
  isSoftLimit: boolean;
  window: UsageWindow | null;
  /** The enabled and disabled entitlements that grant the feature. */
  entitlementIds: string[];
  externalCustomerId: string;
}

/** The quantity held by a customer's live reservations of a feature (the wallet's, ADR 0070). */
export interface HeldQuantity {
  held(scope: Scope, customerId: string, featureId: string, requestId: string): Promise<string>;
}

export interface CustomerAccessDeps {
  db: Db;
  customers: CustomerDirectory;
  projection: ProjectionStore;
  /** The aggregator's usage. */
  meters: Meters;
  clock: () => Date;
  /** The replica's cache of grants and usage (ADR 0025, 0026). */
  cache: AccessCache;
  /** Holds of hard limits; absent: the check counts none (`held` null). */
  holds?: HeldQuantity;
}

/**
 * What a customer may use: `GET /v1/customers/{id}/entitlements` and `POST /v1/entitlements/check`,
 * from the service's projection (ADR 0061) and the aggregator's usage.
 * The check's reads that miss the cache go in batches per tenant and environment (`Coalescer`,
 * ADR 0025): the grants of many customers in two statements, the usage of many in one call to
 * the aggregator.
 */
export class CustomerAccess {
  private readonly grantLoaders = new Map<string, Coalescer<string, CustomerGrants>>();
  private readonly usageLoaders = new Map<string, Coalescer<AskedUsage, string>>();
  private readonly db: Db;
  private readonly customers: CustomerDirectory;
  private readonly projection: ProjectionStore;
  private readonly meters: Meters;
  private readonly clock: () => Date;
  private readonly cache: AccessCache;
  private readonly holds?: HeldQuantity;

  constructor(deps: CustomerAccessDeps) {
    ({ db: this.db, customers: this.customers, projection: this.projection, meters: this.meters, clock: this.clock, cache: this.cache, holds: this.holds } = deps);
  }

  async ofCustomer(scope: Scope, customerId: string, requestId: string): Promise<CustomerFeature[]> {
    const customer = await this.customers.resolve(scope, { id: customerId }, requestId);
    const now = this.clock();
    const grants = await this.grants(scope, customer);
    const featureIds = grants.featureIds();
    const features = new Map((await this.projection.features(this.db, scope, featureIds)).filter((f) => f.status === 'active').map((f) => [f.id, f]));
    const combined = featureIds
      .filter((featureId) => features.has(featureId))
      .map((featureId) => combine(features.get(featureId)!, grants.of(featureId), now))
      .sort((a, b) => a.feature.lookupKey.localeCompare(b.feature.lookupKey));
    const metered = combined.filter((c) => c.window);
    const values = metered.length === 0 ? [] : await this.meters.usageMany(scope, metered.map((c) => this.usageQuery(customer, c.feature, c.window!)), requestId);
    const usage = new Map(metered.map((c, i) => [c.feature.id, toDecimalString(values[i])]));
    return combined.map((c) => ({ ...c, usage: usage.get(c.feature.id) ?? null }));
  }

  /**
   * allowed = enabled and (no limit, soft limit, or usage + held + quantity <= limit); remaining = limit − usage − held, where
   * held (a hard limit only) is the quantity of the customer's live reservations of the feature; `countHolds: false` leaves them out.
   */
  async check(scope: Scope, ref: CustomerRef, lookupKey: string, quantity: string, requestId: string, options: { countHolds?: boolean } = {}): Promise<CheckResult> {
    const feature = await this.cache.get(scope, null, `feature|${lookupKey}`, this.cache.grantsTtlMs(), () => this.projection.featureByLookupKey(this.db, scope, lookupKey));
    if (!feature || feature.status === 'archived') {
      throw new NotFoundError(`Feature with lookup_key "${lookupKey}" not found`, { field: 'feature_lookup_key', feature_lookup_key: lookupKey });
    }
    const refKey = 'id' in ref ? `id|${ref.id}` : `ext|${ref.externalId}`;
    const customer = await this.cache.getCustomer(scope, refKey, () => this.customers.resolve(scope, ref, requestId));
    const sources = (await this.grants(scope, customer)).of(feature.id);
    const c = combine(feature, sources, this.clock());
    const of = { entitlementIds: sources.map((s) => s.entitlement.id), externalCustomerId: customer.externalId };
    if (feature.type !== 'METERED') {
      return { allowed: c.isEnabled, feature, usage: null, held: null, limit: null, remaining: null, isSoftLimit: false, window: null, ...of };
    }
    if (!c.isEnabled) return { allowed: false, feature, usage: null, held: null, limit: '0', remaining: '0', isSoftLimit: false, window: null, ...of };
    const q = this.usageQuery(customer, feature, c.window!);
    const usage = await this.cache.getUsage(scope, customer.externalId, `${q.meterId}|${q.from.toISOString()}|${q.to.toISOString()}`, () =>
      this.usageLoader(scope).load({ query: q, requestId }),
    );
    const limit = c.usageLimit;
    const hard = limit !== null && !c.isSoftLimit;
    const held = hard && this.holds && options.countHolds !== false ? await this.holds.held(scope, customer.id, feature.id, requestId) : null;
    const counted = held === null ? exact(usage) : exact(usage).plus(held);
    const allowed = limit === null || c.isSoftLimit || counted.plus(quantity).lte(limit);
    const remaining = limit === null ? null : toDecimalString(exact(limit).minus(counted));
    return { allowed, feature, usage: toDecimalString(usage), held: held === null ? null : toDecimalString(held), limit, remaining, isSoftLimit: c.isSoftLimit, window: c.window, ...of };
  }

  private usageQuery(customer: KnownCustomer, feature: Feature, window: UsageWindow): MeterQuery {
    return { meterId: feature.meterId!, externalCustomerId: customer.externalId, from: window.start, to: window.end ?? OPEN_END, filterValues: null };
  }

  /** The customer's grants per feature id, over its active and trialing subscriptions (cached: `AccessCache`). */
  private grants(scope: Scope, customer: KnownCustomer): Promise<CustomerGrants> {
    return this.cache.get(scope, customer.id, 'grants', this.cache.grantsTtlMs(), () => this.grantLoader(scope).load(customer.id));
  }

  private grantLoader(scope: Scope): Coalescer<string, CustomerGrants> {
    const key = `${scope.tenantId}|${scope.environmentId}`;
    let loader = this.grantLoaders.get(key);
    if (!loader) {
      loader = new Coalescer((customerIds) => this.loadGrants(scope, customerIds));
      this.grantLoaders.set(key, loader);
    }
    return loader;
  }

  /** The grants of each customer of `customerIds`, in their order: two statements for all. */
  private async loadGrants(scope: Scope, customerIds: string[]): Promise<CustomerGrants[]> {
    const subscriptions = await this.projection.grantingOfCustomers(this.db, scope, customerIds);
    const entitlements = await this.projection.entitlementsOfPlans(this.db, scope, [...new Set(subscriptions.map((s) => s.planId))]);
    const ofPlan = new Map<string, Map<string, Entitlement[]>>();
    for (const e of entitlements) {
      let byFeature = ofPlan.get(e.planId);
      if (!byFeature) ofPlan.set(e.planId, (byFeature = new Map()));
      const list = byFeature.get(e.featureId);
      if (list) list.push(e);
      else byFeature.set(e.featureId, [e]);
    }
    const ofCustomer = new Map<string, GrantingSubscription[]>();
    for (const subscription of subscriptions) {
      const list = ofCustomer.get(subscription.customerId);
      if (list) list.push(subscription);
      else ofCustomer.set(subscription.customerId, [subscription]);
    }
    return customerIds.map((id) => new CustomerGrants(ofCustomer.get(id) ?? [], ofPlan));
  }

  private usageLoader(scope: Scope): Coalescer<AskedUsage, string> {
    const key = `${scope.tenantId}|${scope.environmentId}`;
    let loader = this.usageLoaders.get(key);
    if (!loader) {
      loader = new Coalescer((asked) => usageInBatch(this.meters, scope, asked));
      this.usageLoaders.set(key, loader);
    }
    return loader;
  }
}
