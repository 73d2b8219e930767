import { ingestionInternalApi, type Scope } from '@billstream/contracts';
import { NotFoundError, ServiceUnavailableError } from '@billstream/errors';
import { InternalClient } from '@billstream/http';
import type { Meters, UsageQuery } from './domain';

/**
 * The ingestion-aggregator's meter API, called with the internal headers: `GET /v1/meters/{id}`
 * (200 exists, 404 does not) and `POST /v1/meters/{id}/usage` with the price's filter_values.
 */
/** Queries per batch call (the endpoint's limit). */
const USAGE_BATCH = 1000;

export class HttpMeters implements Meters {
  private readonly client: InternalClient;

  constructor(baseUrl: () => string | undefined, internalToken: string, timeoutMs = 10_000) {
    this.client = new InternalClient({ service: 'ingestion', baseUrl, internalToken, actor: 'billing', timeoutMs });
  }

  async exists(scope: Scope, meterId: string, requestId: string): Promise<boolean> {
    const { status } = await this.client.call(scope, 'GET', `/v1/meters/${encodeURIComponent(meterId)}`, requestId);
    if (status === 200) return true;
    if (status === 404) return false;
    throw new ServiceUnavailableError('The ingestion service could not confirm the meter; retry later', { upstream_status: status });
  }

  async aggregation(scope: Scope, meterId: string, requestId: string): Promise<string | undefined> {
    const { status, text } = await this.client.call(scope, 'GET', `/v1/meters/${encodeURIComponent(meterId)}`, requestId);
    if (status === 404) return undefined;
    if (status !== 200) throw new ServiceUnavailableError('The ingestion service could not give the meter; retry later', { upstream_status: status });
    return (JSON.parse(text) as { aggregation: { type: string } }).aggregation.type;
  }

  async usage(scope: Scope, meterId: string, q: UsageQuery, requestId: string): Promise<string> {
    const { status, text } = await this.client.call(scope, 'POST', `/v1/meters/${encodeURIComponent(meterId)}/usage`, requestId, {
      external_customer_id: q.externalCustomerId,
      start_time: q.from.toISOString(),
      end_time: q.to.toISOString(),
      ...(q.filterValues ? { filter_values: q.filterValues } : {}),
    });
    if (status !== 200) {
      throw new ServiceUnavailableError('The ingestion service could not give the usage; retry later', { upstream_status: status, meter_id: meterId });
    }
    return (JSON.parse(text) as { value: string }).value;
  }

  async usageMany(scope: Scope, queries: Array<UsageQuery & { meterId: string }>, requestId: string): Promise<string[]> {
    const values: string[] = [];
    for (let at = 0; at < queries.length; at += USAGE_BATCH) {
      const chunk = queries.slice(at, at + USAGE_BATCH);
      const { status, text } = await this.client.call(scope, 'POST', ingestionInternalApi.usageBatch.path, requestId, {
        queries: chunk.map((q) => ({
          meter_id: q.meterId,
          external_customer_id: q.externalCustomerId,
          start_time: q.from.toISOString(),
          end_time: q.to.toISOString(),
          ...(q.filterValues ? { filter_values: q.filterValues } : {}),
        })),
      });
      if (status === 404) throw new NotFoundError('The ingestion service does not know a meter of the batch', { upstream_status: status });
      if (status !== 200) throw new ServiceUnavailableError('The ingestion service could not give the usage; retry later', { upstream_status: status });
      const answer = JSON.parse(text) as { values: Array<{ value: string }> };
      if (answer.values.length !== chunk.length) throw new ServiceUnavailableError('The ingestion service answered another number of usage values; retry later');
      for (const v of answer.values) values.push(v.value);
    }
    return values;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
