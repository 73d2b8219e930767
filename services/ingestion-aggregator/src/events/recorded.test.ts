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

  it('publishes nothing for an empty batch; a failed publish never fails the stored batch and is tried again, merged with what came meanwhile', async () => {
    const bus = new InProcessBus();
    let calls = 0;
    const published: string[][] = [];
    let failing = true;
    await bus.subscribe({
      groupId: 'g',
      topics: [TOPICS.usageRecorded],
      handler: async (batch) => {
        calls += 1;
        if (failing) throw new Error('broker down');
        published.push(batch.map((m) => `${m.key}@${JSON.parse(m.value).stored_at}`));
      },
    });
    let at = new Date('2026-01-02T03:04:06Z');
    const publisher = usageRecordedPublisher(bus, testLogger(), () => at);
    publisher.recorded([]);
    await publisher.drain();
    expect(calls).toBe(0);
    expect(() => publisher.recorded([event('t1', 'a', '1'), event('t1', 'b', '2')])).not.toThrow();
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).toBe(1);
    // Noted while the broker is down: b again (newer), and c.
    at = new Date('2026-01-02T03:04:07Z');
    publisher.recorded([event('t1', 'b', '3'), event('t1', 'c', '4')]);
    failing = false;
    await publisher.drain();
    expect(calls).toBe(2);
    expect(published.map((keys) => [...keys].sort())).toEqual([['t1:production:a@2026-01-02T03:04:06.000Z', 't1:production:b@2026-01-02T03:04:07.000Z', 't1:production:c@2026-01-02T03:04:07.000Z']]);
  });

  it('a reset (ADR 0026) goes out keyed "reset"', async () => {
    const bus = new InProcessBus();
    const got: Array<{ key: string; value: unknown }> = [];
    await bus.subscribe({ groupId: 'g', topics: [TOPICS.usageRecorded], handler: async (batch) => void got.push(...batch.map((m) => ({ key: m.key, value: JSON.parse(m.value) }))) });
    const at = new Date('2026-01-02T03:04:06Z');
    const publisher = usageRecordedPublisher(bus, testLogger(), () => at);
    publisher.reset();
    await publisher.drain();
    expect(got).toEqual([{ key: 'reset', value: { reset: true, stored_at: at.toISOString() } }]);
  });

  it('at shutdown gives up on a broker that keeps failing instead of retrying forever', async () => {
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
    publisher.recorded([event('t1', 'a', '1')]);
    await new Promise((r) => setTimeout(r, 20));
    const started = Date.now();
    await publisher.close(2000);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(calls).toBe(2);
    await publisher.drain();
  });
});
