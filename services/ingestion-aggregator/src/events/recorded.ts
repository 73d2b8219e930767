import { TOPICS, type Bus } from '@billstream/bus';
import type { UsageEventMessage, UsageRecordedMessage } from '@billstream/contracts';
import type { Logger } from '@billstream/logger';

/** Announces stored usage: called with a batch's events once they are committed; never waits for the broker. */
export type UsageRecorded = (events: UsageEventMessage[]) => void;

export interface UsageRecordedPublisher {
  recorded: UsageRecorded;
  /** Resolves once every notification noted so far was published (or failed). */
  drain(): Promise<void>;
}

/**
 * Publishes one `usage-recorded` message per (tenant, environment, external customer) of stored
 * batches (ADR 0024), keyed like usage events. A hint for billing's real-time balance, sent
 * after the commit so a balance never runs ahead of stored usage. The consumer loop does not
 * wait for it: one publish is in flight at a time, and customers stored meanwhile are coalesced
 * into the next one (under load, fewer and larger publishes; with the broker down, one retrying
 * publish, not one per batch). A failed publish is logged and dropped: billing's sweep
 * recomputes every customer.
 */
export function usageRecordedPublisher(bus: Bus, logger: Logger, clock: () => Date = () => new Date()): UsageRecordedPublisher {
  let pending = new Map<string, UsageRecordedMessage>();
  let sending: Promise<void> | undefined;
  const pump = async () => {
    while (pending.size > 0) {
      const batch = pending;
      pending = new Map();
      try {
        await bus.publish(
          TOPICS.usageRecorded,
          [...batch].map(([key, value]) => ({ key, value: JSON.stringify(value) })),
        );
      } catch (err) {
        logger.warn('usage-recorded notifications not published; billing sweeps these customers later', { err, customers: batch.size });
      }
    }
    sending = undefined;
  };
  return {
    recorded(events) {
      const storedAt = clock().toISOString();
      for (const e of events) {
        const key = `${e.tenant_id}:${e.environment_id}:${e.external_customer_id}`;
        pending.set(key, { tenant_id: e.tenant_id, environment_id: e.environment_id, external_customer_id: e.external_customer_id, stored_at: storedAt });
      }
      if (pending.size > 0 && !sending) sending = pump();
    },
    drain: async () => {
      while (sending) await sending;
    },
  };
}
