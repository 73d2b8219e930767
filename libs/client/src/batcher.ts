/**
 * The usage event batcher behind `client.events`: `enqueue` buffers events (each given its
 * `event_id` at once), bulk requests of up to 1,000 leave when a batch is full or the oldest
 * buffered event has waited `flushIntervalMs`. A batch that fails for a passing reason (no
 * answer, 429, 5xx) is sent again with the same event ids until it is accepted, so the API's
 * dedup keeps every event once. Buffered and in-flight events are capped: `enqueue` waits
 * for room (back-pressure). `flush()` and `close()` resolve once what was enqueued before
 * them is accepted, or refused for good and handed to `onError`.
 */
import { BillstreamError } from './errors';
import { withEventId } from './idempotency';
import { backoffMs, sleep } from './retry';
import type { RequestBody } from './types';

/**
 * One usage event. The OpenAPI document types the items of `POST /v1/events/bulk` only as
 * "each with the fields of POST /v1/events" (the gateway checks them one by one to name the
 * bad index), so the type is the body of `POST /v1/events`.
 */
export type UsageEvent = RequestBody<'/v1/events', 'post'>;
export type QueuedEvent = UsageEvent & { event_id: string };

/** Sends one bulk request; throws a BillstreamError when it is not accepted. */
export type BatchSender = (events: QueuedEvent[], signal: AbortSignal) => Promise<void>;

export interface BatcherOptions {
  /** Events per bulk request, 1..1000 (default 1000, the API's limit). */
  maxBatchSize: number;
  /** Longest wait of a buffered event before its batch leaves (default 1,000 ms). */
  flushIntervalMs: number;
  /** Events held at once, buffered and in flight; `enqueue` waits beyond it (default 10,000). */
  maxBufferedEvents: number;
  /** Bulk requests in flight at once (default 2). */
  maxConcurrentBatches: number;
  /** Backoff between sends of a failed batch (defaults 500 ms doubling up to 30,000 ms, full jitter). */
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  /**
   * Told of every failed send: `willRetry` false means the API refused these events for good
   * (a bad event, a revoked key) and the batcher has let them go.
   */
  onError?: (error: BillstreamError, info: { events: QueuedEvent[]; attempt: number; willRetry: boolean }) => void;
}

export const BATCHER_DEFAULTS: BatcherOptions = {
  maxBatchSize: 1000,
  flushIntervalMs: 1000,
  maxBufferedEvents: 10_000,
  maxConcurrentBatches: 2,
  retryBaseDelayMs: 500,
  retryMaxDelayMs: 30_000,
};

export interface BatcherStats {
  enqueued: number;
  /** Accepted by the API (202). */
  sent: number;
  /** Refused for good and handed to onError. */
  refused: number;
  /** Sends of a batch after a failure. */
  retries: number;
  batches: number;
}

export class BatcherClosedError extends Error {
  constructor() {
    super('The event batcher is closed');
    this.name = 'BatcherClosedError';
  }
}

export class FlushTimeoutError extends Error {
  /** How many events enqueued before the flush were not accepted in time. */
  readonly pending: number;
  /**
   * After `close({ timeoutMs })` only: those events, which the batcher no longer sends. Keep
   * them and send them later: their event ids make a copy that did arrive count once.
   */
  readonly unsent: QueuedEvent[];
  constructor(timeoutMs: number, pending: number, unsent: QueuedEvent[] = []) {
    super(`${pending} event(s) not sent within ${timeoutMs} ms`);
    this.name = 'FlushTimeoutError';
    this.pending = pending;
    this.unsent = unsent;
  }
}

interface Entry {
  seq: number;
  event: QueuedEvent;
}

interface Waiter extends Entry {
  admitted: () => void;
}

interface Batch {
  /** Its events not yet accepted or refused. */
  entries: Entry[];
}

export class EventBatcher {
  readonly options: BatcherOptions;
  readonly stats: BatcherStats = { enqueued: 0, sent: 0, refused: 0, retries: 0, batches: 0 };
  private readonly buffer: Entry[] = [];
  private readonly waiting: Waiter[] = [];
  private readonly batches = new Set<Batch>();
  private inFlightEvents = 0;
  private seq = 0;
  /** Events up to this seq leave without waiting for a full batch (timer or flush). */
  private drainThrough = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private changed: Array<() => void> = [];
  private closed = false;
  /** Aborted when close() gives up: sends and retry waits stop. */
  private readonly stopped = new AbortController();

  constructor(
    private readonly send: BatchSender,
    options: Partial<BatcherOptions> = {},
  ) {
    this.options = { ...BATCHER_DEFAULTS, ...options };
    const { maxBatchSize, maxBufferedEvents, maxConcurrentBatches } = this.options;
    if (!Number.isInteger(maxBatchSize) || maxBatchSize < 1 || maxBatchSize > 1000) throw new RangeError('maxBatchSize must be an integer in 1..1000');
    if (maxBufferedEvents < maxBatchSize) throw new RangeError('maxBufferedEvents must be at least maxBatchSize');
    if (!Number.isInteger(maxConcurrentBatches) || maxConcurrentBatches < 1) throw new RangeError('maxConcurrentBatches must be a positive integer');
  }

  /** Events buffered, in flight and waiting for room. */
  get pending(): number {
    return this.buffer.length + this.inFlightEvents + this.waiting.length;
  }

  /**
   * Buffers one event and resolves with its `event_id` (given or generated) once it is held;
   * while the batcher is full it resolves only when room frees: await it.
   */
  async enqueue(event: UsageEvent): Promise<string> {
    if (this.closed) throw new BatcherClosedError();
    const entry: Entry = { seq: ++this.seq, event: withEventId(event) };
    this.stats.enqueued++;
    if (this.waiting.length === 0 && this.held() < this.options.maxBufferedEvents) {
      this.admit(entry);
    } else {
      await new Promise<void>((admitted) => this.waiting.push({ ...entry, admitted }));
    }
    return entry.event.event_id;
  }

  /** Resolves once every event enqueued before this call is accepted or refused for good. */
  async flush(options: { timeoutMs?: number } = {}): Promise<void> {
    const target = this.seq;
    this.drainThrough = Math.max(this.drainThrough, target);
    this.pump();
    const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
    while (this.unsettledThrough(target) > 0) {
      const next = new Promise<void>((resolve) => this.changed.push(resolve));
      if (deadline === undefined) {
        await next;
        continue;
      }
      const left = deadline - Date.now();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = await Promise.race([next.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), Math.max(0, left))))]);
      clearTimeout(timer);
      if (late && this.unsettledThrough(target) > 0) throw new FlushTimeoutError(options.timeoutMs!, this.unsettledThrough(target));
    }
  }

  /**
   * Refuses new events, then flushes: nothing enqueued before is lost. When `timeoutMs` passes
   * first, it stops sending and throws a FlushTimeoutError holding the unsent events.
   */
  async close(options: { timeoutMs?: number } = {}): Promise<void> {
    this.closed = true;
    try {
      await this.flush(options);
    } catch (err) {
      if (!(err instanceof FlushTimeoutError)) throw err;
      this.stopped.abort();
      const unsent = [...this.waiting, ...this.buffer, ...[...this.batches].flatMap((b) => b.entries)].map((e) => e.event);
      this.waiting.length = 0;
      this.buffer.length = 0;
      this.batches.clear();
      throw new FlushTimeoutError(options.timeoutMs!, unsent.length, unsent);
    } finally {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private held(): number {
    return this.buffer.length + this.inFlightEvents;
  }

  private admit(entry: Entry): void {
    this.buffer.push(entry);
    this.pump();
  }

  /** Events with seq <= target not yet settled: buffered, waiting for room or in flight. */
  private unsettledThrough(target: number): number {
    let count = 0;
    for (const e of this.waiting) if (e.seq <= target) count++;
    for (const e of this.buffer) if (e.seq <= target) count++;
    for (const batch of this.batches) for (const e of batch.entries) if (e.seq <= target) count++;
    return count;
  }

  /** Starts every batch that may leave now, and the timer of the events that stay. */
  private pump(): void {
    const { maxBatchSize, maxConcurrentBatches, flushIntervalMs } = this.options;
    while (this.batches.size < maxConcurrentBatches && this.buffer.length > 0) {
      const full = this.buffer.length >= maxBatchSize;
      if (!full && this.buffer[0].seq > this.drainThrough) break;
      this.start(this.buffer.splice(0, maxBatchSize));
    }
    if (this.buffer.length === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.buffer.length > 0 && !this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.drainThrough = Math.max(this.drainThrough, this.buffer[this.buffer.length - 1]?.seq ?? 0);
        this.pump();
      }, flushIntervalMs);
    }
  }

  private start(entries: Entry[]): void {
    const batch: Batch = { entries };
    this.batches.add(batch);
    this.inFlightEvents += entries.length;
    this.stats.batches++;
    void this.deliver(batch, entries).finally(() => {
      this.batches.delete(batch);
      this.inFlightEvents -= entries.length;
      this.admitWaiting();
      this.pump();
      this.notify();
    });
  }

  /** Sends `part` of a batch until the API accepts it, setting apart the events it refuses for good. */
  private async deliver(batch: Batch, part: Entry[]): Promise<void> {
    let entries = part;
    for (let attempt = 1; entries.length > 0 && !this.stopped.signal.aborted; attempt++) {
      try {
        await this.send(
          entries.map((e) => e.event),
          this.stopped.signal,
        );
        this.stats.sent += entries.length;
        this.settle(batch, entries);
        return;
      } catch (err) {
        if (this.stopped.signal.aborted) return;
        const error = err instanceof BillstreamError ? err : new BillstreamError({ status: 0, internal_error: 'network_error', message: String(err), cause: err });
        const badIndex = typeof error.details?.index === 'number' ? error.details.index : undefined;
        if (passing(error)) {
          this.options.onError?.(error, { events: entries.map((e) => e.event), attempt, willRetry: true });
          this.stats.retries++;
          const named = error.retryAfterSeconds === undefined ? 0 : error.retryAfterSeconds * 1000;
          const backoff = backoffMs(attempt, { baseDelayMs: this.options.retryBaseDelayMs, maxDelayMs: this.options.retryMaxDelayMs });
          await sleep(Math.max(named, backoff), this.stopped.signal).catch(() => undefined);
        } else if (badIndex !== undefined && badIndex >= 0 && badIndex < entries.length && entries.length > 1) {
          // One bad event refuses the whole request: let it go, send the others again.
          const bad = entries[badIndex];
          entries = entries.filter((_, i) => i !== badIndex);
          this.refuse(error, batch, [bad], attempt);
        } else if (error.status === 413 && entries.length > 1) {
          // Over the body limit with no event to blame: each half goes on its own.
          const half = Math.ceil(entries.length / 2);
          await this.deliver(batch, entries.slice(0, half));
          await this.deliver(batch, entries.slice(half));
          return;
        } else {
          this.refuse(error, batch, entries, attempt);
          return;
        }
      }
    }
  }

  private settle(batch: Batch, entries: Entry[]): void {
    const done = new Set(entries);
    batch.entries = batch.entries.filter((e) => !done.has(e));
    this.notify();
  }

  private refuse(error: BillstreamError, batch: Batch, entries: Entry[], attempt: number): void {
    this.stats.refused += entries.length;
    this.settle(batch, entries);
    this.options.onError?.(error, { events: entries.map((e) => e.event), attempt, willRetry: false });
  }

  private admitWaiting(): void {
    while (this.waiting.length > 0 && this.held() < this.options.maxBufferedEvents) {
      const waiter = this.waiting.shift()!;
      this.buffer.push({ seq: waiter.seq, event: waiter.event });
      waiter.admitted();
    }
  }

  private notify(): void {
    const waiters = this.changed;
    this.changed = [];
    for (const resolve of waiters) resolve();
  }
}

/** No answer, a rate limit, or a server that could not do it now: the same batch may succeed later. */
function passing(error: BillstreamError): boolean {
  return error.status === 0 || error.status === 408 || error.status === 429 || error.status >= 500;
}
