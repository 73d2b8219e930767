import type { BatchHandler, ConsumedMessage } from '@billstream/bus';
import type { UsageEventMessage } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { recordEventsStored } from '@billstream/observability';
import { scopeLockKey, scopeOf } from '../customers/lock';
import type { DeadLetter, DeadLetterStore } from './dead-letter-store';
import { storeIsolating } from './isolate';
import { ownerOfEvent, parseUsageMessage } from './message';
import type { EventPartitions } from './partitions';
import { recordErrorOf } from './record-errors';
import type { UsageRecorded } from './recorded';
import type { EventStore, StoreResult } from './store';

export const USAGE_EVENTS_GROUP = 'ingestion-aggregator.usage-events';

/** Below this many messages per part a batch is stored in fewer transactions (each commit costs a WAL flush). */
const MIN_PART_SIZE = 500;

export interface UsageEventsHandlerDeps {
  db: Db;
  events: EventStore;
  deadLetters: DeadLetterStore;
  partitions: EventPartitions;
  logger: Logger;
  /** Parallel transactions per batch (default 2). */
  parallelism?: number;
  /** Told the batch's stored events after they committed (billing's real-time balance, ADR 0024). */
  recorded?: UsageRecorded;
}

interface Item {
  message: ConsumedMessage;
  event: UsageEventMessage;
  /** `tenant:environment`, the key of the projection lock. */
  scopeKey: string;
}

function settledOrThrow<T>(settled: PromiseSettledResult<T>[]): T[] {
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
}

/**
 * Stores each consumed batch of usage events (dedup included); the bus commits the batch's
 * offsets only after every part of it committed. The batch is split by dedup key into
 * `parallelism` parts stored in parallel transactions (disjoint keys: no lock waits between
 * them); a crash between their commits is covered like any redelivery, by the dedup keys.
 *
 * No record can block its partition (docs/ingestion-storage.md, "Dead letters"): a message
 * that does not parse, and a record Postgres refuses for its own content (a part failing with
 * a record error is halved until the record is alone), goes to `event_dead_letters` with its
 * error; the rest of the batch is stored. Any other failure rejects the batch: the bus
 * delivers it again whole.
 */
export function usageEventsHandler({ db, events, deadLetters, partitions, logger, parallelism = 2, recorded }: UsageEventsHandlerDeps): BatchHandler {
  return async (messages) => {
    const started = process.hrtime.bigint();
    const ways = Math.max(1, Math.min(parallelism, Math.ceil(messages.length / MIN_PART_SIZE)));
    const parts = Array.from({ length: ways }, () => [] as Item[]);
    const letters: DeadLetter[] = [];
    const timestamps: string[] = [];
    const letter = (message: ConsumedMessage, rest: Pick<DeadLetter, 'owner' | 'error'>): DeadLetter => ({
      topic: message.topic,
      partition: message.partition,
      offset: message.offset,
      key: message.key,
      value: message.value,
      ...rest,
    });
    for (const message of messages) {
      const parsed = parseUsageMessage(message.key, message.value);
      if (!parsed.ok) {
        letters.push(letter(message, { owner: parsed.owner, error: parsed.error }));
        continue;
      }
      const { event } = parsed;
      const scopeKey = scopeOf(event.tenant_id, event.environment_id);
      parts[(scopeLockKey(`${scopeKey}:${event.event_id}`) >>> 0) % ways].push({ message, event, scopeKey });
      timestamps.push(event.timestamp);
    }
    await partitions.ensureFor(timestamps);
    const store = (items: Item[]) =>
      events.storeBatch(
        db,
        items.map((i) => i.message.value),
        items.map((i) => i.scopeKey),
      );
    // Every part finishes before a failure is passed on, so no part still runs when the batch comes again.
    const isolated = settledOrThrow(await Promise.allSettled(parts.map((part) => storeIsolating(part, store, recordErrorOf))));
    for (const { failed } of isolated) {
      for (const { item, error } of failed) letters.push(letter(item.message, { owner: ownerOfEvent(item.event), error }));
    }
    const kept = await deadLetters.insert(db, letters);
    if (recorded) {
      const lettered = new Set(isolated.flatMap((i) => i.failed.map((f) => f.item)));
      recorded(parts.flat().filter((item) => !lettered.has(item)).map((item) => item.event));
    }
    for (const l of letters) {
      logger.warn('usage event record dead-lettered', {
        partition: l.partition,
        offset: l.offset,
        tenant_id: l.owner.tenantId,
        event_id: l.owner.eventId,
        error_code: l.error.code,
        error: l.error.message,
      });
    }
    const result = isolated
      .flatMap((i) => i.results)
      .reduce((a: StoreResult, r) => ({ received: a.received + r.received, stored: a.stored + r.stored }), { received: 0, stored: 0 });
    recordEventsStored('stored', result.stored);
    recordEventsStored('duplicate', result.received - result.stored);
    recordEventsStored('dead_lettered', letters.length);
    logger.info('usage event batch stored', {
      // One fetch's batches of several partitions come as one (`joinPartitions`): the first offset of each.
      first_offsets: firstOffsets(messages),
      messages: messages.length,
      stored: result.stored,
      duplicates: result.received - result.stored,
      dead_lettered: letters.length,
      dead_letters_new: kept,
      duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
    });
  };
}

/** `{partition: first offset}` of a batch that may join several partitions. */
function firstOffsets(messages: ConsumedMessage[]): Record<number, string> {
  const out: Record<number, string> = {};
  for (const m of messages) if (!(m.partition in out)) out[m.partition] = m.offset;
  return out;
}
