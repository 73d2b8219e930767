import { snapshotEntitlementSchema, snapshotFeatureSchema, snapshotSubscriptionSchema, type Scope } from '@billstream/contracts';
import type { Conn, Trx } from '@billstream/db';
import { toDecimalString } from '@billstream/money';
import type { z } from 'zod';
import type { Entitlement, Feature, GrantingSubscription, KnownCustomer } from './domain';

export type FeatureRecord = z.output<typeof snapshotFeatureSchema>;
export type EntitlementRecord = z.output<typeof snapshotEntitlementSchema> & { deleted?: boolean };
export type SubscriptionRecord = z.output<typeof snapshotSubscriptionSchema>;

const GRANTING = ['active', 'trialing'];
const scoped = (conn: Conn, table: string, scope: Scope) => conn(table).where({ tenant_id: scope.tenantId, environment_id: scope.environmentId });

const featureOf = (r: FeatureRecord): Feature => ({ id: r.id, tenantId: r.tenant_id, environmentId: r.environment_id, lookupKey: r.lookup_key, type: r.type, meterId: r.meter_id, status: r.status });
const entitlementOf = (r: EntitlementRecord): Entitlement => ({
  id: r.id,
  planId: r.plan_id,
  featureId: r.feature_id,
  isEnabled: r.is_enabled,
  usageLimit: r.usage_limit === null ? null : toDecimalString(r.usage_limit),
  usageResetPeriod: r.usage_reset_period,
  isSoftLimit: r.is_soft_limit,
  staticValue: r.static_value,
});
const subscriptionOf = (r: { id: string; customer_id: string; plan_id: string; start_date: Date | null; current_period_start: Date | null; current_period_end: Date | null; created_at: Date }): GrantingSubscription => ({
  id: r.id,
  customerId: r.customer_id,
  planId: r.plan_id,
  startDate: r.start_date,
  currentPeriodStart: r.current_period_start,
  currentPeriodEnd: r.current_period_end,
  createdAt: r.created_at,
});
const customerOf = (r: { id: string; tenant_id: string; environment_id: string; external_id: string; deleted_at: Date | null }): KnownCustomer => ({
  id: r.id,
  tenantId: r.tenant_id,
  environmentId: r.environment_id,
  externalId: r.external_id,
  deleted: r.deleted_at !== null,
});

/**
 * Writes `rows` where the projection holds an older version of them (or none) and answers the
 * rows written: a redelivered or older event, or a snapshot row older than an event applied
 * meanwhile, changes nothing (ADR 0061).
 */
async function upsertNewer<R extends { id: string }>(trx: Trx, table: string, rows: R[]): Promise<R[]> {
  if (rows.length === 0) return [];
  // One row per id: the newest of the batch.
  const newest = new Map<string, R>();
  for (const r of rows) {
    const seen = newest.get(r.id) as { version: number } | undefined;
    if (!seen || seen.version < (r as unknown as { version: number }).version) newest.set(r.id, r);
  }
  return trx(table)
    .insert([...newest.values()])
    .onConflict('id')
    .merge()
    .where(`${table}.version`, '<', trx.raw('excluded.version'))
    .returning('*');
}

/** The entitlements service's projection: the check's reads, and the versioned writes of its consumers and seed. */
export class ProjectionStore {
  async featureByLookupKey(conn: Conn, scope: Scope, lookupKey: string): Promise<Feature | undefined> {
    const row = await scoped(conn, 'features', scope).where({ lookup_key: lookupKey }).first();
    return row && featureOf(row as FeatureRecord);
  }

  async features(conn: Conn, scope: Scope, ids: string[]): Promise<Feature[]> {
    if (ids.length === 0) return [];
    return ((await scoped(conn, 'features', scope).whereIn('id', ids)) as FeatureRecord[]).map(featureOf);
  }

  /** The live entitlements of these plans, by id. */
  async entitlementsOfPlans(conn: Conn, scope: Scope, planIds: string[]): Promise<Entitlement[]> {
    if (planIds.length === 0) return [];
    return ((await scoped(conn, 'entitlements', scope).whereIn('plan_id', planIds).where({ deleted: false }).orderBy('id')) as EntitlementRecord[]).map(entitlementOf);
  }

  /** The active and trialing subscriptions of any of `customerIds`, by id. */
  async grantingOfCustomers(conn: Conn, scope: Scope, customerIds: string[]): Promise<GrantingSubscription[]> {
    if (customerIds.length === 0) return [];
    const rows = await scoped(conn, 'subscriptions', scope).whereIn('customer_id', [...new Set(customerIds)]).whereIn('status', GRANTING).orderBy('id');
    return rows.map(subscriptionOf);
  }

  putFeatures(trx: Trx, records: FeatureRecord[]): Promise<FeatureRecord[]> {
    return upsertNewer(
      trx,
      'features',
      records.map((r) => ({ id: r.id, tenant_id: r.tenant_id, environment_id: r.environment_id, lookup_key: r.lookup_key, type: r.type, meter_id: r.meter_id, status: r.status, version: r.version })),
    );
  }

  putEntitlements(trx: Trx, records: EntitlementRecord[]): Promise<EntitlementRecord[]> {
    return upsertNewer(
      trx,
      'entitlements',
      records.map((r) => ({
        id: r.id,
        tenant_id: r.tenant_id,
        environment_id: r.environment_id,
        plan_id: r.plan_id,
        feature_id: r.feature_id,
        is_enabled: r.is_enabled,
        usage_limit: r.usage_limit,
        usage_reset_period: r.usage_reset_period,
        is_soft_limit: r.is_soft_limit,
        static_value: r.static_value,
        deleted: r.deleted ?? false,
        version: r.version,
      })),
    );
  }

  putSubscriptions(trx: Trx, records: SubscriptionRecord[]): Promise<SubscriptionRecord[]> {
    return upsertNewer(
      trx,
      'subscriptions',
      records.map((r) => ({
        id: r.id,
        tenant_id: r.tenant_id,
        environment_id: r.environment_id,
        customer_id: r.customer_id,
        plan_id: r.plan_id,
        status: r.status,
        start_date: r.start_date,
        current_period_start: r.current_period_start,
        current_period_end: r.current_period_end,
        created_at: r.created_at,
        version: r.version,
      })),
    );
  }

  async customer(conn: Conn, id: string): Promise<KnownCustomer | undefined> {
    const row = await conn('customers').where({ id }).first();
    return row && customerOf(row);
  }

  async customersByIds(conn: Conn, ids: string[]): Promise<Map<string, KnownCustomer>> {
    if (ids.length === 0) return new Map();
    const rows = await conn('customers').whereIn('id', [...new Set(ids)]);
    return new Map(rows.map((r) => [r.id as string, customerOf(r)]));
  }

  /** Live customers of the scope by external id. */
  async customersByExternalIds(conn: Conn, scope: Scope, externalIds: string[]): Promise<Map<string, KnownCustomer>> {
    if (externalIds.length === 0) return new Map();
    const rows = await scoped(conn, 'customers', scope).whereNull('deleted_at').whereIn('external_id', [...new Set(externalIds)]);
    return new Map(rows.map((r) => [r.external_id as string, customerOf(r)]));
  }

  /** Records a customer that exists or changed its external id; never revives one known as deleted. */
  async remember(conn: Conn, scope: Scope, id: string, externalId: string, at: Date): Promise<void> {
    await conn('customers')
      .insert({ id, tenant_id: scope.tenantId, environment_id: scope.environmentId, external_id: externalId, updated_at: at })
      .onConflict('id')
      .merge({ external_id: externalId, updated_at: at });
  }

  /** Marks a customer deleted (the tombstone inserted when it was never seen). */
  async markDeleted(conn: Conn, scope: Scope, id: string, externalId: string, at: Date): Promise<void> {
    await conn('customers')
      .insert({ id, tenant_id: scope.tenantId, environment_id: scope.environmentId, external_id: externalId, deleted_at: at, updated_at: at })
      .onConflict('id')
      .merge({ deleted_at: at, updated_at: at });
  }
}
