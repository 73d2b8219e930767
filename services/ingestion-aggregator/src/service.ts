import { TOPICS, type Subscription } from '@billstream/bus';
import { pingDb, migrate } from '@billstream/db';
import { OutboxRelay } from '@billstream/outbox';
import { createServiceApp, type Service, type ServiceDeps } from '@billstream/runtime';
import { CUSTOMER_EVENTS_GROUP, CUSTOMER_TOPICS, customerEventsHandler } from './customers/consumer';
import { CustomerProjectionStore } from './customers/store';
import { USAGE_EVENTS_GROUP, usageEventsHandler } from './events/consumer';
import { DeadLetterStore } from './events/dead-letter-store';
import { EventPartitions } from './events/partitions';
import { usageRecordedPublisher } from './events/recorded';
import { mountEventRoutes } from './events/routes';
import { EventStore } from './events/store';
import { mountMeterInternalRoutes } from './meters/internal-routes';
import { mountMeterRoutes } from './meters/routes';
import { RollupBuilder } from './meters/rollup-builder';
import { RollupUsageStore } from './meters/rollup-usage-store';
import { MeterService } from './meters/service';
import { MeterStore } from './meters/store';
import { UsageStore } from './meters/usage-store';
import { migrations, SCHEMA } from './migrations';
import { mountMonitoringRoutes } from './monitoring/routes';
import { MonitoringService } from './monitoring/service';

export interface IngestionServiceConfig {
  internalToken: string;
  /** How often the months ahead get their events partition (default hourly). */
  partitionCheckIntervalMs?: number;
  /** Parallel transactions per consumed batch (default 2). */
  storeParallelism?: number;
}

export function createIngestionService({ db, bus, logger }: ServiceDeps, config: IngestionServiceConfig): Service {
  const relay = new OutboxRelay({ db, schema: SCHEMA, bus, logger });
  const events = new EventStore();
  const deadLetters = new DeadLetterStore();
  const partitions = new EventPartitions(db, logger);
  const meterStore = new MeterStore();
  const rollups = new RollupBuilder(db, meterStore, logger);
  const meters = new MeterService(db, meterStore, new UsageStore(), new RollupUsageStore(), rollups);
  const monitoring = new MonitoringService(db, events, deadLetters, bus);
  const projection = new CustomerProjectionStore();
  const notifications = usageRecordedPublisher(bus, logger);
  const subscriptions: Subscription[] = [];
  let partitionTimer: NodeJS.Timeout | undefined;

  const ready = async () => ({ database: await pingDb(db), broker: await bus.healthy() });
  const app = createServiceApp({
    service: 'ingestion-aggregator',
    logger,
    internalToken: config.internalToken,
    ready,
    mount: (a) => {
      mountEventRoutes(a, db, events, logger);
      mountMeterRoutes(a, meters, logger);
      mountMeterInternalRoutes(a, meters, logger);
      mountMonitoringRoutes(a, monitoring, logger);
    },
  });
  return {
    name: 'ingestion-aggregator',
    schema: SCHEMA,
    migrations,
    app,
    ready,
    async start() {
      await migrate(db, SCHEMA, migrations);
      await partitions.load();
      await partitions.ensureAhead();
      await bus.ensureTopics([TOPICS.usageRecorded]);
      partitionTimer = setInterval(() => {
        partitions.ensureAhead().catch((err) => logger.warn('could not create events partitions ahead', { err }));
      }, config.partitionCheckIntervalMs ?? 3_600_000);
      partitionTimer.unref();
      subscriptions.push(
        await bus.subscribe({
          groupId: CUSTOMER_EVENTS_GROUP,
          topics: CUSTOMER_TOPICS,
          handler: customerEventsHandler(db, projection, logger),
        }),
        await bus.subscribe({
          groupId: USAGE_EVENTS_GROUP,
          topics: [TOPICS.usageEvents],
          handler: usageEventsHandler({ db, events, deadLetters, partitions, logger, parallelism: config.storeParallelism, recorded: notifications.recorded }),
          // A predecessor of this member may have died between a commit and its notifications (ADR 0026).
          onJoin: () => notifications.reset(),
          // One transaction, offset commit and notice per fetch rather than per partition (ADR 0028).
          joinPartitions: true,
        }),
      );
      relay.start();
      await rollups.start();
    },
    async stop() {
      if (partitionTimer) clearInterval(partitionTimer);
      await rollups.stop();
      for (const s of subscriptions.splice(0)) await s.stop();
      await notifications.close();
      await relay.stop();
    },
  };
}
