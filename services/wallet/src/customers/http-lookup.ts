import { Pool } from 'undici';
import { ServiceUnavailableError } from '@billstream/errors';
import { INTERNAL_HEADERS } from '@billstream/http';
import type { Scope } from '@billstream/contracts';
import type { CustomerLookup } from './directory';

/** GET {customerServiceUrl}/v1/customers/{id} with the internal headers: 200 exists, 404 does not. */
export class HttpCustomerLookup implements CustomerLookup {
  private pool?: Pool;

  constructor(
    private readonly baseUrl: () => string | undefined,
    private readonly internalToken: string,
    private readonly timeoutMs = 5000,
  ) {}

  private connection(): Pool {
    if (!this.pool) {
      const url = this.baseUrl();
      if (!url) throw new ServiceUnavailableError('The customer service address is not configured');
      this.pool = new Pool(url, { connections: 16, headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs });
    }
    return this.pool;
  }

  async exists(scope: Scope, id: string, requestId: string): Promise<boolean> {
    let status: number;
    try {
      const res = await this.connection().request({
        path: `/v1/customers/${encodeURIComponent(id)}`,
        method: 'GET',
        headers: {
          [INTERNAL_HEADERS.token]: this.internalToken,
          [INTERNAL_HEADERS.tenant]: scope.tenantId,
          [INTERNAL_HEADERS.environment]: scope.environmentId,
          [INTERNAL_HEADERS.actor]: 'wallet',
          [INTERNAL_HEADERS.requestId]: requestId,
        },
      });
      status = res.statusCode;
      await res.body.dump();
    } catch (err) {
      throw new ServiceUnavailableError('The customer service is unavailable; retry later', undefined, { cause: err });
    }
    if (status === 200) return true;
    if (status === 404) return false;
    throw new ServiceUnavailableError('The customer service could not confirm the customer; retry later', { upstream_status: status });
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }
}
