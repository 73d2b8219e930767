import type { EntitlementResponse, FeatureResponse } from '@billstream/contracts';
import type { Entitlement, Feature } from './domain';

export function toFeatureView(f: Feature): FeatureResponse {
  return {
    id: f.id,
    name: f.name,
    lookup_key: f.lookupKey,
    type: f.type,
    meter_id: f.meterId,
    description: f.description,
    metadata: f.metadata,
    status: f.status,
    created_at: f.createdAt.toISOString(),
    updated_at: f.updatedAt.toISOString(),
    tenant_id: f.tenantId,
    environment_id: f.environmentId,
  };
}

export function toEntitlementView(e: Entitlement): EntitlementResponse {
  return {
    id: e.id,
    plan_id: e.planId,
    feature_id: e.featureId,
    feature_type: e.featureType,
    is_enabled: e.isEnabled,
    usage_limit: e.usageLimit,
    usage_reset_period: e.usageResetPeriod,
    is_soft_limit: e.isSoftLimit,
    static_value: e.staticValue,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
    tenant_id: e.tenantId,
    environment_id: e.environmentId,
  };
}
