import type { PlanResponse } from '@billstream/contracts';
import { toPriceView } from '../prices/view';
import type { PlanWithPrices } from './domain';

export function toPlanView(p: PlanWithPrices): PlanResponse {
  return {
    id: p.id,
    name: p.name,
    lookup_key: p.lookupKey,
    description: p.description,
    metadata: p.metadata,
    status: p.status,
    prices: p.prices.map(toPriceView),
    tax_rate_ids: [...p.taxRateIds],
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
    tenant_id: p.tenantId,
    environment_id: p.environmentId,
  };
}
