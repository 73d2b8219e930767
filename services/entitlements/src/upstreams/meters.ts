import { ingestionInternalApi, type Scope } from '@billstream/contracts';
import { NotFoundError, ServiceUnavailableError } from '@billstream/errors';
import { InternalClient } from '@billstream/http';

/** One usage read: a meter's value for one customer over [from, to). */
export interface UsageQuery {
  externalCustomerId: string;
  from: Date;
  to: Date;
  filterValues: Record<string, string[]> | null;
}

/** What the check asks of the ingestion-aggregator's meters (it owns them). */
export interface Meters {
  usage(scope: Scope, meterId: string, query: UsageQuery, requestId: string): Promise<string>;
  /** The values of many queries of one tenant and environment, in their order (at most 1000 a call). */
  usageMany(scope: Scope, queries: Array<UsageQuery & { meterId: string }>, requestId: string): Promise<string[]>;
}

/** Queries per batch call (the endpoint's limit). */
const USAGE_BATCH = 1000;

const wireQuery = (q: UsageQuery) => ({
  external_customer_id: q.externalCustomerId,
  start_time: q.from.toISOString(),
  end_time: q.to.toISOString(),
  ...(q.filterValues ? { filter_values: q.filterValues } : {}),
});

/** `POST /v1/meters/{id}/usage` and the internal usage batch of the ingestion-aggregator. */
export class HttpMeters implements Meters {
  private readonly client: InternalClient;

  constructor(baseUrl: () => string | undefined, internalToken: string, timeoutMs = 10_000) {
    this.client = new InternalClient({ service: 'ingestion', baseUrl, internalToken, actor: 'entitlements', timeoutMs });
  }

  async usage(scope: Scope, meterId: string, q: UsageQuery, requestId: string): Promise<string> {
    const { status, text } = await this.client.call(scope, 'POST', `/v1/meters/${encodeURIComponent(meterId)}/usage`, requestId, wireQuery(q));
    if (status !== 200) throw new ServiceUnavailableError('The ingestion service could not give the usage; retry later', { upstream_status: status, meter_id: meterId });
    return (JSON.parse(text) as { value: string }).value;
  }

  async usageMany(scope: Scope, queries: Array<UsageQuery & { meterId: string }>, requestId: string): Promise<string[]> {
    if (queries.length > USAGE_BATCH) {
      const parts: string[][] = [];
      for (let at = 0; at < queries.length; at += USAGE_BATCH) parts.push(await this.usageMany(scope, queries.slice(at, at + USAGE_BATCH), requestId));
      return parts.flat();
    }
    const { status, text } = await this.client.call(scope, 'POST', ingestionInternalApi.usageBatch.path, requestId, {
      queries: queries.map((q) => ({ meter_id: q.meterId, ...wireQuery(q) })),
    });
    if (status === 404) throw new NotFoundError('The ingestion service does not know a meter of the batch', { upstream_status: status });
    if (status !== 200) throw new ServiceUnavailableError('The ingestion service could not give the usage; retry later', { upstream_status: status });
    const values = (JSON.parse(text) as { values: Array<{ value: string }> }).values;
    if (values.length !== queries.length) throw new ServiceUnavailableError('The ingestion service answered another number of usage values; retry later');
    return values.map((v) => v.value);
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
