import { TOPICS, type Bus } from '@billstream/bus';
import { USAGE_RESET_KEY, type UsageEventMessage, type UsageRecordedMessage, type UsageResetMessage } from '@billstream/contracts';
import type { Logger } from '@billstream/logger';

/** Announces stored usage: called with a batch's events once they are committed; never waits for the broker. */
export type UsageRecorded = (events: UsageEventMessage[]) => void;

export interface UsageRecordedPublisher {
  recorded: UsageRecorded;
  /**
   * Announces that notifications may have been missed (`UsageResetMessage`): called when this
   * replica joins the usage consumer group, since a predecessor may have died between a
   * commit and its notifications.
   */
  reset(): void;
  /** Resolves once every notification noted so far was published. */
  drain(): Promise<void>;
  /** At shutdown: publishes what is noted, giving up after a failed attempt or `timeoutMs`. */
  close(timeoutMs?: number): Promise<void>;
}

const RETRY_MAX_MS = 5000;

/**
 * Publishes one `usage-recorded` message per (tenant, environment, external customer) of stored
 * batches (ADR 0024), keyed like usage events. A hint for billing's real-time balance and the
 * entitlement check's usage cache (ADR 0026), sent after the commit so that nobody reads usage
 * ahead of what is stored. The consumer loop does not wait for it: one publish is in flight at
 * a time, and customers stored meanwhile are coalesced into the next one (under load, fewer
 * and larger publishes). A failed publish is tried again with backoff (up to 5 s apart), its
 * customers merged into what is noted meanwhile, so a notification is late while the broker
 * is down but not lost while this process lives; the reset on joining covers a process that
 * died first.
 */
export function usageRecordedPublisher(bus: Bus, logger: Logger, clock: () => Date = () => new Date()): UsageRecordedPublisher {
  let pending = new Map<string, UsageRecordedMessage | UsageResetMessage>();
  let sending: Promise<void> | undefined;
  let closing = false;
  let wake: () => void = () => undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const pump = async () => {
    let failures = 0;
    while (pending.size > 0) {
      const batch = pending;
      pending = new Map();
      try {
        await bus.publish(
          TOPICS.usageRecorded,
          [...batch].map(([key, value]) => ({ key, value: JSON.stringify(value) })),
        );
        failures = 0;
      } catch (err) {
        failures += 1;
        // What was noted meanwhile is newer: it wins over the failed batch's entry of a key.
        for (const [key, value] of batch) if (!pending.has(key)) pending.set(key, value);
        if (closing) {
          logger.warn('usage-recorded notifications not published at shutdown; the next replica to join announces a reset', { err, customers: pending.size });
          pending.clear();
          break;
        }
        logger.warn('usage-recorded notifications not published; trying again', { err, customers: pending.size, attempt: failures });
        await pause(Math.min(RETRY_MAX_MS, 100 * 2 ** failures));
      }
    }
    sending = undefined;
  };
  const send = () => {
    if (pending.size > 0 && !sending) sending = pump();
  };
  return {
    recorded(events) {
      const storedAt = clock().toISOString();
      for (const e of events) {
        const key = `${e.tenant_id}:${e.environment_id}:${e.external_customer_id}`;
        pending.set(key, { tenant_id: e.tenant_id, environment_id: e.environment_id, external_customer_id: e.external_customer_id, stored_at: storedAt });
      }
      send();
    },
    reset() {
      pending.set(USAGE_RESET_KEY, { reset: true, stored_at: clock().toISOString() });
      send();
    },
    drain: async () => {
      while (sending) await sending;
    },
    close: async (timeoutMs = 5000) => {
      closing = true;
      wake();
      let timer: NodeJS.Timeout | undefined;
      const gaveUp = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([(async () => {
        while (sending) await sending;
      })(), gaveUp]);
      clearTimeout(timer);
    },
  };
}
