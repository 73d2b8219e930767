import { TOPICS, type Bus, type Subscription } from '@billstream/bus';
import { domainEventSchema, type ReceivedDomainEvent } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { idempotentHandler } from '@billstream/outbox';
import { z } from 'zod';
import { WALLET_EVENTS } from '../events';
import type { Ledger } from '../ledger/ledger';
import { terminate } from '../ledger/terminate';
import type { WalletStore } from '../wallets/store';
import type { CustomerStore } from './store';

export const CUSTOMER_CONSUMER_GROUP = 'wallet.customers';

const customerPayload = z.object({
  customer: z.object({ id: z.string(), tenant_id: z.string().optional(), environment_id: z.string().optional() }),
});

interface CustomerEvent {
  event: ReceivedDomainEvent;
  customerId: string;
  tenantId: string;
  environmentId: string;
}

function parseCustomerEvent(value: string): CustomerEvent {
  const event = domainEventSchema.parse(JSON.parse(value));
  const { customer } = customerPayload.parse(event.payload);
  return {
    event,
    customerId: customer.id,
    tenantId: customer.tenant_id ?? event.tenant_id,
    environmentId: customer.environment_id ?? event.environment_id,
  };
}

export interface CustomerConsumerDeps {
  db: Db;
  bus: Bus;
  logger: Logger;
  customers: CustomerStore;
  wallets: WalletStore;
  ledger: Ledger;
  /** Called after a batch that may have written wallet events. */
  published(): void;
}

/**
 * Keeps the customer projection from customer-events; a deleted customer's open wallets
 * are terminated (remaining credits debited, wallet.terminated) in the same transaction
 * that records the message as processed.
 */
export async function subscribeCustomerEvents(deps: CustomerConsumerDeps): Promise<Subscription> {
  const { db, bus, logger, customers, wallets, ledger } = deps;
  const handler = idempotentHandler<CustomerEvent>({
    db,
    group: CUSTOMER_CONSUMER_GROUP,
    logger,
    parse: (message) => parseCustomerEvent(message.value),
    async handle(trx, { event, customerId, tenantId, environmentId }) {
      const scope = { tenantId, environmentId };
      const at = ledger.clock();
      if (event.type !== 'customer.deleted') {
        await customers.remember(trx, scope, customerId, at);
        return;
      }
      await customers.markDeleted(trx, scope, customerId, at);
      const ctx = { ...scope, actor: event.user_id };
      for (const walletId of await wallets.openWalletIdsOfCustomer(trx, scope, customerId)) {
        await ledger.changeIn(trx, ctx, walletId, async (change) => {
          await terminate(change);
          change.announceWallet(WALLET_EVENTS.terminated);
        });
      }
    },
  });
  return bus.subscribe({
    groupId: CUSTOMER_CONSUMER_GROUP,
    topics: [TOPICS.customerEvents],
    handler: async (messages, ctx) => {
      await handler(messages, ctx);
      deps.published();
    },
  });
}
