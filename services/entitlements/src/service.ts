import { TOPICS, type Subscription } from '@billstream/bus';
import { migrate, pingDb } from '@billstream/db';
import { createServiceApp, type Service, type ServiceDeps } from '@billstream/runtime';
import { CustomerAccess } from './check/access';
import { AccessCache } from './check/access-cache';
import { AccessNotices } from './check/access-notices';
import { CachedHeldQuantity, HeldNotices } from './check/held-cache';
import { mountQuotaRoutes } from './check/quota-routes';
import { mountCheckRoutes } from './check/routes';
import { UsageNotices } from './check/usage-notices';
import type { EntitlementsSettings } from './config';
import { migrations, SCHEMA } from './migrations';
import { subscribeBillingEvents, subscribeCustomerEvents, type ProjectionChanges } from './projection/consumers';
import { CustomerDirectory } from './projection/directory';
import { SnapshotSeeder } from './projection/seed';
import { ProjectionStore } from './projection/store';
import { HttpCustomerLookup } from './upstreams/customers';
import { HttpHeldQuantity } from './upstreams/holds';
import { HttpMeters, type Meters } from './upstreams/meters';

type Url = string | (() => string | undefined);
const getter = (url: Url) => (typeof url === 'string' ? () => url : url);

export interface EntitlementsServiceConfig {
  internalToken: string;
  customerServiceUrl: Url;
  ingestionServiceUrl: Url;
  /** Billing, for the seed of the projection (ADR 0061); absent: no seed. */
  billingServiceUrl?: Url;
  settings?: Partial<EntitlementsSettings>;
  clock?: () => Date;
  /** Tests: meters instead of the aggregator's. */
  meters?: Meters;
  /** The wallet service, whose reservations of hard limits the check counts (`held`, ADR 0070); absent: the check counts none. */
  walletServiceUrl?: Url;
}

const SEED_RETRY_MS = 5000;

export interface EntitlementsServiceHandle extends Service {
  /** Seeds the projection from billing now (the `seed` command's work), whether or not it was seeded. */
  seed(): Promise<{ rows: number; written: number }>;
}

/**
 * The entitlements service (ADR 0061): the entitlement check and a customer's entitlements,
 * answered from its own projection of billing's features, entitlements and subscriptions
 * (billing-events) and of customers (customer-events), with usage from the aggregator kept
 * per replica (ADR 0022, 0025, 0026, 0028).
 */
export function createEntitlementsService({ db, bus, logger }: ServiceDeps, config: EntitlementsServiceConfig): EntitlementsServiceHandle {
  const clock = config.clock ?? (() => new Date());
  const settings: EntitlementsSettings = { seedOnStart: true, projection: true, ...config.settings };
  const store = new ProjectionStore();
  const cache = new AccessCache();
  // Replicas tell each other of the changes their consumers committed (ADR 0025): grants are kept 15 s instead of 1 s while they do.
  const notices = new AccessNotices(db, cache, logger);
  // Every replica hears every usage-recorded notice (ADR 0026): usage is kept 30 s instead of 1 s while it does.
  const usageNotices = new UsageNotices({ bus, cache, logger });
  const lookup = new HttpCustomerLookup(getter(config.customerServiceUrl), config.internalToken);
  const httpMeters = new HttpMeters(getter(config.ingestionServiceUrl), config.internalToken);
  const directory = new CustomerDirectory({ db, store, lookup, clock });
  const holds = config.walletServiceUrl ? new HttpHeldQuantity(getter(config.walletServiceUrl), config.internalToken) : undefined;
  // Held quantities are kept 1 s while this replica hears the wallet's reservation events, dropped by each (ADR 0070).
  const heldCache = holds && new CachedHeldQuantity(holds);
  const heldNotices = heldCache && new HeldNotices(bus, heldCache, logger);
  const access = new CustomerAccess({ db, customers: directory, projection: store, meters: config.meters ?? httpMeters, clock, cache, holds: heldCache });
  const seeder = config.billingServiceUrl ? new SnapshotSeeder({ db, store, billingUrl: getter(config.billingServiceUrl), internalToken: config.internalToken, clock }) : undefined;
  const changed = (c: ProjectionChanges) => {
    for (const scope of c.scopes) cache.scopeChanged(scope);
    for (const { scope, customerId } of c.customers) cache.customerChangedCommitted(scope, customerId);
  };
  let consumers: Subscription[] = [];
  let heldStarting: Promise<void> | undefined;
  let seeded = !seeder || !settings.seedOnStart;
  let seedTimer: NodeJS.Timeout | undefined;
  let stopped = false;

  const seedOnce = async () => {
    if (!seeder || stopped) return;
    try {
      if (!(await seeder.seeded())) {
        const { rows } = await seeder.seed(changed);
        logger.info('projection seeded from billing', { rows });
      }
      seeded = true;
    } catch (err) {
      logger.warn('projection not seeded from billing yet; trying again', { err, retry_ms: SEED_RETRY_MS });
      seedTimer = setTimeout(() => void seedOnce(), SEED_RETRY_MS);
      seedTimer.unref();
    }
  };

  // A check-only replica is ready once a projecting replica (or the seed command) seeded the shared projection.
  const projectionReady = async () => {
    if (!seeded && !settings.projection && seeder) seeded = await seeder.seeded();
    return seeded;
  };
  const ready = async () => ({ database: await pingDb(db), broker: await bus.healthy(), projection: await projectionReady() });
  const app = createServiceApp({
    service: 'entitlements',
    logger,
    internalToken: config.internalToken,
    ready,
    mount: (a) => {
      mountCheckRoutes(a, access, logger);
      mountQuotaRoutes(a, db, store, access, logger);
    },
    // The entitlement check is on client systems' hot path (issue #14, ADR 0027).
    lean: ['checkEntitlement'],
  });
  return {
    name: 'entitlements',
    schema: SCHEMA,
    migrations,
    app,
    ready,
    async seed() {
      if (!seeder) throw new Error('BILLING_SERVICE_URL is not set: there is no billing to seed from');
      const done = await seeder.seed(changed);
      seeded = true;
      return done;
    },
    async start() {
      await migrate(db, SCHEMA, migrations);
      notices.start();
      // Not heard yet: the check asks the wallet at each check until the consumer consumes.
      heldStarting = heldNotices?.start().catch((err: unknown) => void logger.warn("the wallet's reservation events not heard; the check asks the wallet at each check", { err }));
      // The first check that reads usage starts the notices' consumer (ADR 0026).
      cache.onFirstUsage(() => usageNotices.ensureStarted());
      if (!settings.projection) {
        logger.info('check-only replica: the projection is applied by the replicas with ENTITLEMENTS_PROJECTION=true');
        return;
      }
      await bus.ensureTopics([TOPICS.billingEvents, TOPICS.customerEvents]);
      consumers = [await subscribeCustomerEvents(db, bus, store, { changed }, clock, logger), await subscribeBillingEvents(db, bus, store, { changed }, logger)];
      if (!seeded) await seedOnce();
    },
    async stop() {
      stopped = true;
      if (seedTimer) clearTimeout(seedTimer);
      for (const c of consumers) await c.stop();
      await notices.stop();
      await usageNotices.stop();
      await heldStarting;
      await heldNotices?.stop();
      cache.close();
      await lookup.close();
      await httpMeters.close();
      await holds?.close();
      await seeder?.close();
    },
  };
}
