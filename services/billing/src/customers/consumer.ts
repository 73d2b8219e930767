import { TOPICS, type Bus, type Subscription } from '@billstream/bus';
import { domainEventSchema } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { idempotentHandler } from '@billstream/outbox';
import { z } from 'zod';
import type { CustomerStore } from './store';

export const CUSTOMER_CONSUMER_GROUP = 'billing.customers';

const customerEvent = domainEventSchema.extend({
  payload: z.object({
    customer: z.object({ id: z.string(), external_id: z.string(), tenant_id: z.string().optional(), environment_id: z.string().optional() }),
  }),
});
type CustomerEvent = z.infer<typeof customerEvent>;

/** Keeps billing's customer projection from customer-events, each message applied once. */
export function subscribeCustomerEvents(db: Db, bus: Bus, logger: Logger, customers: CustomerStore, clock: () => Date): Promise<Subscription> {
  const handler = idempotentHandler<CustomerEvent>({
    db,
    group: CUSTOMER_CONSUMER_GROUP,
    logger,
    parse: (message) => customerEvent.parse(JSON.parse(message.value)),
    async handle(trx, event) {
      const { customer } = event.payload;
      const scope = { tenantId: customer.tenant_id ?? event.tenant_id, environmentId: customer.environment_id ?? event.environment_id };
      if (event.type === 'customer.deleted') await customers.markDeleted(trx, scope, customer.id, customer.external_id, clock());
      else await customers.remember(trx, scope, customer.id, customer.external_id, clock());
    },
  });
  return bus.subscribe({ groupId: CUSTOMER_CONSUMER_GROUP, topics: [TOPICS.customerEvents], handler });
}
