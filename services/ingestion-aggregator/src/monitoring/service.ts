import { TOPICS, type Bus } from '@billstream/bus';
import type { Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { ServiceUnavailableError } from '@billstream/errors';
import type { DeadLetterStore } from '../events/dead-letter-store';
import type { EventStore } from '../events/store';
import { USAGE_EVENTS_GROUP } from '../events/consumer';

export interface Monitoring {
  totalEvents: number;
  lastEventAt: Date | null;
  consumerLag: number;
  deadLetteredEvents: number;
}

/**
 * Ingestion health of one tenant+environment: stored events and the newest one's receipt time
 * (kept per batch in event_stats, so this never counts the events table), the records held as
 * dead letters (rare: counted on their index), and the usage-events consumer group's lag (of
 * the whole topic: Kafka partitions do not follow tenants).
 */
export class MonitoringService {
  constructor(
    private readonly db: Db,
    private readonly events: EventStore,
    private readonly deadLetters: DeadLetterStore,
    private readonly bus: Bus,
  ) {}

  private async lag(): Promise<number> {
    try {
      return await this.bus.lag(USAGE_EVENTS_GROUP, TOPICS.usageEvents);
    } catch (err) {
      throw new ServiceUnavailableError('The event queue is unavailable; consumer lag cannot be read', undefined, { cause: err });
    }
  }

  /** Stored events per UTC hour of receipt from `since` (on the hour). */
  async hourly(scope: Scope, since: Date): Promise<Array<{ hour: Date; events: number }>> {
    return this.events.hourly(this.db, scope, since);
  }

  async monitor(scope: Scope): Promise<Monitoring> {
    const [stats, deadLetteredEvents, consumerLag] = await Promise.all([
      this.events.stats(this.db, scope),
      this.deadLetters.count(this.db, scope),
      this.lag(),
    ]);
    return { totalEvents: stats.totalEvents, lastEventAt: stats.lastEventAt, consumerLag, deadLetteredEvents };
  }
}
