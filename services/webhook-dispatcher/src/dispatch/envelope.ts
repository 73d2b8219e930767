import { WEBHOOK_EVENT_NAMES, type DomainEvent, type ReceivedDomainEvent, type WebhookEventName } from '@billstream/contracts';
import { newId } from '@billstream/ids';
import type { EventContext } from '@billstream/outbox';

/** The webhook event envelope of the spec; `id` is the same on every attempt. */
export interface Envelope {
  id: string;
  event_name: WebhookEventName;
  tenant_id: string;
  environment_id: string;
  user_id: string;
  timestamp: string;
  payload: Record<string, unknown>;
}

const PUBLIC_NAMES = new Set<string>(WEBHOOK_EVENT_NAMES);

/** Whether a consumed event has a public name, the only events sent as webhooks. */
export function isPublicEvent(event: ReceivedDomainEvent): event is DomainEvent {
  return PUBLIC_NAMES.has(event.type);
}

/** The envelope of a domain event: its id, name, scope and actor, its time and payload. */
export function envelopeOf(event: DomainEvent): Envelope {
  return {
    id: event.id,
    event_name: event.type,
    tenant_id: event.tenant_id,
    environment_id: event.environment_id,
    user_id: event.user_id,
    timestamp: new Date(event.occurred_at).toISOString(),
    payload: event.payload,
  };
}

/** A test envelope: a fresh `evt_` id and `payload.test: true`. */
export function testEnvelope(
  scope: EventContext,
  eventName: WebhookEventName,
  endpointId: string,
  now: Date,
): Envelope {
  return {
    id: newId('event'),
    event_name: eventName,
    tenant_id: scope.tenantId,
    environment_id: scope.environmentId,
    user_id: scope.actor,
    timestamp: now.toISOString(),
    payload: { test: true, webhook_endpoint_id: endpointId },
  };
}

/** The exact bytes sent (and signed); built once and stored, so every retry sends the same. */
export function serializeEnvelope(envelope: Envelope): string {
  return JSON.stringify(envelope);
}
