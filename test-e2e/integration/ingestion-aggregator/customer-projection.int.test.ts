import { KafkaBus, TOPICS } from '@billstream/bus';
import { kafkaBrokers, testLogger, waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

const TS = '2026-05-01T00:00:00Z';

describe('customer projection fills customer_id (real Kafka and Postgres)', () => {
  let stack: IntegrationStack;
  let bus: KafkaBus;
  let seq = 0;

  function customerEvent(type: string, id: string, externalId: string, tenant = 'tenant-a') {
    seq += 1;
    const event = {
      id: `evt_test${String(seq).padStart(6, '0')}`,
      type,
      tenant_id: tenant,
      environment_id: 'production',
      user_id: 'key_test',
      occurred_at: new Date(Date.now() + seq).toISOString(),
      payload: { customer: { id, external_id: externalId, tenant_id: tenant, environment_id: 'production' } },
    };
    return { key: id, value: JSON.stringify(event), headers: { 'message-id': event.id, 'event-type': type } };
  }

  async function customerIds(externalId: string): Promise<Array<string | null>> {
    const res = await stack.api.post('/v1/events/query', { external_customer_id: externalId, page_size: 1000 });
    return res.body.events.map((e: { customer_id: string | null }) => e.customer_id);
  }

  beforeAll(async () => {
    stack = await startIntegrationStack();
    bus = new KafkaBus({ brokers: kafkaBrokers(), clientId: 'customer-events-test', logger: testLogger('cust'), topicPrefix: stack.topicPrefix });
    await bus.start();
  });
  afterAll(async () => {
    await bus?.stop();
    await stack?.stop();
  });

  it('fills customer_id of events that arrived before their customer, and resolves later ones at once', async () => {
    const early = { event_name: 'e', external_customer_id: 'late-cust', timestamp: TS };
    await stack.api.post('/v1/events/bulk', { events: [early, early, { ...early, timestamp: '2025-01-01T00:00:00Z' }] });
    await waitFor(async () => (await customerIds('late-cust')).length === 3, { what: 'early events' });
    expect(await customerIds('late-cust')).toEqual([null, null, null]);

    await bus.publish(TOPICS.customerEvents, [customerEvent('customer.created', 'cust_LATE', 'late-cust')]);
    await waitFor(async () => (await customerIds('late-cust')).every((c) => c === 'cust_LATE'), { what: 'back-fill' });

    await stack.api.post('/v1/events', { ...early, event_id: 'after' });
    await waitFor(async () => (await customerIds('late-cust')).length === 4, { what: 'later event' });
    expect(await customerIds('late-cust')).toEqual(['cust_LATE', 'cust_LATE', 'cust_LATE', 'cust_LATE']);
    // The same external id in another tenant is another customer.
    const other = stack.api.withKey(await stack.keyFor('tenant-b', 'production'));
    await other.post('/v1/events', early);
    await waitFor(async () => (await other.post('/v1/events/query', { external_customer_id: 'late-cust' })).body.total_count === 1);
    expect((await other.post('/v1/events/query', { external_customer_id: 'late-cust' })).body.events[0].customer_id).toBeNull();
  });

  it('follows external id changes and deletions; stored events keep their customer', async () => {
    await bus.publish(TOPICS.customerEvents, [customerEvent('customer.created', 'cust_MOVE', 'old-ext')]);
    await stack.api.post('/v1/events', { event_name: 'e', external_customer_id: 'old-ext', timestamp: TS, event_id: 'mv-1' });
    await waitFor(async () => (await customerIds('old-ext'))[0] === 'cust_MOVE', { what: 'resolved' });
    await bus.publish(TOPICS.customerEvents, [customerEvent('customer.updated', 'cust_MOVE', 'new-ext')]);
    await stack.api.post('/v1/events', { event_name: 'e', external_customer_id: 'new-ext', timestamp: TS, event_id: 'mv-3' });
    // customer-events and usage-events are separate topics with no order between them: wait
    // until the move is applied (mv-3 resolved, at once or by back-fill) before using old-ext.
    await waitFor(async () => (await customerIds('new-ext'))[0] === 'cust_MOVE', { what: 'the external id change applied' });
    await stack.api.post('/v1/events', { event_name: 'e', external_customer_id: 'old-ext', timestamp: TS, event_id: 'mv-2' });
    await waitFor(async () => (await customerIds('new-ext')).length === 1 && (await customerIds('old-ext')).length === 2);
    expect(await customerIds('new-ext')).toEqual(['cust_MOVE']);
    expect((await customerIds('old-ext')).sort()).toEqual(['cust_MOVE', null]);

    await bus.publish(TOPICS.customerEvents, [customerEvent('customer.deleted', 'cust_MOVE', 'new-ext')]);
    await waitFor(async () => {
      await stack.api.post('/v1/events', { event_name: 'e', external_customer_id: 'new-ext', timestamp: TS });
      return (await customerIds('new-ext')).includes(null);
    }, { what: 'deleted customer no longer resolving' });
    expect(await customerIds('new-ext')).toContain('cust_MOVE');
  });

  it('misses no event stored concurrently with the customer creation', async () => {
    const sending = (async () => {
      for (let i = 0; i < 20; i += 1) {
        const events = Array.from({ length: 50 }, (_, j) => ({ event_name: 'e', external_customer_id: 'race', timestamp: TS, event_id: `r-${i}-${j}` }));
        expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
      }
    })();
    await new Promise((r) => setTimeout(r, 100));
    await bus.publish(TOPICS.customerEvents, [customerEvent('customer.created', 'cust_RACE', 'race')]);
    await sending;
    await waitFor(async () => (await customerIds('race')).length === 1000, { what: '1000 race events' });
    await waitFor(async () => (await customerIds('race')).every((c) => c === 'cust_RACE'), { what: 'all resolved' });
  });
});
