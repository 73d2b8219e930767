import { entitlementsQuotaInternalApi, usageEventApi, type QuotaResponse, type Scope } from '@billstream/contracts';
import { NotFoundError, ServiceUnavailableError } from '@billstream/errors';
import { InternalClient } from '@billstream/http';

/** A meter as a commit by quantity needs it: the event it counts and how (ingestion-aggregator's). */
export interface MeterShape {
  eventName: string;
  aggregation: { type: string; field: string | null };
}

/** What holds of entitlements ask of other services (ADR 0070): the check's quota, the meter, whether an event is stored. */
export interface QuotaUpstreams {
  /** The limit and usage of the customer's METERED feature, holds left out (the entitlements service). */
  quota(scope: Scope, customerId: string, featureId: string, requestId: string): Promise<QuotaResponse>;
  meter(scope: Scope, meterId: string, requestId: string): Promise<MeterShape>;
  /** Whether the aggregator stored the event `eventId` of the customer, named `eventName`, at `timestamp`. */
  stored(scope: Scope, event: { eventId: string; eventName: string; externalCustomerId: string; timestamp: string }, requestId: string): Promise<boolean>;
  close(): Promise<void>;
}

type Url = () => string | undefined;

export class HttpQuotaUpstreams implements QuotaUpstreams {
  private readonly entitlements: InternalClient;
  private readonly ingestion: InternalClient;

  constructor(entitlementsUrl: Url, ingestionUrl: Url, internalToken: string) {
    this.entitlements = new InternalClient({ service: 'entitlements', baseUrl: entitlementsUrl, internalToken, actor: 'wallet', timeoutMs: 10_000 });
    this.ingestion = new InternalClient({ service: 'ingestion', baseUrl: ingestionUrl, internalToken, actor: 'wallet', timeoutMs: 10_000 });
  }

  async quota(scope: Scope, customerId: string, featureId: string, requestId: string): Promise<QuotaResponse> {
    const { status, text } = await this.entitlements.call(scope, 'POST', entitlementsQuotaInternalApi.quota.path, requestId, { customer_id: customerId, feature_id: featureId });
    if (status === 404) {
      const details = (JSON.parse(text) as { error?: { details?: Record<string, unknown> } }).error?.details ?? {};
      throw new NotFoundError(`Feature ${featureId} not found`, { field: details.field === 'customer_id' ? 'customer_id' : 'feature_id', feature_id: featureId });
    }
    if (status !== 200) throw new ServiceUnavailableError('The entitlements service could not give the quota; retry later', { upstream_status: status });
    return JSON.parse(text) as QuotaResponse;
  }

  async meter(scope: Scope, meterId: string, requestId: string): Promise<MeterShape> {
    const { status, text } = await this.ingestion.call(scope, 'GET', `/v1/meters/${encodeURIComponent(meterId)}`, requestId);
    if (status !== 200) throw new ServiceUnavailableError('The ingestion service could not give the meter; retry later', { upstream_status: status, meter_id: meterId });
    const m = JSON.parse(text) as { event_name: string; aggregation: { type: string; field: string | null } };
    return { eventName: m.event_name, aggregation: m.aggregation };
  }

  async stored(scope: Scope, e: { eventId: string; eventName: string; externalCustomerId: string; timestamp: string }, requestId: string): Promise<boolean> {
    const at = Date.parse(e.timestamp);
    const { status, text } = await this.ingestion.call(scope, 'POST', usageEventApi.query.path, requestId, {
      external_customer_id: e.externalCustomerId,
      event_name: e.eventName,
      start_time: new Date(at).toISOString(),
      end_time: new Date(at + 1).toISOString(),
      page_size: 1000,
    });
    if (status !== 200) throw new ServiceUnavailableError('The ingestion service could not query events; retry later', { upstream_status: status });
    return (JSON.parse(text) as { events: Array<{ id: string }> }).events.some((x) => x.id === e.eventId);
  }

  async close(): Promise<void> {
    await this.entitlements.close();
    await this.ingestion.close();
  }
}
