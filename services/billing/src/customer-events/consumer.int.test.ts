import { InProcessBus, TOPICS, type Subscription as BusSubscription } from '@billstream/bus';
import type { WebhookEventName } from '@billstream/contracts';
import { newDomainEvent } from '@billstream/outbox';
import { CTX, ENVIRONMENT, TENANT, monthlyFixed, startBillingHarness, type BillingHarness } from '../testing/harness';
import { CustomerStore } from '../customers/store';

function customerEvent(type: WebhookEventName, id: string, externalId: string, parent: string | null = null) {
  const event = newDomainEvent(type, { tenantId: TENANT, environmentId: ENVIRONMENT, actor: 'key_x' }, {
    customer: { id, external_id: externalId, tenant_id: TENANT, environment_id: ENVIRONMENT, parent_customer_id: parent },
  });
  return { key: id, value: JSON.stringify(event), headers: { 'message-id': event.id, 'event-type': type } };
}

describe('customer projection from customer-events (real Postgres)', () => {
  let h: BillingHarness;
  let bus: InProcessBus;
  let consumer: BusSubscription;
  let planId: string;

  beforeAll(async () => {
    h = await startBillingHarness('2026-03-01T00:00:00Z');
    bus = new InProcessBus();
    await bus.start();
    consumer = await h.service.consumeCustomerEvents(bus);
    planId = (await h.service.plans.create(CTX, { name: 'P', lookupKey: null, description: null, metadata: {}, prices: [monthlyFixed] }, 'r')).id;
  });
  afterAll(async () => {
    await consumer?.stop();
    await bus?.stop();
    await h?.stop();
  });

  const subscribe = (customer: { id: string } | { externalId: string }) =>
    h.service.subscriptions.create(CTX, {
      customer,
      planId,
      billingCycle: 'anniversary',
      timezone: 'UTC',
      paymentTermsDays: 0,
      draft: false,
      metadata: {},
    });

  it('learns a customer and its external id; a subscription finds it by either', async () => {
    await bus.publish(TOPICS.customerEvents, [customerEvent('customer.created', 'cust_ev1', 'acme')]);
    expect((await subscribe({ id: 'cust_ev1' })).customerId).toBe('cust_ev1');
    expect((await subscribe({ externalId: 'acme' })).customerId).toBe('cust_ev1');
  });

  it('follows a changed external id, applies a redelivered message once, and forgets a deleted customer, cancelling its subscriptions', async () => {
    const renamed = customerEvent('customer.updated', 'cust_ev1', 'acme-2');
    await bus.publish(TOPICS.customerEvents, [renamed]);
    const running = await subscribe({ externalId: 'acme-2' });
    expect(running.customerId).toBe('cust_ev1');
    const draft = await h.service.subscriptions.create(CTX, {
      customer: { id: 'cust_ev1' },
      planId,
      billingCycle: 'anniversary',
      timezone: 'UTC',
      paymentTermsDays: 0,
      draft: true,
      metadata: {},
    });
    const deleted = customerEvent('customer.deleted', 'cust_ev1', 'acme-2');
    // Deleted after the first period ended: that period's invoice is made with the cancel, not dropped.
    h.clock.set('2026-04-10T00:00:00Z');
    await bus.publish(TOPICS.customerEvents, [deleted]);
    await bus.publish(TOPICS.customerEvents, [deleted, renamed]);
    expect(await h.db('processed_messages').where({ consumer_group: 'billing.customers' })).toHaveLength(3);
    for (const s of [running, draft]) {
      expect((await h.service.subscriptions.get(CTX, s.id)).status).toBe('cancelled');
      const cancelled = (await h.events(s.id)).filter((e) => e.type === 'subscription.cancelled');
      expect(cancelled).toHaveLength(1);
    }
    expect(await h.db('subscriptions').where({ customer_id: 'cust_ev1' }).whereNot({ status: 'cancelled' })).toHaveLength(0);
    const invoices = await h.db('invoices').where({ subscription_id: running.id }).orderBy('created_at');
    expect(invoices.map((i: { billing_reason: string; period_start: Date }) => [i.billing_reason, i.period_start.toISOString()])).toEqual([
      ['SUBSCRIPTION_CREATE', '2026-03-01T00:00:00.000Z'],
      ['SUBSCRIPTION_CYCLE', '2026-03-01T00:00:00.000Z'],
    ]);
    expect(await h.db('invoices').where({ subscription_id: draft.id })).toHaveLength(0);
    await expect(subscribe({ id: 'cust_ev1' })).rejects.toMatchObject({ kind: 'not_found', details: { field: 'customer_id' } });
    await expect(subscribe({ externalId: 'acme-2' })).rejects.toMatchObject({ kind: 'not_found', details: { field: 'external_customer_id' } });
  });

  it('keeps each customer\'s parent, and moves the subscriptions a deleted payer paid to their own customers (ADR 0047)', async () => {
    await bus.publish(TOPICS.customerEvents, [customerEvent('customer.created', 'cust_payer', 'payer'), customerEvent('customer.created', 'cust_kid', 'kid', 'cust_payer')]);
    const store = new CustomerStore();
    expect((await store.getById(h.db, 'cust_kid'))?.parentCustomerId).toBe('cust_payer');
    expect(await store.descendants(h.db, CTX, 'cust_payer')).toEqual(['cust_kid']);
    // Detached later: the projection follows.
    await bus.publish(TOPICS.customerEvents, [customerEvent('customer.updated', 'cust_kid', 'kid', null)]);
    expect(await store.descendants(h.db, CTX, 'cust_payer')).toEqual([]);
    // A subscription the payer pays (made while the kid was its child).
    const paid = await subscribe({ id: 'cust_kid' });
    await h.db('subscriptions').where({ id: paid.id }).update({ invoicing_customer_id: 'cust_payer' });
    await bus.publish(TOPICS.customerEvents, [customerEvent('customer.deleted', 'cust_payer', 'payer')]);
    const after = await h.service.subscriptions.get(CTX, paid.id);
    expect([after.status, after.invoicingCustomerId, after.customerId]).toEqual(['active', null, 'cust_kid']);
    const events = (await h.db('outbox').where({ message_key: paid.id }).orderBy('seq').select('value')).map((r: { value: string }) => JSON.parse(r.value) as { type: string; payload: { subscription: { invoicing_customer_id: string | null } } });
    expect(events.at(-1)).toMatchObject({ type: 'subscription.updated', payload: { subscription: { invoicing_customer_id: null } } });
  });
});
