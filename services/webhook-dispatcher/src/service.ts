import type { Subscription } from '@billstream/bus';
import { pingDb, migrate } from '@billstream/db';
import { createServiceApp, type Service, type ServiceDeps } from '@billstream/runtime';
import type { WebhookSettings } from './config';
import { mountDeliveryRoutes } from './deliveries/routes';
import { DeliveryService } from './deliveries/service';
import { dispatchHandler, subscribeDispatch } from './dispatch/consumer';
import { RetentionJob } from './dispatch/retention';
import { WebhookSender } from './dispatch/sender';
import { TaskStore } from './dispatch/task-store';
import { registerPendingGauges } from './dispatch/pending-gauges';
import { DeliveryWorker } from './dispatch/worker';
import { mountEndpointRoutes } from './endpoints/routes';
import { EndpointService } from './endpoints/service';
import { migrations, SCHEMA } from './migrations';
import { UrlPolicy } from './url-policy';

export interface WebhookServiceConfig extends WebhookSettings {
  internalToken: string;
}

/**
 * Webhook endpoints and the dispatcher: a consumer of customer and wallet events that
 * records one delivery task per matching endpoint, and a worker that sends due tasks,
 * records every attempt and plans retries.
 */
export function createWebhookService({ db, bus, logger }: ServiceDeps, config: WebhookServiceConfig): Service {
  const policy = new UrlPolicy({ allowInsecure: config.allowInsecure, allowPrivate: config.allowPrivate });
  const sender = new WebhookSender(policy, config.timeoutMs);
  const endpoints = new EndpointService(db, policy);
  const deliveries = new DeliveryService(db, endpoints, sender);
  const tasks = new TaskStore();
  const worker = new DeliveryWorker({ db, tasks, sender, settings: config, logger });
  const retention = new RetentionJob(db, tasks, config.retentionDays, logger);
  let subscription: Subscription | undefined;
  let removeGauges: (() => void) | undefined;

  const ready = async () => ({ database: await pingDb(db), broker: await bus.healthy() });
  const app = createServiceApp({
    service: 'webhook-dispatcher',
    logger,
    internalToken: config.internalToken,
    ready,
    mount: (a) => {
      mountEndpointRoutes(a, endpoints, logger);
      mountDeliveryRoutes(a, deliveries, logger);
    },
  });
  return {
    name: 'webhook-dispatcher',
    schema: SCHEMA,
    migrations,
    app,
    ready,
    async start() {
      await migrate(db, SCHEMA, migrations);
      worker.start();
      retention.start();
      removeGauges = registerPendingGauges(db);
      subscription = await subscribeDispatch(bus, dispatchHandler(db, logger, () => worker.nudge()));
    },
    async stop() {
      await subscription?.stop();
      removeGauges?.();
      await worker.stop();
      await retention.stop();
      await sender.close();
    },
  };
}
