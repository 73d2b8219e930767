import type { EntitlementResponse } from '@billstream/contracts';
import type { Entitlement } from './domain';

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
