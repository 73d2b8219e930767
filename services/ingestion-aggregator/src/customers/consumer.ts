import { TOPICS, type BatchHandler } from '@billstream/bus';
import { domainEventSchema, type Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { idempotentHandler } from '@billstream/outbox';
import { z } from 'zod';
import type { CustomerProjectionStore, ProjectedCustomer } from './store';

export const CUSTOMER_EVENTS_GROUP = 'ingestion-aggregator.customers';
export const CUSTOMER_TOPICS = [TOPICS.customerEvents];

const customerPayload = z.object({
  customer: z.object({ id: z.string().min(1), external_id: z.string().min(1) }),
});

type CustomerChange = { type: string; scope: Scope; customer: ProjectedCustomer };

function parseChange(value: string): CustomerChange {
  const event = domainEventSchema.parse(JSON.parse(value));
  const { customer } = customerPayload.parse(event.payload);
  return {
    type: event.type,
    scope: { tenantId: event.tenant_id, environmentId: event.environment_id },
    customer: { customerId: customer.id, externalId: customer.external_id, changedAt: event.occurred_at },
  };
}

/** Keeps the customer projection from customer-events, each message applied once. */
export function customerEventsHandler(db: Db, store: CustomerProjectionStore, logger: Logger): BatchHandler {
  return idempotentHandler<CustomerChange>({
    db,
    group: CUSTOMER_EVENTS_GROUP,
    logger,
    parse: (message) => parseChange(message.value),
    handle: async (trx, change) => {
      if (change.type === 'customer.deleted') {
        await store.markDeleted(trx, change.scope, change.customer);
        return;
      }
      if (change.type === 'customer.created' || change.type === 'customer.updated') {
        const filled = await store.upsert(trx, change.scope, change.customer);
        if (filled > 0) logger.info('filled customer_id of earlier events', { customer_id: change.customer.customerId, events: filled });
      }
    },
  });
}
