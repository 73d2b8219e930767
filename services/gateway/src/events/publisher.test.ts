import { InProcessBus, TOPICS, type OutgoingMessage } from '@billstream/bus';
import { PayloadTooLargeError, ServiceUnavailableError } from '@billstream/errors';
import { createLogger } from '@billstream/logger';
import { MAX_SEND_BYTES, UsageEventPublisher, toMessage } from './publisher';

/** The in-process bus with a gate: sends wait until released, and can be made to fail. */
class GatedBus extends InProcessBus {
  sends: OutgoingMessage[][] = [];
  failWith?: Error;
  private gate?: Promise<void>;
  private open?: () => void;

  hold(): void {
    this.gate = new Promise((r) => (this.open = r));
  }

  release(): void {
    this.open?.();
    this.gate = undefined;
  }

  override async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    expect(topic).toBe(TOPICS.usageEvents);
    this.sends.push(messages);
    if (this.gate) await this.gate;
    if (this.failWith) throw this.failWith;
  }
}

const scope = { tenantId: 't', environmentId: 'e' };
const silent = createLogger({ service: 'test', level: 'silent' });
const msg = (id: string, properties: Record<string, unknown> = {}) =>
  toMessage({ event_name: 'n', external_customer_id: 'c', timestamp: '2026-01-01T00:00:00Z', event_id: id, properties }, scope, '2026-01-01T00:00:00Z');

describe('UsageEventPublisher', () => {
  it('coalesces requests that arrive while every send is in flight into the next send, in order', async () => {
    const bus = new GatedBus();
    const publisher = new UsageEventPublisher(bus, silent, { maxConcurrentSends: 1 });
    bus.hold();
    const first = publisher.publish([msg('a')]);
    const second = publisher.publish([msg('b'), msg('c')]);
    const third = publisher.publish([msg('d')]);
    bus.release();
    await Promise.all([first, second, third]);
    expect(bus.sends.map((s) => s.map((m) => JSON.parse(m.value).event_id))).toEqual([['a'], ['b', 'c', 'd']]);
    expect(bus.sends[1][0].key).toBe('t:e:c');
  });

  it('keeps up to maxConcurrentSends sends in flight', async () => {
    const bus = new GatedBus();
    const publisher = new UsageEventPublisher(bus, silent, { maxConcurrentSends: 2 });
    bus.hold();
    const all = [publisher.publish([msg('a')]), publisher.publish([msg('b')]), publisher.publish([msg('c')]), publisher.publish([msg('d')])];
    await new Promise((r) => setImmediate(r));
    expect(bus.sends).toHaveLength(2);
    bus.release();
    await Promise.all(all);
    expect(bus.sends.map((s) => s.map((m) => JSON.parse(m.value).event_id))).toEqual([['a'], ['b'], ['c', 'd']]);
  });

  it('splits a request larger than one send and refuses a single event larger than a send', async () => {
    const bus = new GatedBus();
    const publisher = new UsageEventPublisher(bus, silent);
    const big = 'x'.repeat(200_000);
    await publisher.publish(['1', '2', '3', '4', '5', '6'].map((id) => msg(id, { big })));
    expect(bus.sends.length).toBe(2);
    expect(bus.sends.flat()).toHaveLength(6);
    await expect(publisher.publish([msg('huge', { big: 'x'.repeat(MAX_SEND_BYTES) })])).rejects.toBeInstanceOf(PayloadTooLargeError);
  });

  it('turns a failed send into 503 naming the event ids', async () => {
    const bus = new GatedBus();
    bus.failWith = new Error('broker down');
    const publisher = new UsageEventPublisher(bus, silent);
    const err = await publisher.publish([msg('a'), msg('b')]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect((err as ServiceUnavailableError).details).toMatchObject({ event_ids: ['a', 'b'] });
  });

  it('gives 503 to a request still queued after the queue timeout, and never sends it', async () => {
    const bus = new GatedBus();
    const publisher = new UsageEventPublisher(bus, silent, { queueTimeoutMs: 50, maxConcurrentSends: 1 });
    bus.hold();
    const stuck = publisher.publish([msg('a')]);
    const waiting = publisher.publish([msg('b')]).catch((e: unknown) => e);
    expect(await waiting).toBeInstanceOf(ServiceUnavailableError);
    bus.release();
    await stuck;
    expect(bus.sends.map((s) => s.map((m) => JSON.parse(m.value).event_id))).toEqual([['a']]);
  });
});
