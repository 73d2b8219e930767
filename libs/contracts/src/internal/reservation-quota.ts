import { z } from 'zod';
import { defineRoute } from '../routes';

/**
 * Internal endpoints of holds of METERED entitlements (docs/api/reservations.md, ADR 0070).
 * NOT in ALL_ROUTES: the gateway does not route them and the OpenAPI document does not show
 * them. Mounted like the public routes, behind the internal token and tenant headers.
 */

const customerFeature = z.strictObject({ customer_id: z.string().min(1).max(255), feature_id: z.string().min(1).max(255) });

/** What a hold of the feature may take: the check's limit and usage, without holds. */
export const quotaResponse = z.object({
  feature_id: z.string(),
  external_customer_id: z.string(),
  feature_lookup_key: z.string(),
  type: z.string(),
  meter_id: z.string().nullable(),
  is_enabled: z.boolean(),
  limit: z.string().nullable(),
  usage: z.string().nullable(),
  is_soft_limit: z.boolean(),
  entitlement_ids: z.array(z.string()),
  period_start: z.string().nullable(),
  period_end: z.string().nullable(),
});
export type QuotaResponse = z.infer<typeof quotaResponse>;

export const entitlementsQuotaInternalApi = {
  quota: defineRoute({
    operationId: 'internalEntitlementQuota',
    method: 'post',
    path: '/internal/v1/entitlements/quota',
    service: 'entitlements',
    permission: 'plans:read',
    summary: "A customer's limit and usage of a METERED feature, holds left out (the wallet's quantity holds)",
    tag: 'Internal',
    body: customerFeature,
    response: quotaResponse,
    status: 200,
    errors: [404],
  }),
};

export const walletHeldQuantityInternalApi = {
  held: defineRoute({
    operationId: 'internalHeldQuantity',
    method: 'post',
    path: '/internal/v1/reservations/held-quantity',
    service: 'wallet',
    permission: 'reservations:read',
    summary: 'The quantity held by the live reservations of a customer and feature (the entitlement check)',
    tag: 'Internal',
    body: customerFeature,
    response: z.object({ held: z.string() }),
    status: 200,
  }),
};
