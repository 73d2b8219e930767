import { TOPICS } from '@billstream/bus';
import type { Trx } from '@billstream/db';
import { NotFoundError } from '@billstream/errors';
import { newDomainEvent, writeOutbox, type EventContext } from '@billstream/outbox';
import type { Subscription, SubscriptionEventType } from './domain';
import { toSubscriptionView } from './view';

export function subscriptionNotFound(id: string): NotFoundError {
  return new NotFoundError(`Subscription ${id} not found`, { field: 'id', subscription_id: id });
}

/** Records a subscription event in the outbox, keyed by the subscription id (its events keep their order). */
export async function announce(trx: Trx, ctx: EventContext, type: SubscriptionEventType, s: Subscription): Promise<void> {
  const { key, event, version } = announcement(ctx, type, s);
  await writeOutbox(trx, TOPICS.billingEvents, key, event, version);
}

/** A subscription event, its outbox key and the subscription's version (the `resource-version` header), to insert with others in one statement. */
export function announcement(ctx: EventContext, type: SubscriptionEventType, s: Subscription) {
  return { key: s.id, event: newDomainEvent(type, ctx, { subscription: toSubscriptionView(s) }), version: s.version };
}

