import { Pool } from 'undici';
import type { Scope } from '@billstream/contracts';
import { ServiceUnavailableError } from '@billstream/errors';
import { INTERNAL_HEADERS } from '@billstream/http';
import type { CustomerLookup, CustomerRef } from './directory';

/** `GET /v1/customers/{id}` or `/v1/customers/external/{external_id}` on the customer service: 200 found, 404 not. */
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

  async find(scope: Scope, ref: CustomerRef, requestId: string): Promise<{ id: string; externalId: string } | undefined> {
    const path = 'id' in ref ? `/v1/customers/${encodeURIComponent(ref.id)}` : `/v1/customers/external/${encodeURIComponent(ref.externalId)}`;
    let status: number;
    let text: string;
    try {
      const res = await this.connection().request({
        path,
        method: 'GET',
        headers: {
          [INTERNAL_HEADERS.token]: this.internalToken,
          [INTERNAL_HEADERS.tenant]: scope.tenantId,
          [INTERNAL_HEADERS.environment]: scope.environmentId,
          [INTERNAL_HEADERS.actor]: 'billing',
          [INTERNAL_HEADERS.requestId]: requestId,
        },
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      throw new ServiceUnavailableError('The customer service is unavailable; retry later', undefined, { cause: err });
    }
    if (status === 404) return undefined;
    if (status !== 200) {
      throw new ServiceUnavailableError('The customer service could not confirm the customer; retry later', { upstream_status: status });
    }
    const body = JSON.parse(text) as { id: string; external_id: string };
    return { id: body.id, externalId: body.external_id };
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }
}
