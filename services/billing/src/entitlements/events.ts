import { TOPICS } from '@billstream/bus';
import type { Trx } from '@billstream/db';
import { newDomainEvent, writeOutbox, type EventContext } from '@billstream/outbox';
import type { Entitlement } from './domain';
import { toEntitlementView } from './view';

export type EntitlementEventType = 'entitlement.created' | 'entitlement.updated' | 'entitlement.deleted';

/**
 * Records an entitlement event in the outbox, keyed by the entitlement id (payload
 * `entitlement`), its version in the `resource-version` header: the version after the change,
 * and for `deleted` one past the last (the deletion is a change of its own).
 */
export async function announceEntitlement(trx: Trx, ctx: EventContext, type: EntitlementEventType, e: Entitlement): Promise<void> {
  await writeOutbox(trx, TOPICS.billingEvents, e.id, newDomainEvent(type, ctx, { entitlement: toEntitlementView(e) }), type === 'entitlement.deleted' ? e.version + 1 : e.version);
}
