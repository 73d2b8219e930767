import type { Subscription as BusSubscription } from '@billstream/bus';
import { migrate, pingDb } from '@billstream/db';
import { OutboxRelay } from '@billstream/outbox';
import { createServiceApp, type Service, type ServiceDeps } from '@billstream/runtime';
import { billingSettingsFrom, type BillingSettings } from './config';
import { subscribeCustomerEvents } from './customers/consumer';
import { CustomerDirectory, type CustomerLookup } from './customers/directory';
import { HttpCustomerLookup } from './customers/http-lookup';
import { CustomerStore } from './customers/store';
import type { Meters } from './meters/domain';
import { HttpMeters } from './meters/http-meters';
import { migrations, SCHEMA } from './migrations';
import { mountPlanRoutes } from './plans/routes';
import { PlanService } from './plans/service';
import { PlanStore } from './plans/store';
import { MeterCheck } from './prices/new-price';
import { mountPriceRoutes } from './prices/routes';
import { PriceService } from './prices/service';
import { PriceStore } from './prices/store';
import { PeriodJob } from './renewals/period-job';
import { mountSubscriptionRoutes } from './subscriptions/routes';
import { SubscriptionService } from './subscriptions/service';
import { SubscriptionStore } from './subscriptions/store';
import { UsageService } from './subscriptions/usage';

type Url = string | (() => string | undefined);

export interface BillingServiceConfig {
  internalToken: string;
  /** Base URL of the customer service (or a getter, when it is known only once it listens). */
  customerServiceUrl: Url;
  /** Base URL of the ingestion-aggregator, whose meter API gives usage. */
  ingestionServiceUrl: Url;
  /** Period job interval and renewal notice; default from `env` (BILLING_INTERVAL_MS, SUBSCRIPTION_RENEWAL_NOTICE_DAYS). */
  settings?: Partial<BillingSettings>;
  env?: NodeJS.ProcessEnv;
  clock?: () => Date;
  /** Replace the HTTP clients (tests of the service alone). */
  customerLookup?: CustomerLookup;
  meters?: Meters;
}

export interface BillingServiceHandle extends Service {
  plans: PlanService;
  prices: PriceService;
  subscriptions: SubscriptionService;
  periods: PeriodJob;
}

const getter = (url: Url) => (typeof url === 'string' ? () => url : url);

export function createBillingService({ db, bus, logger }: ServiceDeps, config: BillingServiceConfig): BillingServiceHandle {
  const clock = config.clock ?? (() => new Date());
  const settings = { ...billingSettingsFrom(config.env ?? {}), ...config.settings };
  const relay = new OutboxRelay({ db, schema: SCHEMA, bus, logger });
  const published = () => relay.nudge();
  const planStore = new PlanStore();
  const priceStore = new PriceStore();
  const customerStore = new CustomerStore();
  const subscriptionStore = new SubscriptionStore();
  const httpLookup = new HttpCustomerLookup(getter(config.customerServiceUrl), config.internalToken);
  const httpMeters = new HttpMeters(getter(config.ingestionServiceUrl), config.internalToken);
  const meters = config.meters ?? httpMeters;
  const meterCheck = new MeterCheck(meters);
  const directory = new CustomerDirectory(db, customerStore, config.customerLookup ?? httpLookup, clock);
  const plans = new PlanService(db, planStore, priceStore, meterCheck, clock);
  const prices = new PriceService(db, planStore, priceStore, meterCheck, clock);
  const subscriptions = new SubscriptionService(db, subscriptionStore, planStore, priceStore, directory, clock, published);
  const usage = new UsageService(db, subscriptionStore, priceStore, customerStore, meters, clock);
  const periods = new PeriodJob(db, subscriptionStore, logger, clock, published, settings);
  let consumer: BusSubscription | undefined;

  const ready = async () => ({ database: await pingDb(db), broker: await bus.healthy() });
  const app = createServiceApp({
    service: 'billing',
    logger,
    internalToken: config.internalToken,
    ready,
    mount: (a) => {
      mountPlanRoutes(a, plans, logger);
      mountPriceRoutes(a, prices, logger);
      mountSubscriptionRoutes(a, subscriptions, usage, logger);
    },
  });
  return {
    name: 'billing',
    schema: SCHEMA,
    migrations,
    app,
    ready,
    plans,
    prices,
    subscriptions,
    periods,
    async start() {
      await migrate(db, SCHEMA, migrations);
      consumer = await subscribeCustomerEvents({ db, bus, logger, customers: customerStore, subscriptions: subscriptionStore, clock, published });
      relay.start();
      periods.start();
    },
    async stop() {
      await periods.stop();
      await consumer?.stop();
      await relay.stop();
      await httpLookup.close();
      await httpMeters.close();
    },
  };
}
