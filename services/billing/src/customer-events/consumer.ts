import { TOPICS, type Bus, type Subscription } from '@billstream/bus';
import { domainEventSchema } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { idempotentHandler } from '@billstream/outbox';
import { z } from 'zod';
import type { DraftInvoice, InvoiceMaker } from '../invoices/maker';
import { cancel, stepsUntil } from '../subscriptions/lifecycle';
import { announce } from '../subscriptions/events';
import { SUBSCRIPTION_EVENTS } from '../subscriptions/domain';
import type { SubscriptionStore } from '../subscriptions/store';
import type { CustomerStore } from '../customers/store';

export const CUSTOMER_CONSUMER_GROUP = 'billing.customers';
const ADDRESS_FIELDS = ['address_line1', 'address_line2', 'address_city', 'address_state', 'address_postal_code', 'address_country'] as const;

const customerEvent = domainEventSchema.extend({
  payload: z.object({
    customer: z.object({
      id: z.string(),
      external_id: z.string(),
      tenant_id: z.string().optional(),
      environment_id: z.string().optional(),
      // The hierarchy of include_children and invoicing_customer_id (ADR 0047).
      parent_customer_id: z.string().nullable().optional(),
      // The buyer of invoice documents (ADR 0045).
      name: z.string().nullable().optional(),
      email: z.string().nullable().optional(),
      ...Object.fromEntries(ADDRESS_FIELDS.map((f) => [f, z.string().nullable().optional()])),
      // What decides the rates its lines bear (docs/api/taxes.md#which-rates-a-line-bears); absent on older events.
      tax_exempt: z.enum(['none', 'exempt', 'reverse']).optional(),
      tax_ids: z.array(z.object({ type: z.string(), value: z.string() })).optional(),
      tax_rate_ids: z.array(z.string()).optional(),
    }),
  }),
});
type CustomerEvent = z.infer<typeof customerEvent>;

export interface CustomerConsumerDeps {
  db: Db;
  bus: Bus;
  logger: Logger;
  customers: CustomerStore;
  subscriptions: SubscriptionStore;
  clock: () => Date;
  /** Makes the closing invoices of the subscriptions a deletion cancels. */
  maker: InvoiceMaker;
  /** Called after a message that may have written subscription events. */
  published(): void;
}

/** A live subscription's cancellation, prepared before the transaction with the invoices it makes. */
interface PreparedCancel {
  id: string;
  version: number;
  change: ReturnType<typeof cancel>;
  drafts: DraftInvoice[];
}

/**
 * Keeps billing's customer projection from customer-events, each message applied once. A
 * deleted customer's subscriptions that are not cancelled yet are cancelled immediately
 * (`subscription.cancelled`, actor `system`) in the transaction that records the message,
 * with the invoices of periods that ended and the closing invoice of the running period
 * (SUBSCRIPTION_CANCEL: its ARREAR charges up to the deletion), so nothing is silently
 * dropped. Their usage is read from the aggregator before that transaction (`prepare`), never
 * inside it (ADR 0055); the transaction locks the subscriptions and, when one changed since,
 * fails, and the message is prepared and tried again (then dead-lettered after its attempts).
 */
export function subscribeCustomerEvents({ db, bus, logger, customers, subscriptions, clock, maker, published }: CustomerConsumerDeps): Promise<Subscription> {
  const handler = idempotentHandler<CustomerEvent, { now: Date; cancels: PreparedCancel[] }>({
    db,
    group: CUSTOMER_CONSUMER_GROUP,
    logger,
    parse: (message) => customerEvent.parse(JSON.parse(message.value)),
    async prepare(event) {
      const now = clock();
      if (event.type !== 'customer.deleted') return { now, cancels: [] };
      const { customer } = event.payload;
      const scope = { tenantId: customer.tenant_id ?? event.tenant_id, environmentId: customer.environment_id ?? event.environment_id };
      const cancels: PreparedCancel[] = [];
      for (const live of await subscriptions.liveOfCustomer(db, scope, customer.id)) {
        const prices = await maker.pricesOf(db, live);
        const steps = stepsUntil(live, now);
        const current = steps.at(-1)?.subscription ?? live;
        const change = cancel(current, now, 'immediately');
        const closing = await maker.forChange(current, change.subscription, prices, now, event.id);
        const drafts = [...(await maker.forSteps(live, steps, prices, now, event.id)), ...(closing ? [closing] : [])];
        cancels.push({ id: live.id, version: live.version, change, drafts });
      }
      return { now, cancels };
    },
    async handle(trx, event, _message, { now, cancels }) {
      const { customer } = event.payload;
      const scope = { tenantId: customer.tenant_id ?? event.tenant_id, environmentId: customer.environment_id ?? event.environment_id };
      if (event.type !== 'customer.deleted') {
        const c = customer as unknown as Record<string, string | null | undefined>;
        const address = Object.fromEntries(ADDRESS_FIELDS.map((f) => [f, c[f] ?? null]));
        const details = { name: c.name ?? null, email: c.email ?? null, address: Object.values(address).some((v) => v !== null) ? address : null };
        const tax = customer.tax_exempt === undefined ? undefined : { taxExempt: customer.tax_exempt, taxIds: customer.tax_ids ?? [], taxRateIds: customer.tax_rate_ids ?? [] };
        await customers.remember(trx, scope, customer.id, customer.external_id, now, details, customer.parent_customer_id, tax);
        return;
      }
      await customers.markDeleted(trx, scope, customer.id, customer.external_id, now);
      const locked = await subscriptions.liveOfCustomerForUpdate(trx, scope, customer.id);
      const unchanged = locked.length === cancels.length && locked.every((s, i) => s.id === cancels[i].id && s.version === cancels[i].version);
      if (!unchanged) throw new Error(`the subscriptions of customer ${customer.id} changed while their cancellation was prepared; preparing it again`);
      for (const { change, drafts } of cancels) {
        await announce(trx, { ...scope, actor: 'system' }, change.event, await subscriptions.save(trx, change.subscription));
        await maker.write(trx, drafts);
      }
      // A payer deleted anyway (the customer service asks billing first; this covers a subscription
      // made in that moment, or a customer service without BILLING_SERVICE_URL): each customer
      // pays its own subscription from now on (ADR 0047).
      for (const paid of await subscriptions.livePaidByForUpdate(trx, scope, customer.id)) {
        await announce(trx, { ...scope, actor: 'system' }, SUBSCRIPTION_EVENTS.updated, await subscriptions.dropPayer(trx, paid, now));
      }
    },
  });
  return bus.subscribe({
    groupId: CUSTOMER_CONSUMER_GROUP,
    topics: [TOPICS.customerEvents],
    handler: async (messages, ctx) => {
      await handler(messages, ctx);
      published();
    },
  });
}
