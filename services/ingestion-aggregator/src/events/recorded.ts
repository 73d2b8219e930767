import { TOPICS, type Bus } from '@billstream/bus';
import type { UsageEventMessage, UsageRecordedMessage } from '@billstream/contracts';
import type { Logger } from '@billstream/logger';

/** Announces stored usage: called with a batch's events once they are committed. */
export type UsageRecorded = (events: UsageEventMessage[]) => Promise<void>;

/**
 * Publishes one `usage-recorded` message per (tenant, environment, external customer) of a
 * stored batch (ADR 0024), keyed like usage events. A hint for billing's real-time balance,
 * sent after the commit so a balance never runs ahead of stored usage; a failed publish is
 * logged and not retried (billing's sweep recomputes every customer), and never fails the batch.
 */
export function usageRecordedPublisher(bus: Bus, logger: Logger, clock: () => Date = () => new Date()): UsageRecorded {
  return async (events) => {
    const storedAt = clock().toISOString();
    const byKey = new Map<string, UsageRecordedMessage>();
    for (const e of events) {
      const key = `${e.tenant_id}:${e.environment_id}:${e.external_customer_id}`;
      if (!byKey.has(key)) {
        byKey.set(key, { tenant_id: e.tenant_id, environment_id: e.environment_id, external_customer_id: e.external_customer_id, stored_at: storedAt });
      }
    }
    if (byKey.size === 0) return;
    try {
      await bus.publish(
        TOPICS.usageRecorded,
        [...byKey].map(([key, value]) => ({ key, value: JSON.stringify(value) })),
      );
    } catch (err) {
      logger.warn('usage-recorded notifications not published; billing sweeps these customers later', { err, customers: byKey.size });
    }
  };
}
