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

  close(): Promise<void> {
    return this.client.close();
  }
}
