import type { BatchContext, BatchHandler, ConsumedMessage } from '@billstream/bus';
import type { Db, Trx } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { consumerRetryPolicy, deadLetter, retryDelayMs, type ConsumerRetryPolicy } from './dead-letters';

export interface IdempotentHandlerOptions<T, P = undefined> {
  db: Db;
  /** Name under which processed message ids are recorded. */
  group: string;
  logger: Logger;
  /** Parses the message; a message that does not parse is dead-lettered (ADR 0055). */
  parse(message: ConsumedMessage): T;
  /**
   * Reads what `handle` needs from other services, before its transaction: no handler calls
   * another service while it holds one (ADR 0055). `handle` re-checks it under its locks and
   * throws when the state changed, and the message is tried again (prepared anew).
   */
  prepare?(value: T, message: ConsumedMessage): Promise<P>;
  /** Applies one message inside the transaction that records it as processed. */
  handle(trx: Trx, value: T, message: ConsumedMessage, prepared: P): Promise<void>;
  /** Attempts before a message is dead-lettered; default `consumerRetryPolicy()` (the CONSUMER_* settings). */
  retry?: ConsumerRetryPolicy;
}

export interface IdempotentBatchHandlerOptions<T, R> {
  db: Db;
  group: string;
  logger: Logger;
  /** Parses a message; one that does not parse is dead-lettered (ADR 0055). */
  parse(message: ConsumedMessage): T;
  /**
   * Whether the consumer wants the message at all, decided from its headers without parsing it:
   * one it does not want is neither parsed nor recorded (it has no effect to repeat), so a
   * consumer of a few kinds of a busy topic pays nothing for the rest (ADR 0061).
   */
  relevant?(message: ConsumedMessage): boolean;
  /** Applies the batch's new messages (duplicates removed) inside the one transaction that records them. */
  handle(trx: Trx, values: T[]): Promise<R>;
  /** Runs after that transaction committed, with what `handle` returned. */
  afterCommit?(result: R): void;
  retry?: ConsumerRetryPolicy;
}

export function messageIdOf(message: ConsumedMessage): string {
  return message.headers['message-id'] || `${message.topic}:${message.partition}:${message.offset}`;
}

/** Parses each message; one that does not parse is dead-lettered (it would fail on every delivery). */
/** Messages parsed between two turns of the event loop: a large batch does not hold the process's requests for its whole parse. */
const PARSE_SLICE = 200;

async function parseEach<T>(messages: ConsumedMessage[], parse: (m: ConsumedMessage) => T, db: Db, group: string, logger: Logger, relevant?: (m: ConsumedMessage) => boolean) {
  const parsed: Array<{ id: string; value: T; message: ConsumedMessage }> = [];
  let sliced = 0;
  for (const message of messages) {
    if (relevant && !relevant(message)) continue;
    if (++sliced % PARSE_SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      parsed.push({ id: messageIdOf(message), value: parse(message), message });
    } catch (err) {
      await deadLetter(db, logger, group, messageIdOf(message), message, err, 1);
    }
  }
  return parsed;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `attempt` until it succeeds or `policy.maxAttempts` tries failed; answers the last error
 * then (undefined on success). Heartbeats around each pause, which holds no transaction.
 */
async function withRetries(policy: ConsumerRetryPolicy, ctx: BatchContext, log: (err: unknown, attempt: number) => void, attempt: () => Promise<void>): Promise<{ err: unknown } | undefined> {
  for (let n = 1; ; n += 1) {
    try {
      await attempt();
      return undefined;
    } catch (err) {
      if (n >= policy.maxAttempts) return { err };
      log(err, n);
      await ctx.heartbeat();
      await sleep(retryDelayMs(policy, n));
      await ctx.heartbeat();
    }
  }
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
 * A message whose attempts all fail (`retry`, with backoff) is dead-lettered with its error
 * and the next one is handled: no message blocks its partition (ADR 0055). Only a failure to
 * write the dead letter fails the batch. The bus commits the batch's offsets after this resolves.
 */
export function idempotentHandler<T, P = undefined>({ db, group, logger, parse, prepare, handle, retry }: IdempotentHandlerOptions<T, P>): BatchHandler {
  const policy = retry ?? consumerRetryPolicy();
  return async (messages, ctx) => {
    for (const { id, value, message } of await parseEach(messages, parse, db, group, logger)) {
      const failed = await withRetries(policy, ctx, (err, attempt) => logger.warn('consumer message failed; will retry', { group, topic: message.topic, partition: message.partition, offset: message.offset, message_id: id, attempt, err }), async () => {
        const prepared = (prepare ? await prepare(value, message) : undefined) as P;
        await db.transaction(async (trx) => {
          if ((await recordProcessed(trx, group, [id])).size === 0) return;
          await handle(trx, value, message, prepared);
        });
      });
      if (failed) await deadLetter(db, logger, group, id, message, failed.err, policy.maxAttempts);
      await ctx.heartbeat();
    }
  };
}

/**
 * The same rule for a whole batch in one transaction: one commit serves the batch, for
 * consumers whose effects of many messages are cheaper written together. A batch whose
 * attempts all fail is applied one message at a time, and a message that fails alone is
 * dead-lettered (ADR 0055).
 */
export function idempotentBatchHandler<T, R>({
  db,
  group,
  logger,
  parse,
  handle,
  afterCommit,
  relevant,
  retry,
}: IdempotentBatchHandlerOptions<T, R>): BatchHandler {
  const policy = retry ?? consumerRetryPolicy();
  const apply = async (parsed: Array<{ id: string; value: T }>) => {
    const result = await db.transaction(async (trx) => {
      const fresh = await recordProcessed(trx, group, parsed.map((p) => p.id));
      return handle(
        trx,
        parsed.filter((p) => fresh.delete(p.id)).map((p) => p.value),
      );
    });
    afterCommit?.(result);
  };
  return async (messages, ctx) => {
    const parsed = await parseEach(messages, parse, db, group, logger, relevant);
    if (parsed.length === 0) return;
    const log = (err: unknown, attempt: number) => logger.warn('consumer batch failed; will retry', { group, topic: parsed[0].message.topic, messages: parsed.length, attempt, err });
    const failed = await withRetries(policy, ctx, log, () => apply(parsed));
    await ctx.heartbeat();
    if (!failed) return;
    // One message at a time: the ones that fail alone are set aside, the others applied.
    for (const one of parsed) {
      try {
        await apply([one]);
      } catch (err) {
        await deadLetter(db, logger, group, one.id, one.message, err, policy.maxAttempts + 1);
      }
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
