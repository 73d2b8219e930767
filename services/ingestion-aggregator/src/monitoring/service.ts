import { TOPICS, type Bus } from '@billstream/bus';
import { ServiceUnavailableError } from '@billstream/errors';
import type { EventStore } from '../events/store';
import { USAGE_EVENTS_GROUP } from '../events/consumer';

export interface Monitoring {
  totalEvents: number;
  lastEventAt: Date | null;
  consumerLag: number;
}

/**
 * Ingestion health of one tenant+environment: stored events and the newest one's receipt time
 * (kept per batch in event_stats, so this never counts the events table), and the usage-events
 * consumer group's lag (of the whole topic: Kafka partitions do not follow tenants).
 */
export class MonitoringService {
  constructor(
    private readonly store: EventStore,
    private readonly bus: Bus,
  ) {}

  private async lag(): Promise<number> {
    try {
      return await this.bus.lag(USAGE_EVENTS_GROUP, TOPICS.usageEvents);
    } catch (err) {
      throw new ServiceUnavailableError('The event queue is unavailable; consumer lag cannot be read', undefined, { cause: err });
    }
  }

  async monitor(tenantId: string, environmentId: string): Promise<Monitoring> {
    const [stats, consumerLag] = await Promise.all([this.store.stats(tenantId, environmentId), this.lag()]);
    return { totalEvents: stats.totalEvents, lastEventAt: stats.lastEventAt, consumerLag };
  }
}
