import { randomUUID } from 'node:crypto';
import { TOPICS, type Bus, type OutgoingMessage } from './types';
import { normalizeEventTimestamp, type UsageEventInput, type UsageEventMessage, type Scope } from '@billstream/contracts';
import { PayloadTooLargeError, ServiceUnavailableError } from '@billstream/errors';
import type { Logger } from '@billstream/logger';
import { injectTraceHeaders, inSpan, recordEventsAccepted, SpanKind, tracingEnabled } from '@billstream/observability';

/** The usage-events message of one validated event: tenant, environment, received_at and an id stamped. */
export function toMessage(event: UsageEventInput, scope: Scope, receivedAt: string): UsageEventMessage {
  return {
    tenant_id: scope.tenantId,
    environment_id: scope.environmentId,
    event_id: event.event_id ?? randomUUID(),
    event_name: event.event_name,
    external_customer_id: event.external_customer_id,
    timestamp: normalizeEventTimestamp(event.timestamp),
    properties: event.properties ?? {},
    source: event.source ?? null,
    received_at: receivedAt,
  };
}

export function messageKey(m: UsageEventMessage): string {
  return `${m.tenant_id}:${m.environment_id}:${m.external_customer_id}`;
}

/**
 * Largest producer send, in bytes of keys and values plus record overhead: below the broker's
 * default 1 MB record-batch limit even when every message goes to one partition.
 */
export const MAX_SEND_BYTES = 900_000;
const RECORD_OVERHEAD = 64;

interface Chunk {
  messages: OutgoingMessage[];
  bytes: number;
  sent: boolean;
  resolve(): void;
  reject(err: unknown): void;
}

export interface PublisherOptions {
  /** A request whose events were not handed to Kafka within this time gets 503 (default 5 s). */
  queueTimeoutMs?: number;
  /** Producer sends in flight at once (default 4): encoding of one overlaps the broker's ack of another. */
  maxConcurrentSends?: number;
}

/**
 * Publishes accepted usage events to Kafka and resolves once the broker acknowledged them
 * (acks=all). Up to `maxConcurrentSends` sends are in flight; requests that arrive while all
 * are busy are coalesced into the next send (fewer, larger produce requests); a request
 * resolves when every chunk of it was acknowledged. A failure, a timeout or
 * too long a wait in the queue becomes 503: the events are not known to be stored (a send the
 * broker took just as it failed may still land), and the details carry the event ids
 * (generated ones included) for an idempotent retry.
 */
export class UsageEventPublisher {
  private readonly queue: Chunk[] = [];
  private inFlight = 0;
  private readonly queueTimeoutMs: number;
  private readonly maxConcurrentSends: number;

  constructor(
    private readonly bus: Bus,
    private readonly logger: Logger,
    options: PublisherOptions = {},
  ) {
    this.queueTimeoutMs = options.queueTimeoutMs ?? 5000;
    this.maxConcurrentSends = options.maxConcurrentSends ?? 4;
  }

  async publish(messages: UsageEventMessage[]): Promise<void> {
    // A producer span per call; its trace context travels in each message's headers (W3C traceparent).
    await inSpan(`${TOPICS.usageEvents} publish`, { kind: SpanKind.PRODUCER, attributes: { 'messaging.batch.message_count': messages.length } }, () =>
      this.publishTraced(messages),
    );
    recordEventsAccepted(messages.length);
  }

  private async publishTraced(messages: UsageEventMessage[]): Promise<void> {
    const chunks = this.chunksOf(messages, tracingEnabled() ? injectTraceHeaders({}) : undefined);
    try {
      await Promise.all(chunks.map((c) => this.enqueue(c)));
    } catch (err) {
      this.logger.warn('usage events not acknowledged by the broker', { count: messages.length, err });
      throw new ServiceUnavailableError(
        'The event queue is unavailable; the events of this request are not known to be stored: retry with the same event ids',
        { retryable: true, event_ids: messages.map((m) => m.event_id) },
        { cause: err },
      );
    }
  }

  private chunksOf(messages: UsageEventMessage[], headers: Record<string, string> | undefined): Array<Omit<Chunk, 'resolve' | 'reject' | 'sent'>> {
    const chunks: Array<Omit<Chunk, 'resolve' | 'reject' | 'sent'>> = [];
    let current: OutgoingMessage[] = [];
    let bytes = 0;
    messages.forEach((m, index) => {
      const out: OutgoingMessage = headers ? { key: messageKey(m), value: JSON.stringify(m), headers } : { key: messageKey(m), value: JSON.stringify(m) };
      const size = Buffer.byteLength(out.value) + Buffer.byteLength(out.key) + RECORD_OVERHEAD;
      if (size > MAX_SEND_BYTES) {
        throw new PayloadTooLargeError(`Event ${index} is larger than ${MAX_SEND_BYTES} bytes`, {
          field: messages.length > 1 ? `events.${index}` : 'properties',
          index,
          limit_bytes: MAX_SEND_BYTES,
        });
      }
      if (bytes + size > MAX_SEND_BYTES) {
        chunks.push({ messages: current, bytes });
        current = [];
        bytes = 0;
      }
      current.push(out);
      bytes += size;
    });
    if (current.length > 0) chunks.push({ messages: current, bytes });
    return chunks;
  }

  private enqueue(part: Omit<Chunk, 'resolve' | 'reject' | 'sent'>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const chunk: Chunk = { ...part, sent: false, resolve, reject };
      const timer = setTimeout(() => {
        const at = this.queue.indexOf(chunk);
        if (at >= 0 && !chunk.sent) {
          this.queue.splice(at, 1);
          reject(new Error(`not handed to Kafka within ${this.queueTimeoutMs} ms`));
        }
      }, this.queueTimeoutMs);
      chunk.resolve = () => {
        clearTimeout(timer);
        resolve();
      };
      chunk.reject = (err) => {
        clearTimeout(timer);
        reject(err);
      };
      this.queue.push(chunk);
      this.flush();
    });
  }

  /** Starts sends while fewer than the limit are in flight, each taking as many queued chunks (in arrival order) as fit. */
  private flush(): void {
    while (this.queue.length > 0 && this.inFlight < this.maxConcurrentSends) {
      const batch: Chunk[] = [];
      let bytes = 0;
      while (this.queue.length > 0 && (batch.length === 0 || bytes + this.queue[0].bytes <= MAX_SEND_BYTES)) {
        const chunk = this.queue.shift() as Chunk;
        chunk.sent = true;
        batch.push(chunk);
        bytes += chunk.bytes;
      }
      this.inFlight += 1;
      this.bus
        .publish(
          TOPICS.usageEvents,
          batch.flatMap((c) => c.messages),
        )
        .then(
          () => batch.forEach((c) => c.resolve()),
          (err: unknown) => batch.forEach((c) => c.reject(err)),
        )
        .finally(() => {
          this.inFlight -= 1;
          this.flush();
        });
    }
  }
}
