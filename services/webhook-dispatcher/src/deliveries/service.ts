import type { WebhookDeliveryView, WebhookEventName } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { ServiceUnavailableError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import type { EventContext } from '@billstream/outbox';
import { testEnvelope, serializeEnvelope } from '../dispatch/envelope';
import type { WebhookSender } from '../dispatch/sender';
import type { EndpointService } from '../endpoints/service';
import { DeliveryStore, type DeliveryFilter, type DeliveryRecord } from './store';

/** A test attempt waits at most this long, so its answer gets back through the gateway. */
export const TEST_TIMEOUT_MS = 8000;

export function toDeliveryView(d: DeliveryRecord): WebhookDeliveryView {
  return {
    id: d.id,
    endpoint_id: d.endpointId,
    event_id: d.eventId,
    event_name: d.eventName,
    attempt: d.attempt,
    status: d.status,
    response_code: d.responseCode,
    error: d.error,
    duration_ms: d.durationMs,
    attempted_at: d.attemptedAt.toISOString(),
    retry_at: d.retryAt ? d.retryAt.toISOString() : null,
  };
}

/** Delivery records of an endpoint, and test deliveries. */
export class DeliveryService {
  private readonly store = new DeliveryStore();

  constructor(
    private readonly db: Db,
    private readonly endpoints: EndpointService,
    private readonly sender: WebhookSender,
  ) {}

  async list(scope: EventContext, endpointId: string, filter: DeliveryFilter, limit: number, offset: number) {
    await this.endpoints.get(scope, endpointId);
    return this.store.list(this.db, endpointId, filter, limit, offset);
  }

  /**
   * Sends a test envelope (fresh `evt_` id, `payload.test: true`) once, now, signed like
   * any delivery, even to a disabled endpoint, and records the attempt. No retry is planned.
   */
  async sendTest(scope: EventContext, endpointId: string, eventName: WebhookEventName): Promise<DeliveryRecord> {
    const endpoint = await this.endpoints.get(scope, endpointId);
    const envelope = testEnvelope(scope, eventName, endpoint.id, new Date());
    const outcome = await this.sender.send(
      { url: endpoint.url, secret: endpoint.secret, envelopeId: envelope.id, body: serializeEnvelope(envelope) },
      { timeoutMs: TEST_TIMEOUT_MS },
    );
    if (outcome.kind === 'aborted') throw new ServiceUnavailableError('The webhook service is stopping; retry the test');
    const record: DeliveryRecord = {
      id: newId('webhookDelivery'),
      endpointId: endpoint.id,
      eventId: envelope.id,
      eventName,
      attempt: 1,
      status: outcome.ok ? 'succeeded' : 'failed',
      responseCode: outcome.responseCode,
      error: outcome.error,
      durationMs: outcome.durationMs,
      attemptedAt: outcome.attemptedAt,
      retryAt: null,
    };
    await this.store.insert(this.db, [record]);
    return record;
  }
}
