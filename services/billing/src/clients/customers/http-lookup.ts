import type { Scope } from '@billstream/contracts';
import { ServiceUnavailableError } from '@billstream/errors';
import { InternalClient } from '@billstream/http';
import type { CustomerLookup, CustomerRef, FoundCustomer } from './domain';

const ADDRESS_FIELDS = ['address_line1', 'address_line2', 'address_city', 'address_state', 'address_postal_code', 'address_country'] as const;

/** `GET /v1/customers/{id}` or `/v1/customers/external/{external_id}` on the customer service: 200 found, 404 not. */
export class HttpCustomerLookup implements CustomerLookup {
  private readonly client: InternalClient;

  constructor(baseUrl: () => string | undefined, internalToken: string, timeoutMs = 5000) {
    this.client = new InternalClient({ service: 'customer', baseUrl, internalToken, actor: 'billing', timeoutMs });
  }

  async find(scope: Scope, ref: CustomerRef, requestId: string): Promise<FoundCustomer | undefined> {
    const path = 'id' in ref ? `/v1/customers/${encodeURIComponent(ref.id)}` : `/v1/customers/external/${encodeURIComponent(ref.externalId)}`;
    const { status, text } = await this.client.call(scope, 'GET', path, requestId);
    if (status === 404) return undefined;
    if (status !== 200) {
      throw new ServiceUnavailableError('The customer service could not confirm the customer; retry later', { upstream_status: status });
    }
    const body = JSON.parse(text) as Record<string, unknown> & { id: string; external_id: string; parent_customer_id?: string | null };
    const found: FoundCustomer = { id: body.id, externalId: body.external_id, parentCustomerId: body.parent_customer_id ?? null };
    const str = (k: string): string | null => (typeof body[k] === 'string' ? (body[k] as string) : null);
    const address = Object.fromEntries(ADDRESS_FIELDS.map((f) => [f, str(f)]));
    found.details = { name: str('name'), email: str('email'), address: Object.values(address).some((v) => v !== null) ? address : null };
    const exempt = body.tax_exempt;
    if (exempt === 'none' || exempt === 'exempt' || exempt === 'reverse') {
      found.tax = { taxExempt: exempt, taxIds: Array.isArray(body.tax_ids) ? (body.tax_ids as Array<{ type: string; value: string }>) : [], taxRateIds: Array.isArray(body.tax_rate_ids) ? (body.tax_rate_ids as string[]) : [] };
    }
    return found;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
