import { TOPICS, type BatchHandler, type Bus, type ConsumedMessage, type Subscription } from '@billstream/bus';
import { domainEventSchema, type DomainEvent } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { envelopeOf, isPublicEventName, serializeEnvelope } from './envelope';
import { TaskStore } from './task-store';

export const DISPATCH_GROUP = 'webhook.dispatch';
export const DISPATCH_TOPICS = [TOPICS.customerEvents, TOPICS.walletEvents];

function parseEvent(message: ConsumedMessage): DomainEvent {
  const event = domainEventSchema.parse(JSON.parse(message.value));
  if (Number.isNaN(Date.parse(event.occurred_at))) throw new Error(`occurred_at is not a date: ${event.occurred_at}`);
  return event;
}

/**
 * Turns each domain event of a batch into its envelope and one pending task per matching
 * endpoint. The whole batch is one transaction that also records every message id in
 * `processed_messages` (the table and rule of `idempotentHandler`), so a redelivered
 * message is skipped, and one commit serves hundreds of events. It never waits for an
 * HTTP call: `onEnqueued` wakes the worker after the commit.
 */
export function dispatchHandler(db: Db, logger: Logger, onEnqueued: () => void): BatchHandler {
  return async (messages, ctx) => {
    const events: Array<{ id: string; event: DomainEvent }> = [];
    for (const message of messages) {
      try {
        const event = parseEvent(message);
        events.push({ id: message.headers['message-id'] || event.id, event });
      } catch (err) {
        logger.error('skipping a message that does not parse', {
          group: DISPATCH_GROUP,
          topic: message.topic,
          partition: message.partition,
          offset: message.offset,
          err,
        });
      }
    }
    if (events.length === 0) return;
    let enqueued = 0;
    await db.transaction(async (trx) => {
      const fresh = new Set(
        (
          await trx('processed_messages')
            .insert(events.map((e) => ({ consumer_group: DISPATCH_GROUP, message_id: e.id })))
            .onConflict(['consumer_group', 'message_id'])
            .ignore()
            .returning('message_id')
        ).map((r: { message_id: string }) => r.message_id),
      );
      const envelopes = events
        .filter(({ id, event }) => fresh.delete(id) && isPublicEventName(event.type))
        .map(({ event }) => {
          const envelope = envelopeOf(event);
          return { envelope, body: serializeEnvelope(envelope) };
        });
      enqueued = await new TaskStore(trx).enqueue(envelopes);
    });
    await ctx.heartbeat();
    if (enqueued > 0) onEnqueued();
  };
}

export function subscribeDispatch(bus: Bus, handler: BatchHandler): Promise<Subscription> {
  return bus.subscribe({ groupId: DISPATCH_GROUP, topics: DISPATCH_TOPICS, handler });
}
