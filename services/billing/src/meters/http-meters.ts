import { Pool } from 'undici';
import type { Scope } from '@billstream/contracts';
import { ServiceUnavailableError } from '@billstream/errors';
import { INTERNAL_HEADERS } from '@billstream/http';
import type { Meters, UsageQuery } from './domain';

/**
 * The ingestion-aggregator's meter API, called with the internal headers: `GET /v1/meters/{id}`
 * (200 exists, 404 does not) and `POST /v1/meters/{id}/usage` with the price's filter_values.
 */
export class HttpMeters implements Meters {
  private pool?: Pool;

  constructor(
    private readonly baseUrl: () => string | undefined,
    private readonly internalToken: string,
    private readonly timeoutMs = 10_000,
  ) {}

  private connection(): Pool {
    if (!this.pool) {
      const url = this.baseUrl();
      if (!url) throw new ServiceUnavailableError('The ingestion service address is not configured');
      this.pool = new Pool(url, { connections: 16, headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs });
    }
    return this.pool;
  }

  private async call(scope: Scope, method: 'GET' | 'POST', path: string, requestId: string, body?: unknown) {
    try {
      const res = await this.connection().request({
        path,
        method,
        headers: {
          [INTERNAL_HEADERS.token]: this.internalToken,
          [INTERNAL_HEADERS.tenant]: scope.tenantId,
          [INTERNAL_HEADERS.environment]: scope.environmentId,
          [INTERNAL_HEADERS.actor]: 'billing',
          [INTERNAL_HEADERS.requestId]: requestId,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.statusCode, body: (await res.body.text()) || '{}' };
    } catch (err) {
      throw new ServiceUnavailableError('The ingestion service is unavailable; retry later', undefined, { cause: err });
    }
  }

  async exists(scope: Scope, meterId: string, requestId: string): Promise<boolean> {
    const { status } = await this.call(scope, 'GET', `/v1/meters/${encodeURIComponent(meterId)}`, requestId);
    if (status === 200) return true;
    if (status === 404) return false;
    throw new ServiceUnavailableError('The ingestion service could not confirm the meter; retry later', { upstream_status: status });
  }

  async usage(scope: Scope, meterId: string, q: UsageQuery, requestId: string): Promise<string> {
    const { status, body } = await this.call(scope, 'POST', `/v1/meters/${encodeURIComponent(meterId)}/usage`, requestId, {
      external_customer_id: q.externalCustomerId,
      start_time: q.from.toISOString(),
      end_time: q.to.toISOString(),
      ...(q.filterValues ? { filter_values: q.filterValues } : {}),
    });
    if (status !== 200) {
      throw new ServiceUnavailableError('The ingestion service could not give the usage; retry later', { upstream_status: status, meter_id: meterId });
    }
    return (JSON.parse(body) as { value: string }).value;
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }
}
