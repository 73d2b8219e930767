import { TOPICS, type Bus, type Subscription } from '@billstream/bus';
import { USAGE_RESET_KEY, usageRecordedMessageSchema } from '@billstream/contracts';
import type { Logger } from '@billstream/logger';
import type { UnbilledRefresher } from './refresher';

export const USAGE_RECORDED_GROUP = 'billing.usage-recorded';

/**
 * Consumes `usage-recorded` (ADR 0024): each message names a customer whose usage events were
 * stored; the refresher recomputes it after its debounce. The handler only notes the customers
 * (no database work), so its offsets commit at once: a notification lost in a crash is made
 * up by the next one or the sweep, and the amounts never depend on which notifications came.
 */
export function subscribeUsageRecorded(bus: Bus, refresher: UnbilledRefresher, logger: Logger): Promise<Subscription> {
  return bus.subscribe({
    groupId: USAGE_RECORDED_GROUP,
    topics: [TOPICS.usageRecorded],
    // Only what is stored from now on matters; older notifications are covered by the sweep.
    fromBeginning: false,
    // One offset commit per fetch rather than per partition (ADR 0028).
    joinPartitions: true,
    handler: async (messages) => {
      for (const m of messages) {
        // A reset (ADR 0026) names no customer: the sweep covers balances.
        if (m.key === USAGE_RESET_KEY) continue;
        let parsed;
        try {
          parsed = usageRecordedMessageSchema.safeParse(JSON.parse(m.value));
        } catch {
          parsed = undefined;
        }
        if (!parsed?.success) {
          logger.warn('usage-recorded message ignored: not a notification', { partition: m.partition, offset: m.offset });
          continue;
        }
        const n = parsed.data;
        refresher.touch({ tenantId: n.tenant_id, environmentId: n.environment_id }, { externalIds: [n.external_customer_id] });
      }
    },
  });
}
