import type { DomainEvent } from '@billstream/contracts';
import type { Trx } from '@billstream/db';
import { newId } from '@billstream/ids';

export interface EventContext {
  tenantId: string;
  environmentId: string;
  actor: string;
}

export function newDomainEvent<P extends Record<string, unknown>>(
  type: string,
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
 * Records an event in the outbox inside the caller's transaction: it is published only
 * if that transaction commits. Key = the resource id, so one resource's events keep order.
 */
export async function writeOutbox(trx: Trx, topic: string, key: string, event: DomainEvent): Promise<void> {
  await trx('outbox').insert({
    id: event.id,
    topic,
    message_key: key,
    value: JSON.stringify(event),
    headers: JSON.stringify({ 'message-id': event.id, 'event-type': event.type }),
  });
}
