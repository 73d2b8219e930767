import type { Subscription } from '@billstream/bus';
import { walletInternalApi } from '@billstream/contracts';
import { pingDb, migrate } from '@billstream/db';
import { MiB } from '@billstream/http';
import { OutboxRelay } from '@billstream/outbox';
import { createServiceApp, type Service, type ServiceDeps } from '@billstream/runtime';
import { walletSettingsFrom } from './config';
import { subscribeCustomerEvents } from './customers/consumer';
import { CustomerDirectory, type CustomerLookup } from './customers/directory';
import { HttpCustomerLookup } from './customers/http-lookup';
import { CustomerStore } from './customers/store';
import { CustomerCreditBatch } from './credits/batch';
import { mountCustomerCreditRoutes } from './credits/routes';
import { CustomerCreditService } from './credits/service';
import { CustomerCreditStore } from './credits/store';
import { mountExpiryRoutes } from './expiry/routes';
import { mountInvoiceRoutes } from './invoices/routes';
import { InvoiceCreditService } from './invoices/service';
import { InvoiceStore } from './invoices/store';
import { ExpiryJob } from './expiry/job';
import { Ledger, type Clock } from './ledger/ledger';
import { migrations, SCHEMA } from './migrations';
import { DebitBatcher } from './entries/debit-batcher';
import { mountEntryRoutes } from './entries/routes';
import { EntryService } from './entries/service';
import { EntryStore } from './entries/store';
import { mountWalletRoutes } from './wallets/routes';
import { WalletService } from './wallets/service';
import { WalletStore } from './wallets/store';
import { mountUnbilledRoutes } from './unbilled/routes';
import { UnbilledStore } from './unbilled/store';
import { RESERVATION_EXPIRY_INTERVAL_MS, ReservationExpiryJob } from './reservations/job';
import { mountReservationRoutes } from './reservations/routes';
import { ReservationService } from './reservations/service';
import { ReservationStore } from './reservations/store';
import { mountHeldQuantityRoute } from './reservations/internal-routes';
import { QuotaReservations } from './reservations/quota';
import { RESERVATION_SETTLE_INTERVAL_MS, UsageSettlement } from './reservations/settle';
import { HttpQuotaUpstreams } from './reservations/upstreams';

export interface WalletServiceConfig {
  internalToken: string;
  /** Base URL of the customer service (or a getter, when it is known only once it listens). */
  customerServiceUrl: string | (() => string | undefined);
  /** How often the credit expiry job runs; 0 turns the schedule off. Default: WALLET_EXPIRY_INTERVAL_MS of `env`, else 60 s. */
  expiryIntervalMs?: number;
  /** Debit group commits at once; default WALLET_DEBIT_CONCURRENCY of `env`, else 2. */
  debitConcurrency?: number;
  /** Wait of the oldest debit before a transaction beyond the first starts; default WALLET_DEBIT_OVERLAP_MS of `env`, else 5. */
  debitOverlapMs?: number;
  /** How often holds past expires_at are written expired; 0 turns it off. Default 250 ms (a hold is expired within 1 s). */
  reservationExpiryIntervalMs?: number;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  /** Replaces the HTTP lookup of customers (tests of the ledger without a customer service). */
  customerLookup?: CustomerLookup;
  /** The entitlements service (the check's quota) and the ingestion-aggregator (meters, stored events): holds of entitlements and commits by event (ADR 0070). */
  entitlementsServiceUrl?: string | (() => string | undefined);
  ingestionServiceUrl?: string | (() => string | undefined);
  /** How often committed holds whose event is not counted yet are looked at; 0 turns it off. Default 100 ms. */
  reservationSettleIntervalMs?: number;
}

/** The composed service, with its parts reachable for tests and tools. */
export interface WalletServiceHandle extends Service {
  wallets: WalletService;
  entries: EntryService;
  expiry: ExpiryJob;
  invoices: InvoiceCreditService;
  /** Credits by idempotency key for other services (credit grants; ADR 0039). */
  credits: CustomerCreditService;
  /** Holds of PRE_PAID wallets (docs/api/reservations.md) and the job that expires them. */
  reservations: ReservationService;
  reservationExpiry: ReservationExpiryJob;
  /** Ends the count of holds committed by a usage event once it is counted (ADR 0070). */
  reservationSettlement: UsageSettlement;
}

export function createWalletService({ db, bus, logger }: ServiceDeps, config: WalletServiceConfig): WalletServiceHandle {
  const clock = config.clock ?? (() => new Date());
  const relay = new OutboxRelay({ db, schema: SCHEMA, bus, logger });
  const published = () => relay.nudge();
  const walletStore = new WalletStore();
  const entryStore = new EntryStore();
  const customerStore = new CustomerStore();
  const ledger = new Ledger({ db, clock, published, wallets: walletStore, entries: entryStore });
  const getUrl = typeof config.customerServiceUrl === 'string' ? () => config.customerServiceUrl as string : config.customerServiceUrl;
  const httpLookup = new HttpCustomerLookup(getUrl, config.internalToken);
  const directory = new CustomerDirectory(db, customerStore, config.customerLookup ?? httpLookup, clock);
  const wallets = new WalletService(db, walletStore, entryStore, directory, ledger);
  const settings = walletSettingsFrom(config.env ?? {});
  const batcher = new DebitBatcher(ledger, entryStore, {
    maxConcurrent: config.debitConcurrency ?? settings.debitConcurrency,
    overlapAfterMs: config.debitOverlapMs ?? settings.debitOverlapMs,
  });
  const entries = new EntryService(db, walletStore, entryStore, ledger, batcher);
  const unbilledStore = new UnbilledStore();
  const invoices = new InvoiceCreditService({ ledger, wallets: walletStore, entries: entryStore, invoices: new InvoiceStore(), unbilled: unbilledStore });
  const creditStore = new CustomerCreditStore();
  const credits = new CustomerCreditService(ledger, walletStore, entryStore, creditStore, directory);
  // The period job's grant credits, up to 100 a call in one transaction (ADR 0048).
  const creditBatch = new CustomerCreditBatch(ledger, walletStore, entryStore, creditStore, directory);
  const intervalMs = config.expiryIntervalMs ?? settings.expiryIntervalMs;
  const expiry = new ExpiryJob(ledger, logger, intervalMs);
  const reservationStore = new ReservationStore();
  const reservations = new ReservationService(db, ledger, reservationStore, directory);
  const reservationExpiry = new ReservationExpiryJob(ledger, reservationStore, logger, config.reservationExpiryIntervalMs ?? RESERVATION_EXPIRY_INTERVAL_MS);
  const held = (walletIds: string[]) => reservationStore.heldByWallet(db, walletIds, clock());
  const urlOf = (u: string | (() => string | undefined) | undefined) => (typeof u === 'function' ? u : () => u);
  const quotaUpstreams = new HttpQuotaUpstreams(urlOf(config.entitlementsServiceUrl), urlOf(config.ingestionServiceUrl), config.internalToken);
  const quotas = new QuotaReservations(db, reservationStore, quotaUpstreams, (ctx, external) => directory.resolveExternal(ctx, external, ctx.requestId), clock, published);
  const settlement = new UsageSettlement({ db, upstreams: quotaUpstreams, logger, clock, intervalMs: config.reservationSettleIntervalMs ?? RESERVATION_SETTLE_INTERVAL_MS });
  let subscription: Subscription | undefined;

  const ready = async () => ({ database: await pingDb(db), broker: await bus.healthy() });
  const app = createServiceApp({
    service: 'wallet',
    logger,
    internalToken: config.internalToken,
    ready,
    // A batch allocation carries up to 500 invoices (docs/api/wallets.md): more than the default 1 MiB.
    bodyLimits: [{ pathPrefix: walletInternalApi.allocateInvoicesCredits.path, bytes: 5 * MiB }],
    // The ledger's hot path without express (ADR 0027): handlers that use only their validated input.
    lean: ['getWallet', 'getWalletBalance', 'topupWallet', 'debitWallet'],
    mount: (app) => {
      mountWalletRoutes(app, wallets, held, logger);
      mountReservationRoutes(app, reservations, quotas, clock, logger);
      mountHeldQuantityRoute(app, db, reservationStore, clock, logger);
      mountEntryRoutes(app, entries, logger);
      mountExpiryRoutes(app, expiry, logger);
      mountInvoiceRoutes(app, invoices, logger);
      mountUnbilledRoutes(app, ledger, unbilledStore, logger);
      mountCustomerCreditRoutes(app, credits, creditBatch, logger);
    },
  });
  return {
    name: 'wallet',
    schema: SCHEMA,
    migrations,
    app,
    ready,
    wallets,
    entries,
    expiry,
    invoices,
    credits,
    reservations,
    reservationExpiry,
    reservationSettlement: settlement,
    async start() {
      await migrate(db, SCHEMA, migrations);
      subscription = await subscribeCustomerEvents({
        db,
        bus,
        logger,
        customers: customerStore,
        wallets: walletStore,
        ledger,
        published,
      });
      relay.start();
      expiry.start();
      reservationExpiry.start();
      // Without the aggregator there is no event to wait for (and no commit by event to settle).
      if (config.ingestionServiceUrl) settlement.start();
    },
    async stop() {
      await expiry.stop();
      await reservationExpiry.stop();
      await settlement.stop();
      await quotaUpstreams.close();
      await subscription?.stop();
      await relay.stop();
      await httpLookup.close();
    },
  };
}
