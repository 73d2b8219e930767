import { TOPICS } from '@billstream/bus';
import type { DomainEvent } from '@billstream/contracts';
import type { Knex, Trx } from '@billstream/db';

/**
 * The outbox rows of a change's events as one insert, keyed by the wallet id so one
 * wallet's events keep their order; the same rows `writeOutbox` of @billstream/outbox writes
 * one at a time, batched so that a change saves in one round trip.
 */
export function outboxRows(trx: Trx, walletId: string, events: DomainEvent[]): Knex.QueryBuilder {
  return trx('outbox').insert(
    events.map((event) => ({
      id: event.id,
      topic: TOPICS.walletEvents,
      message_key: walletId,
      value: JSON.stringify(event),
      headers: JSON.stringify({ 'message-id': event.id, 'event-type': event.type }),
    })),
  );
}
