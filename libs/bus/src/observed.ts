import { extractContext, inSpan, recordBatch, SpanKind, tracingEnabled } from '@billstream/observability';
import type { ConsumedMessage } from './types';

/** Most trace links one batch span carries (one per message that came with a trace context). */
const MAX_LINKS = 128;

/**
 * Runs a consumer group's handler on one batch (one topic and partition) with its metrics
 * (`billstream_kafka_*`: messages, duration, failures) and, when tracing is on, a consumer span
 * that continues the trace of the batch's first traced message (W3C `traceparent` header) and
 * links the others: the handler's database calls and outbox rows join that trace.
 */
export async function handleObserved(group: string, messages: ConsumedMessage[], handle: () => Promise<void>): Promise<void> {
  const topic = messages[0].topic;
  const started = process.hrtime.bigint();
  const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
  try {
    if (tracingEnabled()) await inSpan(`${topic} process`, batchSpanOptions(group, messages), handle);
    else await handle();
  } catch (err) {
    recordBatch(group, topic, messages.length, seconds(), false);
    throw err;
  }
  recordBatch(group, topic, messages.length, seconds(), true);
}

function batchSpanOptions(group: string, messages: ConsumedMessage[]) {
  const traced = messages.filter((m) => m.headers.traceparent).slice(0, MAX_LINKS);
  return {
    kind: SpanKind.CONSUMER,
    parent: traced.length > 0 ? extractContext(traced[0].headers) : undefined,
    links: traced.slice(1).map((m) => extractContext(m.headers)),
    attributes: {
      'messaging.system': 'kafka',
      'messaging.destination.name': messages[0].topic,
      'messaging.consumer.group.name': group,
      'messaging.batch.message_count': messages.length,
    },
  };
}
