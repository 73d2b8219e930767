import type { WebhookDeliveryView, WebhookEventName } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { NotFoundError, ServiceUnavailableError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import type { EventContext } from '@billstream/outbox';
import { testEnvelope, serializeEnvelope } from '../dispatch/envelope';
import type { AttemptOutcome, WebhookSender } from '../dispatch/sender';
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

  /** Failed attempts of the scope's endpoints over the last `hours`: the overview's failing webhooks. */
  async failures(scope: EventContext, hours: number) {
    const since = new Date(Date.now() - hours * 3_600_000);
    const found = await this.store.failures(this.db, scope.tenantId, scope.environmentId, since, 20);
    return {
      since: since.toISOString(),
      failed_attempts: found.failed,
      endpoints: found.endpoints.map((e) => ({ endpoint_id: e.endpointId, url: e.url, failed_attempts: e.failed, last_failed_at: e.lastFailedAt.toISOString(), last_error: e.lastError })),
    };
  }

  /**
   * Sends the event of one of the endpoint's attempts again, now: the stored envelope's exact
   * bytes, signed as every delivery, recorded as the event's next attempt (no retry planned; a
   * retry already planned keeps its schedule). Another tenant's endpoint or attempt is a 404, and
   * so is an event whose envelope is not kept (a test delivery, or one older than the retention).
   */
  async resend(scope: EventContext, endpointId: string, deliveryId: string): Promise<DeliveryRecord> {
    const endpoint = await this.endpoints.get(scope, endpointId);
    const delivery = await this.store.get(this.db, endpoint.id, deliveryId);
    if (!delivery) throw new NotFoundError(`Webhook delivery ${deliveryId} not found`, { field: 'delivery_id', value: deliveryId });
    const body = await this.store.envelope(this.db, delivery.eventId, scope.tenantId, scope.environmentId);
    if (body === undefined) {
      throw new NotFoundError(`The envelope of event ${delivery.eventId} is no longer kept (a test delivery, or past the retention): it cannot be resent`, { field: 'delivery_id', value: deliveryId });
    }
    const outcome = await this.sender.send({ url: endpoint.url, secret: endpoint.secret, envelopeId: delivery.eventId, body }, { timeoutMs: TEST_TIMEOUT_MS });
    if (outcome.kind === 'aborted') throw new ServiceUnavailableError('The webhook service is stopping; retry the resend');
    return this.recordAttempt(endpoint.id, delivery.eventId, delivery.eventName, (await this.store.lastAttempt(this.db, endpoint.id, delivery.eventId)) + 1, outcome);
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
    return this.recordAttempt(endpoint.id, envelope.id, eventName, 1, outcome);
  }

  /** Records a sent attempt (a test's or a resend's: no retry is planned after it). */
  private async recordAttempt(endpointId: string, eventId: string, eventName: DeliveryRecord['eventName'], attempt: number, outcome: Extract<AttemptOutcome, { kind: 'done' }>): Promise<DeliveryRecord> {
    const record: DeliveryRecord = {
      id: newId('webhookDelivery'),
      endpointId,
      eventId,
      eventName,
      attempt,
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
