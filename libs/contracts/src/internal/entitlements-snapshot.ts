import { z } from 'zod';
import { defineRoute } from '../routes';

/**
 * Billing's internal snapshot of what the entitlement check needs (ADR 0061): features,
 * entitlements and granting (active and trialing) subscriptions, each with its version, every
 * tenant's, paged by id. The entitlements service seeds its projection from it on its first
 * start and by `npm run seed -w @billstream/entitlements`; each row is applied only when newer
 * than what the projection holds, so the seed and billing-events commute. NOT in ALL_ROUTES:
 * the gateway does not route it; the internal token guards it and the tenant headers are not
 * read (the caller sends LINK_CONTEXT's `-`).
 */
export const SNAPSHOT_KINDS = ['features', 'entitlements', 'subscriptions'] as const;
export type SnapshotKind = (typeof SNAPSHOT_KINDS)[number];

export const entitlementsSnapshotQuery = z.strictObject({
  kind: z.enum(SNAPSHOT_KINDS),
  /** The last id of the previous page; absent: from the first. */
  after: z.string().min(1).max(255).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(500),
});

const scoped = { id: z.string(), tenant_id: z.string(), environment_id: z.string(), version: z.number().int() };
const date = z.string().nullable();

export const snapshotFeatureSchema = z.object({ ...scoped, lookup_key: z.string(), type: z.enum(['BOOLEAN', 'METERED', 'STATIC']), meter_id: z.string().nullable(), status: z.enum(['active', 'archived']) });
export const snapshotEntitlementSchema = z.object({
  ...scoped,
  plan_id: z.string(),
  feature_id: z.string(),
  is_enabled: z.boolean(),
  usage_limit: z.string().nullable(),
  usage_reset_period: z.enum(['BILLING_PERIOD', 'DAILY', 'MONTHLY', 'NEVER']).nullable(),
  is_soft_limit: z.boolean(),
  static_value: z.string().nullable(),
});
export const snapshotSubscriptionSchema = z.object({
  ...scoped,
  customer_id: z.string(),
  plan_id: z.string(),
  status: z.string(),
  start_date: date,
  current_period_start: date,
  current_period_end: date,
  created_at: z.string(),
});

export const entitlementsSnapshotResponse = z.object({
  items: z.array(z.record(z.string(), z.unknown())),
  /** The `after` of the next page; null on the last. */
  next_after: z.string().nullable(),
});
export type EntitlementsSnapshotPage = z.output<typeof entitlementsSnapshotResponse>;

export const billingSnapshotInternalApi = {
  entitlementsSnapshot: defineRoute({
    operationId: 'internalEntitlementsSnapshot',
    method: 'get',
    path: '/internal/v1/entitlements-snapshot',
    service: 'billing',
    permission: 'plans:read',
    summary: 'Features, entitlements and granting subscriptions with their versions, every tenant, paged by id',
    tag: 'Internal',
    query: entitlementsSnapshotQuery,
    response: entitlementsSnapshotResponse,
    status: 200,
    errors: [],
  }),
};
