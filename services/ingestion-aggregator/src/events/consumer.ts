import type { BatchHandler } from '@billstream/bus';
import { usageEventMessageSchema } from '@billstream/contracts';
import type { Logger } from '@billstream/logger';
import { scopeLockKey, scopeOf } from '../customers/lock';
import type { EventPartitions } from './partitions';
import type { EventStore } from './store';

export const USAGE_EVENTS_GROUP = 'ingestion-aggregator.usage-events';

/** Below this many messages per part a batch is stored in fewer transactions (each commit costs a WAL flush). */
const MIN_PART_SIZE = 500;

/**
 * Stores each consumed batch of usage events (dedup included); the bus commits the batch's
 * offsets only after every part of it committed. The batch is split by dedup key into
 * `parallelism` parts stored in parallel transactions (disjoint keys: no lock waits between
 * them); a crash between their commits is covered like any redelivery, by the dedup keys.
 * A message that does not parse (never produced by the gateway) is logged and skipped, so it
 * cannot block the partition.
 */
export function usageEventsHandler(store: EventStore, partitions: EventPartitions, logger: Logger, parallelism = 2): BatchHandler {
  return async (messages) => {
    const started = process.hrtime.bigint();
    const ways = Math.max(1, Math.min(parallelism, Math.ceil(messages.length / MIN_PART_SIZE)));
    const parts = Array.from({ length: ways }, () => ({ values: [] as string[], scopes: [] as string[] }));
    const timestamps: string[] = [];
    for (const message of messages) {
      let parsed;
      try {
        parsed = usageEventMessageSchema.parse(JSON.parse(message.value));
      } catch (err) {
        logger.error('skipping a usage event message that does not parse', {
          partition: message.partition,
          offset: message.offset,
          err,
        });
        continue;
      }
      const scope = scopeOf(parsed.tenant_id, parsed.environment_id);
      const part = parts[(scopeLockKey(`${scope}:${parsed.event_id}`) >>> 0) % ways];
      part.values.push(message.value);
      part.scopes.push(scope);
      timestamps.push(parsed.timestamp);
    }
    await partitions.ensureFor(timestamps);
    const results = await Promise.all(parts.map((p) => store.storeBatch(p.values, p.scopes)));
    const result = results.reduce((a, r) => ({ received: a.received + r.received, stored: a.stored + r.stored }));
    logger.info('usage event batch stored', {
      partition: messages[0]?.partition,
      first_offset: messages[0]?.offset,
      messages: messages.length,
      stored: result.stored,
      duplicates: result.received - result.stored,
      duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
    });
  };
}
