import { InProcessBus, TOPICS } from '@billstream/bus';
import type { UsageEventMessage } from '@billstream/contracts';
import { testLogger } from '@billstream/testing';
import { usageRecordedPublisher } from './recorded';

const event = (tenant: string, customer: string, id: string): UsageEventMessage => ({
  tenant_id: tenant,
  environment_id: 'production',
  event_id: id,
  event_name: 'api_call',
  external_customer_id: customer,
  timestamp: '2026-01-02T03:04:05.000000Z',
  properties: {},
  source: null,
  received_at: '2026-01-02T03:04:05Z',
});

describe('usage-recorded notifications (ADR 0024)', () => {
  it('coalesces customers stored while a publish is in flight into the next publish', async () => {
    const bus = new InProcessBus();
    const batches: string[][] = [];
    let release: () => void = () => undefined;
    await bus.subscribe({
      groupId: 'g',
      topics: [TOPICS.usageRecorded],
      handler: async (batch) => {
        batches.push(batch.map((m) => m.key));
        if (batches.length === 1) await new Promise<void>((r) => (release = r));
      },
    });
    const publisher = usageRecordedPublisher(bus, testLogger());
    publisher.recorded([event('t1', 'a', '1')]);
    publisher.recorded([event('t1', 'b', '2')]);
    publisher.recorded([event('t1', 'c', '3'), event('t1', 'b', '4')]);
    release();
    await publisher.drain();
    expect(batches).toEqual([['t1:production:a'], ['t1:production:b', 't1:production:c']]);
  });

  it('publishes one message per tenant, environment and customer of a stored batch, keyed like usage events', async () => {
    const bus = new InProcessBus();
    const got: Array<{ key: string; value: unknown }> = [];
    await bus.subscribe({ groupId: 'g', topics: [TOPICS.usageRecorded], handler: async (batch) => void got.push(...batch.map((m) => ({ key: m.key, value: JSON.parse(m.value) }))) });
    const at = new Date('2026-01-02T03:04:06Z');
    const publisher = usageRecordedPublisher(bus, testLogger(), () => at);
    publisher.recorded([event('t1', 'a', '1'), event('t1', 'a', '2'), event('t1', 'b', '3'), event('t2', 'a', '4')]);
    await publisher.drain();
    expect(got).toEqual([
      { key: 't1:production:a', value: { tenant_id: 't1', environment_id: 'production', external_customer_id: 'a', stored_at: at.toISOString() } },
      { key: 't1:production:b', value: { tenant_id: 't1', environment_id: 'production', external_customer_id: 'b', stored_at: at.toISOString() } },
      { key: 't2:production:a', value: { tenant_id: 't2', environment_id: 'production', external_customer_id: 'a', stored_at: at.toISOString() } },
    ]);
  });

  it('publishes nothing for an empty batch, and a failed publish never fails the stored batch', async () => {
    const bus = new InProcessBus();
    let calls = 0;
    await bus.subscribe({
      groupId: 'g',
      topics: [TOPICS.usageRecorded],
      handler: async () => {
        calls += 1;
        throw new Error('broker down');
      },
    });
    const publisher = usageRecordedPublisher(bus, testLogger());
    publisher.recorded([]);
    await publisher.drain();
    expect(calls).toBe(0);
    expect(() => publisher.recorded([event('t1', 'a', '1')])).not.toThrow();
    await publisher.drain();
    expect(calls).toBe(1);
    // The next notification is published again (the failure did not stop the publisher).
    publisher.recorded([event('t1', 'b', '2')]);
    await publisher.drain();
    expect(calls).toBe(2);
  });
});
