import { z } from 'zod';
import { listResponse, metadataSchema, paginationQuery } from '../common';

/** Features and entitlements (docs/api/entitlements.md): request and response schemas. */
export const FEATURE_TYPES = ['BOOLEAN', 'METERED', 'STATIC'] as const;
export type FeatureType = (typeof FEATURE_TYPES)[number];
export const FEATURE_STATUSES = ['active', 'archived'] as const;
export const USAGE_RESET_PERIODS = ['BILLING_PERIOD', 'DAILY', 'MONTHLY', 'NEVER'] as const;
export type UsageResetPeriod = (typeof USAGE_RESET_PERIODS)[number];

const id = z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters');

/** A usage limit or quantity: a decimal string of 0 or more, at most 12 decimals. */
export const quantityString = z
  .string()
  .regex(/^(0|[1-9]\d{0,27})(\.\d{1,12})?$/, 'must be a decimal number of 0 or more written as a string, with at most 12 decimals, e.g. "1000"');

export const createFeatureBody = z
  .strictObject({
    name: z.string().trim().min(1, 'must not be empty').max(255),
    lookup_key: z.string().min(1, 'must not be empty').max(255),
    type: z.enum(FEATURE_TYPES),
    meter_id: id.optional(),
    description: z.string().max(1000).optional(),
    metadata: metadataSchema.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.type === 'METERED' && body.meter_id === undefined) {
      ctx.addIssue({ code: 'custom', path: ['meter_id'], message: 'is required for a METERED feature' });
    }
    if (body.type !== 'METERED' && body.meter_id !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['meter_id'], message: 'is allowed on METERED features only' });
    }
  })
  .meta({ examples: [{ name: 'API calls', lookup_key: 'api_calls', type: 'METERED', meter_id: 'meter_01JDQ8Z6Y4K2M9N3P5R7T9V1X3' }] });

/** `PUT /v1/features/{id}`: name, description, metadata; type, lookup_key and meter_id are fixed at creation. */
export const updateFeatureBody = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(255).optional(),
  description: z.string().max(1000).nullable().optional(),
  metadata: metadataSchema.optional(),
});

export const listFeaturesQuery = z.strictObject({
  ...paginationQuery,
  status: z.enum(FEATURE_STATUSES).optional(),
  type: z.enum(FEATURE_TYPES).optional(),
  lookup_key: z.string().min(1).max(255).optional(),
});

export const featureSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    lookup_key: z.string(),
    type: z.enum(FEATURE_TYPES),
    meter_id: z.string().nullable(),
    description: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    status: z.enum(FEATURE_STATUSES),
    created_at: z.string(),
    updated_at: z.string(),
    tenant_id: z.string(),
    environment_id: z.string(),
  })
  .meta({ id: 'Feature' });
export type FeatureResponse = z.infer<typeof featureSchema>;

/** The fields that depend on the feature's type; which ones a type allows is checked by the service. */
const grantFields = {
  is_enabled: z.boolean().optional(),
  usage_limit: quantityString.nullable().optional(),
  usage_reset_period: z.enum(USAGE_RESET_PERIODS).optional(),
  is_soft_limit: z.boolean().optional(),
  static_value: z.string().min(1, 'must not be empty').max(1000).optional(),
};

export const createEntitlementBody = z
  .strictObject({ plan_id: id, feature_id: id, ...grantFields })
  .meta({
    examples: [
      { plan_id: 'plan_01JDQ8Z6Y4K2M9N3P5R7T9V1X3', feature_id: 'feat_01JDQ8Z6Y4K2M9N3P5R7T9V1X4', usage_limit: '1000', usage_reset_period: 'MONTHLY', is_soft_limit: false },
    ],
  });

/** `PUT /v1/entitlements/{id}`: the grant fields; plan and feature are fixed (a change is a new entitlement). */
export const updateEntitlementBody = z.strictObject({ ...grantFields, static_value: grantFields.static_value.nullable() });

export const listEntitlementsQuery = z.strictObject({
  ...paginationQuery,
  plan_id: id.optional(),
  feature_id: id.optional(),
});

export const entitlementSchema = z
  .object({
    id: z.string(),
    plan_id: z.string(),
    feature_id: z.string(),
    feature_type: z.enum(FEATURE_TYPES),
    is_enabled: z.boolean(),
    usage_limit: z.string().nullable(),
    usage_reset_period: z.enum(USAGE_RESET_PERIODS).nullable(),
    is_soft_limit: z.boolean(),
    static_value: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    tenant_id: z.string(),
    environment_id: z.string(),
  })
  .meta({ id: 'Entitlement' });
export type EntitlementResponse = z.infer<typeof entitlementSchema>;

export const customerEntitlementSchema = z
  .object({
    feature_id: z.string(),
    feature_lookup_key: z.string(),
    type: z.enum(FEATURE_TYPES),
    is_enabled: z.boolean(),
    usage_limit: z.string().nullable(),
    usage: z.string().nullable(),
    is_soft_limit: z.boolean(),
    static_value: z.string().nullable(),
    usage_reset_period: z.enum(USAGE_RESET_PERIODS).nullable(),
    period_start: z.string().nullable(),
    period_end: z.string().nullable(),
    sources: z.array(z.object({ subscription_id: z.string(), entitlement_id: z.string() })),
  })
  .meta({ id: 'CustomerEntitlement' });
export const customerEntitlementsSchema = listResponse(customerEntitlementSchema);
export type CustomerEntitlementResponse = z.infer<typeof customerEntitlementSchema>;

export const checkEntitlementBody = z
  .strictObject({
    customer_id: id.optional(),
    external_customer_id: id.optional(),
    feature_lookup_key: z.string().min(1, 'must not be empty').max(255),
    quantity: quantityString.default('1'),
  })
  .superRefine((body, ctx) => {
    if ((body.customer_id === undefined) === (body.external_customer_id === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['customer_id'], message: 'exactly one of customer_id and external_customer_id is required' });
    }
  })
  .meta({ examples: [{ external_customer_id: 'acme-42', feature_lookup_key: 'api_calls', quantity: '1' }] });

export const entitlementCheckSchema = z
  .object({
    allowed: z.boolean(),
    feature_lookup_key: z.string(),
    type: z.enum(FEATURE_TYPES),
    usage: z.string().nullable(),
    /** METERED with a hard limit: the quantity of the customer's live reservations of the feature, counted in `remaining` and `allowed`; else null. */
    held: z.string().nullable(),
    limit: z.string().nullable(),
    remaining: z.string().nullable(),
    is_soft_limit: z.boolean(),
    period_start: z.string().nullable(),
    period_end: z.string().nullable(),
  })
  .meta({ id: 'EntitlementCheck' });
export type EntitlementCheckResponse = z.infer<typeof entitlementCheckSchema>;

export type CreateFeatureBody = z.output<typeof createFeatureBody>;
export type UpdateFeatureBody = z.output<typeof updateFeatureBody>;
export type CreateEntitlementBody = z.output<typeof createEntitlementBody>;
export type UpdateEntitlementBody = z.output<typeof updateEntitlementBody>;
export type CheckEntitlementBody = z.output<typeof checkEntitlementBody>;
