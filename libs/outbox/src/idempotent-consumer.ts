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

export interface IdempotentBatchHandlerOptions<T, R> {
  db: Db;
  group: string;
  logger: Logger;
  parse(message: ConsumedMessage): T;
  /** Applies the batch's new messages (duplicates removed) inside the one transaction that records them. */
  handle(trx: Trx, values: T[]): Promise<R>;
  /** Runs after that transaction committed, with what `handle` returned. */
  afterCommit?(result: R): void;
}

export function messageIdOf(message: ConsumedMessage): string {
  return message.headers['message-id'] || `${message.topic}:${message.partition}:${message.offset}`;
}

/** Parses each message, logging and dropping those that do not parse (they would block the partition). */
function parseEach<T>(messages: ConsumedMessage[], parse: (m: ConsumedMessage) => T, group: string, logger: Logger) {
  const parsed: Array<{ id: string; value: T; message: ConsumedMessage }> = [];
  for (const message of messages) {
    try {
      parsed.push({ id: messageIdOf(message), value: parse(message), message });
    } catch (err) {
      logger.error('skipping a message that does not parse', {
        group,
        topic: message.topic,
        partition: message.partition,
        offset: message.offset,
        err,
      });
    }
  }
  return parsed;
}

/** Records message ids as processed; answers the ids that were new. */
async function recordProcessed(trx: Trx, group: string, ids: string[]): Promise<Set<string>> {
  const inserted: Array<{ message_id: string }> = await trx('processed_messages')
    .insert(ids.map((id) => ({ consumer_group: group, message_id: id })))
    .onConflict(['consumer_group', 'message_id'])
    .ignore()
    .returning('message_id');
  return new Set(inserted.map((r) => r.message_id));
}

/**
 * A batch handler that applies each message once: the message id is recorded in
 * `processed_messages` in the same transaction as the message's effects, so a message
 * delivered again (redelivery after a crash, a relay that published twice) is skipped.
 * The bus commits the batch's offsets only after this resolves.
 */
export function idempotentHandler<T>({ db, group, logger, parse, handle }: IdempotentHandlerOptions<T>): BatchHandler {
  return async (messages, ctx) => {
    for (const { id, value, message } of parseEach(messages, parse, group, logger)) {
      await db.transaction(async (trx) => {
        if ((await recordProcessed(trx, group, [id])).size === 0) return;
        await handle(trx, value, message);
      });
      await ctx.heartbeat();
    }
  };
}

/**
 * The same rule for a whole batch in one transaction: one commit serves the batch, for
 * consumers whose effects of many messages are cheaper written together.
 */
export function idempotentBatchHandler<T, R>({
  db,
  group,
  logger,
  parse,
  handle,
  afterCommit,
}: IdempotentBatchHandlerOptions<T, R>): BatchHandler {
  return async (messages, ctx) => {
    const parsed = parseEach(messages, parse, group, logger);
    if (parsed.length === 0) return;
    const result = await db.transaction(async (trx) => {
      const fresh = await recordProcessed(trx, group, parsed.map((p) => p.id));
      return handle(
        trx,
        parsed.filter((p) => fresh.delete(p.id)).map((p) => p.value),
      );
    });
    await ctx.heartbeat();
    afterCommit?.(result);
  };
}

/**
 * Forgets processed message ids older than `before`. Keep them longer than any message can
 * be redelivered (Kafka retention, 7 days by default): the relays keep 14 days.
 */
export async function pruneProcessedMessages(db: Db, before: Date): Promise<number> {
  return db('processed_messages').where('processed_at', '<', before).delete();
}
