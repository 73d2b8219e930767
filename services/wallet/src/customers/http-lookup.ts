import type { Scope } from '@billstream/contracts';
import { ServiceUnavailableError } from '@billstream/errors';
import { InternalClient } from '@billstream/http';
import type { CustomerLookup } from './directory';

/** GET {customerServiceUrl}/v1/customers/{id} with the internal headers: 200 exists, 404 does not. */
export class HttpCustomerLookup implements CustomerLookup {
  private readonly client: InternalClient;

  constructor(baseUrl: () => string | undefined, internalToken: string, timeoutMs = 5000) {
    this.client = new InternalClient({ service: 'customer', baseUrl, internalToken, actor: 'wallet', timeoutMs });
  }

  async exists(scope: Scope, id: string, requestId: string): Promise<boolean> {
    const { status } = await this.client.call(scope, 'GET', `/v1/customers/${encodeURIComponent(id)}`, requestId);
    if (status === 200) return true;
    if (status === 404) return false;
    throw new ServiceUnavailableError('The customer service could not confirm the customer; retry later', { upstream_status: status });
  }

  /** GET {customerServiceUrl}/v1/customers/external/{external_id}: 200 its id, 404 none. */
  async idOfExternal(scope: Scope, externalId: string, requestId: string): Promise<string | undefined> {
    const { status, text } = await this.client.call(scope, 'GET', `/v1/customers/external/${encodeURIComponent(externalId)}`, requestId);
    if (status === 200) return (JSON.parse(text) as { id: string }).id;
    if (status === 404) return undefined;
    throw new ServiceUnavailableError('The customer service could not find the customer; retry later', { upstream_status: status });
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
