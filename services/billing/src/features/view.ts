import type { FeatureResponse } from '@billstream/contracts';
import type { Feature } from './domain';

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
