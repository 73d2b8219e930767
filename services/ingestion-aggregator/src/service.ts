import { pingDb, migrate } from '@billstream/db';
import { OutboxRelay } from '@billstream/outbox';
import { createServiceApp, type Service, type ServiceDeps } from '@billstream/runtime';
import { migrations, SCHEMA } from './migrations';

export interface IngestionServiceConfig {
  internalToken: string;
}

export function createIngestionService({ db, bus, logger }: ServiceDeps, config: IngestionServiceConfig): Service {
  const relay = new OutboxRelay({ db, schema: SCHEMA, bus, logger });
  const ready = async () => ({ database: await pingDb(db), broker: await bus.healthy() });
  const app = createServiceApp({
    logger,
    internalToken: config.internalToken,
    ready,
    mount: () => {},
  });
  return {
    name: 'ingestion-aggregator',
    schema: SCHEMA,
    migrations,
    app,
    ready,
    async start() {
      await migrate(db, SCHEMA, migrations);
      relay.start();
    },
    async stop() {
      await relay.stop();
    },
  };
}
