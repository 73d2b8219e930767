import { TOPICS } from '@billstream/bus';
import type { Trx } from '@billstream/db';
import { newDomainEvent, writeOutbox, type EventContext } from '@billstream/outbox';
import type { Feature } from './domain';
import { toFeatureView } from './view';

export type FeatureEventType = 'feature.created' | 'feature.updated' | 'feature.deleted';

/** Records a feature event in the outbox, keyed by the feature id (payload `feature`, as it is after the change; its version in the `resource-version` header). */
export async function announceFeature(trx: Trx, ctx: EventContext, type: FeatureEventType, f: Feature): Promise<void> {
  await writeOutbox(trx, TOPICS.billingEvents, f.id, newDomainEvent(type, ctx, { feature: toFeatureView(f) }), f.version);
}
