import type { BatchHandler, ConsumedMessage } from '@billstream/bus';
import type { Db, Trx } from '@billstream/db';
import type { Logger } from '@billstream/logger';

export interface IdempotentHandlerOptions<T> {
  db: Db;
  /** Name under which processed message ids are recorded. */
  group: string;
  logger: Logger;
  /** Parses the message; a message that does not parse is logged and skipped. */
  parse(message: ConsumedMessage): T;
  /** Applies one message inside the transaction that records it as processed. */
  handle(trx: Trx, value: T, message: ConsumedMessage): Promise<void>;
}

export function messageIdOf(message: ConsumedMessage): string {
  return message.headers['message-id'] || `${message.topic}:${message.partition}:${message.offset}`;
}

/**
 * A batch handler that applies each message once: the message id is recorded in
 * `processed_messages` in the same transaction as the message's effects, so a message
 * delivered again (redelivery after a crash, a relay that published twice) is skipped.
 * The bus commits the batch's offsets only after this resolves.
 */
export function idempotentHandler<T>({ db, group, logger, parse, handle }: IdempotentHandlerOptions<T>): BatchHandler {
  return async (messages, ctx) => {
    for (const message of messages) {
      let value: T;
      try {
        value = parse(message);
      } catch (err) {
        logger.error('skipping a message that does not parse', {
          group,
          topic: message.topic,
          partition: message.partition,
          offset: message.offset,
          err,
        });
        continue;
      }
      const id = messageIdOf(message);
      await db.transaction(async (trx) => {
        const inserted = await trx('processed_messages')
          .insert({ consumer_group: group, message_id: id })
          .onConflict(['consumer_group', 'message_id'])
          .ignore()
          .returning('message_id');
        if (inserted.length === 0) return;
        await handle(trx, value, message);
      });
      await ctx.heartbeat();
    }
  };
}

/**
 * Forgets processed message ids older than `before`. Keep them longer than any message can
 * be redelivered (Kafka retention, 7 days by default): the relays keep 14 days.
 */
export async function pruneProcessedMessages(db: Db, before: Date): Promise<number> {
  return db('processed_messages').where('processed_at', '<', before).delete();
}
