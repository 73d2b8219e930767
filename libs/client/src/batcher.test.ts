import { EventBatcher, FlushTimeoutError, type QueuedEvent } from './batcher';
import { BillstreamError } from './errors';

// A fake sender (the integration test sends to a real Billstream): it records each request.
function fakeSender(answer: (events: QueuedEvent[], call: number) => Promise<void> | void = () => undefined) {
  const calls: QueuedEvent[][] = [];
  const send = async (events: QueuedEvent[]) => {
    calls.push(events);
    await answer(events, calls.length);
  };
  return { calls, send };
}

const event = (n: number) => ({ event_name: 'tokens', external_customer_id: 'c', timestamp: '2026-11-26T12:00:00Z', properties: { n } });
const fast = { retryBaseDelayMs: 1, retryMaxDelayMs: 5 };

describe('EventBatcher', () => {
  it('sends full batches at once and the rest after flushIntervalMs, each event with an event_id', async () => {
    const { calls, send } = fakeSender();
    const batcher = new EventBatcher(send, { maxBatchSize: 100, flushIntervalMs: 50, ...fast });
    const ids = await Promise.all(Array.from({ length: 250 }, (_, i) => batcher.enqueue(event(i))));
    expect(calls.map((c) => c.length)).toEqual([100, 100]);
    await new Promise((r) => setTimeout(r, 120));
    expect(calls.map((c) => c.length)).toEqual([100, 100, 50]);
    expect(calls.flat().map((e) => e.event_id)).toEqual(ids);
    expect(new Set(ids).size).toBe(250);
    await batcher.close();
  });

  it('sends a failed batch again with the same event ids until it is accepted', async () => {
    const { calls, send } = fakeSender((_e, call) => {
      if (call <= 2) throw new BillstreamError({ status: call === 1 ? 0 : 503, internal_error: 'service_unavailable', message: 'down' });
    });
    const batcher = new EventBatcher(send, { ...fast, flushIntervalMs: 10_000 });
    for (let i = 0; i < 10; i++) await batcher.enqueue({ ...event(i), event_id: `e${i}` });
    await batcher.close();
    expect(calls).toHaveLength(3);
    expect(calls[2].map((e) => e.event_id)).toEqual(calls[0].map((e) => e.event_id));
    expect(batcher.stats).toMatchObject({ sent: 10, retries: 2, refused: 0 });
  });

  it('lets a refused event go and sends the others; a batch refused for good goes to onError', async () => {
    const refused: string[] = [];
    const { calls, send } = fakeSender((events) => {
      const bad = events.findIndex((e) => e.event_name === '');
      if (bad >= 0) throw new BillstreamError({ status: 400, internal_error: 'validation_error', message: 'bad', details: { index: bad, field: `events.${bad}.event_name` } });
    });
    const batcher = new EventBatcher(send, { ...fast, onError: (_err, info) => !info.willRetry && refused.push(...info.events.map((e) => e.event_id)) });
    await batcher.enqueue({ ...event(1), event_id: 'good-1' });
    await batcher.enqueue({ ...event(2), event_name: '', event_id: 'bad' });
    await batcher.enqueue({ ...event(3), event_id: 'good-2' });
    await batcher.flush();
    expect(refused).toEqual(['bad']);
    expect(calls[1].map((e) => e.event_id)).toEqual(['good-1', 'good-2']);
    expect(batcher.stats).toMatchObject({ sent: 2, refused: 1 });
  });

  it('caps what it holds: enqueue waits for room (back-pressure)', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { send } = fakeSender(() => gate);
    const batcher = new EventBatcher(send, { maxBatchSize: 10, maxBufferedEvents: 20, maxConcurrentBatches: 1, flushIntervalMs: 5, ...fast });
    let admitted = 0;
    const all = Array.from({ length: 35 }, (_, i) => batcher.enqueue(event(i)).then(() => admitted++));
    await new Promise((r) => setTimeout(r, 30));
    expect(admitted).toBe(20);
    expect(batcher.pending).toBe(35);
    release();
    await Promise.all(all);
    await batcher.close();
    expect(batcher.stats).toMatchObject({ enqueued: 35, sent: 35 });
  });

  it('flush with a timeout throws while events still fail; close with a timeout stops and hands back the unsent events', async () => {
    const { calls, send } = fakeSender(() => {
      throw new BillstreamError({ status: 0, internal_error: 'network_error', message: 'down' });
    });
    const batcher = new EventBatcher(send, fast);
    const id = await batcher.enqueue(event(1));
    await expect(batcher.flush({ timeoutMs: 50 })).rejects.toBeInstanceOf(FlushTimeoutError);
    const closing = await batcher.close({ timeoutMs: 20 }).catch((err: unknown) => err);
    expect(closing).toBeInstanceOf(FlushTimeoutError);
    expect((closing as FlushTimeoutError).unsent.map((e) => e.event_id)).toEqual([id]);
    await expect(batcher.enqueue(event(2))).rejects.toThrow('closed');
    // Given up: no more sends.
    const sends = calls.length;
    await new Promise((r) => setTimeout(r, 30));
    expect(calls.length).toBe(sends);
  });
});
