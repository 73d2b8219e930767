import type { Scope } from '@billstream/contracts';
import { ServiceUnavailableError } from '@billstream/errors';
import { InternalClient } from '@billstream/http';
import type { CustomerRef } from '../projection/domain';

/** Asks the customer service for a customer the projection has not heard of yet (created a moment ago). */
export interface CustomerLookup {
  find(scope: Scope, ref: CustomerRef, requestId: string): Promise<{ id: string; externalId: string } | undefined>;
}

/** `GET /v1/customers/{id}` or `/v1/customers/external/{external_id}`: 200 found, 404 not. */
export class HttpCustomerLookup implements CustomerLookup {
  private readonly client: InternalClient;

  constructor(baseUrl: () => string | undefined, internalToken: string, timeoutMs = 5000) {
    this.client = new InternalClient({ service: 'customer', baseUrl, internalToken, actor: 'entitlements', timeoutMs });
  }

  async find(scope: Scope, ref: CustomerRef, requestId: string): Promise<{ id: string; externalId: string } | undefined> {
    const path = 'id' in ref ? `/v1/customers/${encodeURIComponent(ref.id)}` : `/v1/customers/external/${encodeURIComponent(ref.externalId)}`;
    const { status, text } = await this.client.call(scope, 'GET', path, requestId);
    if (status === 404) return undefined;
    if (status !== 200) throw new ServiceUnavailableError('The customer service could not confirm the customer; retry later', { upstream_status: status });
    const body = JSON.parse(text) as { id: string; external_id: string };
    return { id: body.id, externalId: body.external_id };
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
