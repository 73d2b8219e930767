import { TOPICS, type BatchHandler, type Bus, type ConsumedMessage, type Subscription } from '@billstream/bus';
import { domainEventSchema, type ReceivedDomainEvent } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { idempotentBatchHandler } from '@billstream/outbox';
import { envelopeOf, isPublicEvent, serializeEnvelope } from './envelope';
import { TaskStore } from './task-store';

export const DISPATCH_GROUP = 'webhook.dispatch';
export const DISPATCH_TOPICS = [TOPICS.customerEvents, TOPICS.walletEvents, TOPICS.billingEvents];

/** The event, and the trace context it travelled with (kept for the delivery attempts). */
function parseEvent(message: ConsumedMessage): { event: ReceivedDomainEvent; traceParent?: string } {
  const event = domainEventSchema.parse(JSON.parse(message.value));
  if (Number.isNaN(Date.parse(event.occurred_at))) throw new Error(`occurred_at is not a date: ${event.occurred_at}`);
  return { event, traceParent: message.headers.traceparent };
}

/**
 * Turns each domain event of a batch into its envelope and one pending task per matching
 * endpoint, in one transaction per batch that also records the message ids (a redelivered
 * message is skipped), so one commit serves hundreds of events. It never waits for an HTTP
 * call: `onEnqueued` wakes the worker after the commit.
 */
export function dispatchHandler(db: Db, logger: Logger, onEnqueued: () => void): BatchHandler {
  const tasks = new TaskStore();
  return idempotentBatchHandler({
    db,
    group: DISPATCH_GROUP,
    logger,
    parse: parseEvent,
    handle: (trx, events) =>
      tasks.enqueue(
        trx,
        events.flatMap(({ event, traceParent }) => {
          if (!isPublicEvent(event)) return [];
          const envelope = envelopeOf(event);
          return [{ envelope, body: serializeEnvelope(envelope), traceParent }];
        }),
      ),
    afterCommit: (enqueued) => {
      if (enqueued > 0) onEnqueued();
    },
  });
}

export function subscribeDispatch(bus: Bus, handler: BatchHandler): Promise<Subscription> {
  return bus.subscribe({ groupId: DISPATCH_GROUP, topics: DISPATCH_TOPICS, handler });
}
