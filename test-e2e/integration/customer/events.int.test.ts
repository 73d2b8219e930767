import { KafkaBus, TOPICS, type ConsumedMessage, type Subscription } from '@billstream/bus';
import { kafkaBrokers, testLogger, waitFor } from '@billstream/testing';
import { startIntegrationStack, TEST_ENVIRONMENT, TEST_TENANT, type IntegrationStack } from '../../support/stack';

describe('customer events on the customer-events Kafka topic (through the outbox)', () => {
  let stack: IntegrationStack;
  let bus: KafkaBus;
  let subscription: Subscription;
  const seen: ConsumedMessage[] = [];

  beforeAll(async () => {
    stack = await startIntegrationStack();
    bus = new KafkaBus({ brokers: kafkaBrokers(), clientId: 'customer-events-test', logger: testLogger(), topicPrefix: stack.topicPrefix });
    await bus.start();
    subscription = await bus.subscribe({
      groupId: 'customer-events-test',
      topics: [TOPICS.customerEvents],
      fromBeginning: true,
      handler: async (messages) => {
        seen.push(...messages);
      },
    });
  });
  afterAll(async () => {
    await subscription?.stop();
    await bus?.stop();
    await stack?.stop();
  });

  const eventsOf = (customerId: string) =>
    seen.filter((m) => m.key === customerId).map((m) => ({ message: m, event: JSON.parse(m.value) }));

  it('publishes created, updated and deleted, keyed by the customer id, with the whole customer as payload.customer', async () => {
    const created = await stack.api.post('/v1/customers', {
      external_customer_id: `evt-${Date.now()}`,
      name: 'Evented',
      email: 'e@x.example',
      metadata: { a: '1' },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const updated = await stack.api.put(`/v1/customers/${id}`, { name: 'Evented 2', status: 'draft' });
    expect(updated.status).toBe(200);
    const beforeDelete = (await stack.api.get(`/v1/customers/${id}`)).body;
    expect((await stack.api.delete(`/v1/customers/${id}`)).status).toBe(204);

    const events = await waitFor(() => (eventsOf(id).length >= 3 ? eventsOf(id) : undefined), {
      what: 'three customer events',
    });
    expect(events.map((e) => e.event.type)).toEqual(['customer.created', 'customer.updated', 'customer.deleted']);
    const common = {
      id: expect.stringMatching(/^evt_/),
      tenant_id: TEST_TENANT,
      environment_id: TEST_ENVIRONMENT,
      user_id: expect.stringMatching(/^key_/),
      occurred_at: expect.stringMatching(/Z$/),
    };
    expect(events[0].event).toEqual({ ...common, type: 'customer.created', payload: { customer: created.body } });
    expect(events[1].event).toEqual({ ...common, type: 'customer.updated', payload: { customer: updated.body } });
    expect(events[2].event).toEqual({ ...common, type: 'customer.deleted', payload: { customer: beforeDelete } });
    expect(events[0].message.headers).toMatchObject({ 'event-type': 'customer.created', 'message-id': events[0].event.id });
    expect(new Set(events.map((e) => e.event.id)).size).toBe(3);
  });

  it('publishes nothing for a call that failed or changed nothing', async () => {
    const created = await stack.api.post('/v1/customers', { external_customer_id: `quiet-${Date.now()}`, name: 'Q' });
    const id = created.body.id;
    expect((await stack.api.post('/v1/customers', { external_customer_id: created.body.external_id })).status).toBe(409);
    expect((await stack.api.put(`/v1/customers/${id}`, { email: 'bad' })).status).toBe(400);
    expect((await stack.api.put(`/v1/customers/${id}`, { name: 'Q' })).status).toBe(200);
    expect((await stack.api.put(`/v1/customers/${id}`, { name: 'R' }, { 'if-match': '"9"' })).status).toBe(409);
    const child = await stack.api.post('/v1/customers', { external_customer_id: `quiet-child-${Date.now()}`, parent_customer_id: id });
    expect((await stack.api.delete(`/v1/customers/${id}`)).status).toBe(400);
    // A later change of the same key marks the end: everything before it has been delivered.
    expect((await stack.api.put(`/v1/customers/${id}`, { name: 'Last' })).status).toBe(200);
    const events = await waitFor(() => (eventsOf(id).length >= 2 ? eventsOf(id) : undefined), { what: 'the customer events' });
    expect(events.map((e) => e.event.type)).toEqual(['customer.created', 'customer.updated']);
    expect(events[1].event.payload.customer.name).toBe('Last');
    const childEvents = await waitFor(() => (eventsOf(child.body.id).length >= 1 ? eventsOf(child.body.id) : undefined), {
      what: 'the child event',
    });
    expect(childEvents.map((e) => e.event.type)).toEqual(['customer.created']);
  });
});
