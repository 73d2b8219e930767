import type { DomainEvent, Scope, WebhookEventName } from '@billstream/contracts';
import type { Knex, Trx } from '@billstream/db';
import { newId } from '@billstream/ids';
import { injectTraceHeaders, tracingEnabled } from '@billstream/observability';

/** The scope of a change and who made it (an API key id, or `system`). */
export interface EventContext extends Scope {
  actor: string;
}

/** A new event named `type` (one of the public webhook event names, so a misspelt name does not compile). */
export function newDomainEvent<P extends Record<string, unknown>>(
  type: WebhookEventName,
  ctx: EventContext,
  payload: P,
): DomainEvent<P> {
  return {
    id: newId('event'),
    type,
    tenant_id: ctx.tenantId,
    environment_id: ctx.environmentId,
    user_id: ctx.actor,
    occurred_at: new Date().toISOString(),
    payload,
  };
}

/**
 * The insert of events' outbox rows, to run inside the caller's transaction: they are
 * published only if that transaction commits. Key = the resource id, so one resource's
 * events keep their order.
 */
export function outboxInsert(trx: Trx, topic: string, key: string, events: DomainEvent[], version?: number): Knex.QueryBuilder {
  return outboxInsertMany(
    trx,
    topic,
    events.map((event) => ({ key, event, version })),
  );
}

/**
 * An event's item for the outbox: its key and, for an event announcing a versioned record, the
 * record's version after the change (header `resource-version`): a projection applies it only
 * when it is newer than what it holds, so redeliveries and a snapshot seeded meanwhile are
 * harmless (the entitlements service's projection, ADR 0061).
 */
export interface OutboxItem {
  key: string;
  event: DomainEvent;
  version?: number;
}

/** The header that carries an event's `OutboxItem.version`. */
export const RESOURCE_VERSION_HEADER = 'resource-version';

/** Like `outboxInsert`, for events of several resources (each with its own key) in one statement. */
export function outboxInsertMany(trx: Trx, topic: string, items: OutboxItem[]): Knex.QueryBuilder {
  // The trace of the change (W3C traceparent) travels with its events, through the relay, to every consumer.
  const trace = tracingEnabled() ? injectTraceHeaders({}) : undefined;
  return trx('outbox').insert(
    items.map(({ key, event, version }) => ({
      id: event.id,
      topic,
      message_key: key,
      value: JSON.stringify(event),
      headers: JSON.stringify({ 'message-id': event.id, 'event-type': event.type, ...(version === undefined ? {} : { [RESOURCE_VERSION_HEADER]: String(version) }), ...trace }),
    })),
  );
}

/** Records one event in the outbox inside the caller's transaction. */
export async function writeOutbox(trx: Trx, topic: string, key: string, event: DomainEvent, version?: number): Promise<void> {
  await outboxInsert(trx, topic, key, [event], version);
}
