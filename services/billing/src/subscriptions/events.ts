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
  await writeOutbox(trx, TOPICS.billingEvents, s.id, newDomainEvent(type, ctx, { subscription: toSubscriptionView(s) }));
}

