import type { CustomerView } from '@billstream/contracts';
import type { Customer } from './customer';

/** The public JSON of a customer: GET responses and `payload.customer` of its events. */
export function toCustomerView(c: Customer): CustomerView {
  return {
    id: c.id,
    external_id: c.externalId,
    name: c.name,
    email: c.email,
    address_line1: c.address.line1,
    address_line2: c.address.line2,
    address_city: c.address.city,
    address_state: c.address.state,
    address_postal_code: c.address.postalCode,
    address_country: c.address.country,
    tax_ids: c.taxIds.map((t) => ({ type: t.type, value: t.value })),
    tax_exempt: c.taxExempt,
    tax_rate_ids: [...c.taxRateIds],
    parent_customer_id: c.parentCustomerId,
    metadata: c.metadata,
    status: c.status,
    tenant_id: c.tenantId,
    environment_id: c.environmentId,
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}
