/** One file: billing's composition root: every part of the service constructed and wired in dependency order, in one place to read. */
import { TOPICS, UsageEventPublisher, type Subscription as BusSubscription } from '@billstream/bus';
import { MAX_IMPORT_BYTES } from '@billstream/contracts';
import { InternalClient } from '@billstream/http';
import { isEmbedded, migrate, pingDb } from '@billstream/db';
import { OutboxRelay } from '@billstream/outbox';
import { createServiceApp, type Service, type ServiceDeps } from '@billstream/runtime';
import { billingSettingsFrom, type BillingSettings } from './config';
import { subscribeCustomerEvents } from './customer-events/consumer';
import type { CustomerLookup } from './clients/customers/domain';
import { CustomerDirectory } from './customers/directory';
import { HttpCustomerLookup } from './clients/customers/http-lookup';
import { CustomerAccess } from './entitlements/access';
import { AccessCache } from './entitlements/access-cache';
import { AccessNotices } from './entitlements/access-notices';
import { UsageNotices } from './entitlements/usage-notices';
import { EntitlementStore } from './entitlements/store';
import { EntitlementService } from './entitlements/service';
import { FeatureStore } from './features/store';
import { FeatureService } from './features/service';
import { mountFeatureRoutes } from './features/routes';
import { mountEntitlementRoutes } from './entitlements/routes';
import { CustomerStore } from './customers/store';
import { ApplicationStore } from './credit-grants/applications-store';
import { GrantApplier } from './credit-grants/applier';
import { CreditGrantBinder } from './credit-grants/binder';
import { mountCreditGrantRoutes } from './credit-grants/routes';
import { CreditGrantService } from './credit-grants/service';
import { CreditGrantStore } from './credit-grants/store';
import { mountCreditNoteRoutes } from './credit-notes/routes';
import { ThresholdReturnNotes } from './credit-notes/threshold-returns';
import { customerScope } from './customers/hierarchy';
import { CreditNoteIssuer } from './credit-notes/issuer';
import { ProrationDue } from './credit-notes/proration-due';
import { CreditNoteService } from './credit-notes/service';
import { CreditNoteStore } from './credit-notes/store';
import { InvoiceDiscounts } from './coupons/discounts';
import { mountCouponRoutes } from './coupons/routes';
import { ChangeInvoicer } from './plan-changes/invoice';
import { ExcessCredits } from './invoices/excess-credit';
import { Dunning } from './payments/dunning';
import { ThresholdBilling } from './invoices/thresholds';
import { mountSettingsRoutes } from './settings/routes';
import { SettingsService } from './settings/service';
import { SettingsStore } from './settings/store';
import { DocumentLinks, documentLinkKey } from './documents/links';
import { mountDocumentRoutes } from './documents/routes';
import { mountReportRoutes } from './reports/billing-daily';
import { DocumentService } from './documents/service';
import { DocumentStore } from './documents/store';
import { mountPlanChangeRoutes } from './plan-changes/routes';
import { PlanChangeService } from './plan-changes/service';
import { ChangeStore } from './plan-changes/store';
import { CouponService } from './coupons/service';
import { CouponStore } from './coupons/store';
import type { Meters } from './clients/meters/domain';
import { HttpMeters } from './clients/meters/http-meters';
import { migrations, SCHEMA } from './migrations';
import { mountPlanRoutes } from './plans/routes';
import { PlanService } from './plans/service';
import { PlanStore } from './plans/store';
import { MeterCheck } from './prices/new-price';
import { mountPriceRoutes } from './prices/routes';
import { PriceService } from './prices/service';
import { PriceStore } from './prices/store';
import { PeriodJob } from './renewals/period-job';
import { mountRenewalRoutes } from './renewals/routes';
import { mountSubscriptionRoutes } from './subscriptions/routes';
import { SubscriptionService } from './subscriptions/service';
import { SubscriptionStore } from './subscriptions/store';
import { UsageService } from './subscriptions/usage';
import { InvoiceFinalizer } from './invoices/finalizer';
import { InvoiceMaker } from './invoices/maker';
import { mountPaymentRoutes } from './payments/routes';
import { PaymentStore } from './payments/store';
import { PostpaidPayments } from './payments/postpaid';
import { PaymentService } from './payments/service';
import { PeriodBilling } from './invoices/period-billing';
import { SubscriptionInvoices } from './invoices/subscription-invoicing';
import { mountInvoiceRoutes } from './invoices/routes';
import { InvoiceStore } from './invoices/store';
import { UpcomingInvoices } from './invoices/upcoming';
import { subscribeWalletEvents } from './topups/consumer';
import { TopupInvoicer } from './topups/invoicer';
import { TopupSettlement } from './topups/settlement';
import { FinalizeInvoiceWorkflow } from './workflows/finalize-invoice';
import type { WalletCredits, Wallets } from './clients/wallets/domain';
import { HttpWallets } from './clients/wallets/http-wallets';
import { customerSource, eventSource, invoiceSource } from './tasks/exports';
import { customerImportSink, eventImportSink } from './tasks/imports';
import { mountTaskRoutes } from './tasks/routes';
import { TaskRunner } from './tasks/runner';
import { EMBEDDED_TASK_SIZES, INPUT_CHUNK_BYTES, TaskService } from './tasks/service';
import { TaskStore } from './tasks/store';
import { UnbilledCalculator } from './unbilled/calculator';
import { subscribeUsageRecorded } from './unbilled/consumer';
import { UnbilledRefresher } from './unbilled/refresher';
import { UnbilledStore } from './unbilled/store';

type Url = string | (() => string | undefined);

export interface BillingServiceConfig {
  internalToken: string;
  /** Base URL of the customer service (or a getter, when it is known only once it listens). */
  customerServiceUrl: Url;
  /** Base URL of the ingestion-aggregator, whose meter API gives usage. */
  ingestionServiceUrl: Url;
  /** Base URL of the wallet service (credits on invoices, CREDITS payments, invoiced top-ups). */
  walletServiceUrl: Url;
  /** Period job interval and renewal notice; default from `env` (BILLING_INTERVAL_MS, SUBSCRIPTION_RENEWAL_NOTICE_DAYS). */
  settings?: Partial<BillingSettings>;
  env?: NodeJS.ProcessEnv;
  clock?: () => Date;
  /** Replace the HTTP clients (tests of the service alone). */
  customerLookup?: CustomerLookup;
  meters?: Meters;
  wallets?: Wallets;
  /** Replaces the wallet's credit by key (credit grants) in tests of the service alone. */
  walletCredits?: WalletCredits;
}

export interface BillingServiceHandle extends Service {
  plans: PlanService;
  prices: PriceService;
  subscriptions: SubscriptionService;
  periods: PeriodJob;
  invoices: InvoiceFinalizer;
  payments: PaymentService;
  billing: PeriodBilling;
  maker: InvoiceMaker;
  /** Invoiced top-ups (the wallet-events consumer's work, callable directly by tests). */
  topups: TopupInvoicer;
  /** Export and import tasks, and this process's runner of them (ADR 0019). */
  tasks: TaskService;
  taskRunner: TaskRunner;
  /** Unbilled usage for the wallets' real-time balances (ADR 0024). */
  unbilled: UnbilledRefresher;
  /** Credit grants (ADR 0039). */
  creditGrants: CreditGrantService;
  /** Plan changes (ADR 0043). */
  planChanges: PlanChangeService;
  /** Progressive billing (ADR 0046). */
  thresholds: ThresholdBilling;
  /** Coupons and discounts (ADR 0040). */
  coupons: CouponService;
  /** Credit notes (ADR 0041). */
  creditNotes: CreditNoteService;
}

const getter = (url: Url) => (typeof url === 'string' ? () => url : url);

export function createBillingService({ db, bus, logger }: ServiceDeps, config: BillingServiceConfig): BillingServiceHandle {
  const clock = config.clock ?? (() => new Date());
  const settings = { ...billingSettingsFrom(config.env ?? {}), ...config.settings };
  const relay = new OutboxRelay({ db, schema: SCHEMA, bus, logger });
  const published = () => relay.nudge();
  const planStore = new PlanStore();
  const priceStore = new PriceStore();
  // Features and entitlements (issue #14, ADR 0022): the check's cache forgets a customer's grants once a write of its subscriptions ends,
  // and the customer itself once its record in the projection is written (ADR 0026).
  const accessCache = new AccessCache();
  const customerStore = new CustomerStore((conn, scope, id) => accessCache.customerChangedAfter(conn, scope, id));
  // Replicas tell each other of access changes (ADR 0025): grants are kept 15 s instead of 1 s while they do.
  const accessNotices = new AccessNotices(db, accessCache, logger);
  // Every replica hears every usage-recorded notice (ADR 0026): usage is kept 30 s instead of 1 s while it does.
  const usageNotices = new UsageNotices(bus, accessCache, logger);
  const subscriptionStore = new SubscriptionStore((trx, s) => accessCache.customerChangedAfter(trx, s, s.customerId));
  const httpLookup = new HttpCustomerLookup(getter(config.customerServiceUrl), config.internalToken);
  const httpMeters = new HttpMeters(getter(config.ingestionServiceUrl), config.internalToken);
  const meters = config.meters ?? httpMeters;
  const meterCheck = new MeterCheck(meters);
  const directory = new CustomerDirectory(db, customerStore, config.customerLookup ?? httpLookup, clock);
  const plans = new PlanService(db, planStore, priceStore, meterCheck, clock);
  const prices = new PriceService(db, planStore, priceStore, meterCheck, clock);
  const httpWallets = new HttpWallets(getter(config.walletServiceUrl), config.internalToken);
  const wallets = config.wallets ?? httpWallets;
  const invoiceStore = new InvoiceStore();
  const paymentStore = new PaymentStore();
  const settlement = new TopupSettlement({ db, invoices: invoiceStore, wallets, logger });
  // Coupons (ADR 0040): the maker prices new invoices with the subscriptions' discounts.
  const couponStore = new CouponStore();
  const invoiceDiscounts = new InvoiceDiscounts(couponStore);
  const maker = new InvoiceMaker({
    db,
    subscriptions: subscriptionStore,
    prices: priceStore,
    customers: customerStore,
    invoices: invoiceStore,
    meters,
    finalizeDelayMs: settings.finalizeDelayMs,
    discounts: invoiceDiscounts,
  });
  // Credit grants (ADR 0039): subscriptions bind them through the SubscriptionGrants port; the wallet credits them by key.
  const grantStore = new CreditGrantStore();
  const applicationStore = new ApplicationStore();
  const grantApplier = new GrantApplier(db, applicationStore, config.walletCredits ?? httpWallets, logger, clock);
  const grantBinder = new CreditGrantBinder(db, grantStore, applicationStore, subscriptionStore, grantApplier, logger, clock);
  const billing = new PeriodBilling({ db, subscriptions: subscriptionStore, invoices: invoiceStore, maker, clock, published, prices: priceStore, grants: grantBinder });
  const coupons = new CouponService(db, couponStore, priceStore, subscriptionStore, invoiceDiscounts, clock, published);
  const creditGrants = new CreditGrantService(db, grantStore, applicationStore, planStore, subscriptionStore, grantBinder, clock);
  const subscriptions = new SubscriptionService(db, subscriptionStore, planStore, priceStore, directory, clock, published, new SubscriptionInvoices(db, maker, billing), grantBinder, coupons);
  const creditNoteStore = new CreditNoteStore();
  const creditNoteIssuer = new CreditNoteIssuer({ notes: creditNoteStore, invoices: invoiceStore, payments: paymentStore, clock, numberPrefix: settings.creditNoteNumberPrefix });
  // Plan changes (ADR 0043): one SUBSCRIPTION_UPDATE invoice per change, under the subscription's lock with the swap.
  const planChanges = new PlanChangeService({
    db,
    subscriptions: subscriptionStore,
    plans: planStore,
    prices: priceStore,
    changes: new ChangeStore(),
    invoices: invoiceStore,
    invoicer: new ChangeInvoicer(maker, invoiceStore, new ProrationDue(creditNoteIssuer, paymentStore)),
    catchUp: (id, requestId) => billing.catchUp(id, requestId),
    grants: grantBinder,
    finalizeDrafts: async (subscriptionId, requestId) => {
      for (const draft of await invoiceStore.draftsOf(db, subscriptionId)) await finalizer.finalize(draft, requestId, 'system');
    },
    clock,
    published,
  });
  const usage = new UsageService(db, subscriptionStore, priceStore, customerStore, meters, clock, directory);
  const excessCredits = new ExcessCredits({ db, wallets: config.walletCredits ?? httpWallets, logger, clock });
  // Invoice documents (ADR 0045): the finalizer sets the signed links and snapshots what the PDF shows.
  // Their key: DOCUMENT_LINK_SECRET, or derived from the internal token (ADR 0059), never kept in the database.
  const documentLinks = new DocumentLinks(settings.publicBaseUrl, documentLinkKey(settings.documentLinkSecret, config.internalToken), settings.documentLinkTtlDays);
  const documents = new DocumentService({
    db,
    documents: new DocumentStore(),
    invoices: invoiceStore,
    payments: paymentStore,
    creditNotes: creditNoteStore,
    customers: customerStore,
    settings: new SettingsStore(),
    links: documentLinks,
    clock,
    published,
  });
  const finalizer = new InvoiceFinalizer({
    db,
    invoices: invoiceStore,
    wallets,
    logger,
    clock,
    published,
    invoiceNumberPrefix: settings.invoiceNumberPrefix,
    // Finalizing an invoice, step by step (ADR 0062). Drafts wait BILLING_FINALIZE_DELAY for late events: their usage is read again at finalization.
    steps: new FinalizeInvoiceWorkflow({
      repricing: settings.finalizeDelayMs > 0 ? billing : null,
      postpaid: new PostpaidPayments(paymentStore),
      documents,
      settlement,
      excess: excessCredits,
      get thresholdReturns() {
        return thresholdReturns;
      },
    }),
    voidNote: creditNoteIssuer,
  });
  const payments = new PaymentService({ db, invoices: invoiceStore, payments: paymentStore, wallets, logger, clock, published, paid: settlement });
  // Billing settings and dunning (ADR 0044): overdue invoices retried as PENDING PROVIDER payments, once per attempt by key.
  const settingsStore = new SettingsStore();
  const billingSettings = new SettingsService(db, settingsStore, clock);
  const dunning = new Dunning({ db, settings: settingsStore, payments: paymentStore, service: payments, logger, clock });
  // Credit notes (ADR 0041): written under the invoice's lock; what goes back to a wallet is credited by key `credit_note:{id}`.
  const creditNotes = new CreditNoteService({ db, notes: creditNoteStore, invoices: invoiceStore, issuer: creditNoteIssuer, wallets: config.walletCredits ?? httpWallets, logger, clock, published });
  // A fallen SUM (ADR 0046): what threshold invoices billed beyond the closing invoice's usage returns by credit notes.
  const thresholdReturns = new ThresholdReturnNotes({
    db,
    invoices: invoiceStore,
    issuer: creditNoteIssuer,
    creditWallet: (note, requestId) => creditNotes.creditWallet(note, requestId),
    logger,
    clock,
    published,
  });
  const topups = new TopupInvoicer({ db, invoices: invoiceStore, wallets, finalizer, logger, clock, published });
  // Progressive billing (ADR 0046): threshold invoices from the period job and the usage notices, once per crossing.
  const thresholds = new ThresholdBilling({ db, subscriptions: subscriptionStore, invoices: invoiceStore, maker, meters, clock, published, logger });
  const upcoming = new UpcomingInvoices({ db, subscriptions: subscriptionStore, maker, wallets, clock });
  const periods = new PeriodJob(
    db,
    subscriptionStore,
    {
      billing,
      finalizer,
      invoices: invoiceStore,
      completePendingPayments: (scope) => payments.completePending('period-job', scope),
      creditNoteRefunds: (requestId, scope) => creditNotes.retryPending(requestId, scope),
      excessCredits: async (requestId, scope) => (await excessCredits.retryOwed(requestId, scope)) + (await thresholdReturns.retryOwed(requestId, scope)),
      dunning: (requestId, scope) => dunning.runOnce(requestId, scope),
      thresholds: (requestId, scope) => thresholds.runOnce(requestId, scope),
      settleTopup: (id, requestId) => settlement.settle(id, requestId),
      creditGrants: async (requestId, leaseMs, scope) => (await grantBinder.runOnce(requestId, leaseMs, scope)).applied,
      creditGrantsOf: async (subscriptionIds, requestId, leaseMs) => (await grantBinder.runFor(subscriptionIds, requestId, leaseMs)).applied,
    },
    logger,
    clock,
    published,
    settings,
  );
  // Tasks (ADR 0019): files in billing's schema; exports read the owners' data, imports write through them.
  // On the embedded database every statement holds the one session: smaller steps (ADR 0036).
  const embedded = isEmbedded(db);
  const batchRows = embedded ? Math.min(settings.tasksBatchRows, EMBEDDED_TASK_SIZES.batchRows) : settings.tasksBatchRows;
  const taskStore = new TaskStore();
  const tasksIngestion = new InternalClient({ service: 'ingestion-aggregator', baseUrl: getter(config.ingestionServiceUrl), internalToken: config.internalToken, actor: 'billing-tasks', timeoutMs: 60_000 });
  const tasksCustomers = new InternalClient({ service: 'customer', baseUrl: getter(config.customerServiceUrl), internalToken: config.internalToken, actor: 'billing-tasks', timeoutMs: 30_000 });
  const taskPublisher = new UsageEventPublisher(bus, logger, { queueTimeoutMs: 30_000 });
  const taskRunner = new TaskRunner({
    db,
    store: taskStore,
    exports: { EVENTS: eventSource(tasksIngestion, batchRows), CUSTOMERS: customerSource(tasksCustomers), INVOICES: invoiceSource(db, invoiceStore, Math.min(2000, batchRows)) },
    imports: { EVENTS: eventImportSink(taskPublisher, batchRows), CUSTOMERS: customerImportSink(tasksCustomers, Math.min(500, batchRows), 8) },
    logger,
    clock,
    settings: { pollMs: settings.tasksPollMs, leaseMs: settings.tasksLeaseMs, maxAttempts: 5 },
  });
  const featureStore = new FeatureStore();
  const entitlementStore = new EntitlementStore();
  const features = new FeatureService(db, featureStore, meterCheck, clock, published, accessCache);
  const entitlements = new EntitlementService(db, planStore, featureStore, entitlementStore, clock, published, accessCache);
  const access = new CustomerAccess(db, directory, subscriptionStore, featureStore, entitlementStore, meters, clock, accessCache);
  const tasks = new TaskService(db, taskStore, clock, () => taskRunner.poke(), MAX_IMPORT_BYTES, embedded ? EMBEDDED_TASK_SIZES.inputPieceBytes : INPUT_CHUNK_BYTES);
  // Real-time balance (ADR 0024): usage-recorded notifications and a sweep recompute customers' unbilled usage for the wallets.
  const unbilledStore = new UnbilledStore();
  const unbilled = new UnbilledRefresher(
    db,
    unbilledStore,
    new UnbilledCalculator(db, subscriptionStore, customerStore, maker, unbilledStore, meters, clock),
    (scope, body, requestId) => wallets.reportUnbilled(scope, body, requestId),
    logger,
    clock,
    { debounceMs: settings.unbilledDebounceMs, sweepMs: settings.unbilledSweepMs },
    (scope, customerIds, requestId) => thresholds.checkCustomers(scope, customerIds, requestId),
  );
  let consumer: BusSubscription | undefined;
  let walletConsumer: BusSubscription | undefined;
  let usageConsumer: BusSubscription | undefined;

  const ready = async () => ({ database: await pingDb(db), broker: await bus.healthy() });
  const app = createServiceApp({
    service: 'billing',
    logger,
    internalToken: config.internalToken,
    ready,
    // The entitlement check is on client systems' hot path (issue #14, ADR 0027).
    lean: ['checkEntitlement'],
    mount: (a) => {
      mountPlanRoutes(a, plans, logger);
      mountPriceRoutes(a, prices, logger);
      mountSubscriptionRoutes(a, subscriptions, usage, logger);
      mountInvoiceRoutes(a, { db, invoices: invoiceStore, finalizer, upcoming, customers: customerStore }, logger);
      mountRenewalRoutes(a, periods, logger);
      mountPaymentRoutes(a, payments, logger);
      mountTaskRoutes(a, tasks, logger);
      mountFeatureRoutes(a, features, logger);
      mountEntitlementRoutes(a, entitlements, access, logger);
      mountCreditGrantRoutes(a, creditGrants, logger);
      mountCreditNoteRoutes(a, creditNotes, logger, (scope, id, children) => customerScope(db, customerStore, scope, id, children));
      mountCouponRoutes(a, coupons, logger);
      mountPlanChangeRoutes(a, planChanges, logger);
      mountSettingsRoutes(a, billingSettings, logger);
      mountDocumentRoutes(a, documents, logger);
      mountReportRoutes(a, db, logger);
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
    invoices: finalizer,
    payments,
    billing,
    maker,
    topups,
    tasks,
    taskRunner,
    unbilled,
    creditGrants,
    planChanges,
    thresholds,
    coupons,
    creditNotes,
    async start() {
      await migrate(db, SCHEMA, migrations);
      accessNotices.start();
      // The first check that reads usage starts the notices' consumer (ADR 0026).
      accessCache.onFirstUsage(() => usageNotices.ensureStarted());
      consumer = await subscribeCustomerEvents({ db, bus, logger, customers: customerStore, subscriptions: subscriptionStore, clock, maker, published });
      walletConsumer = await subscribeWalletEvents({ bus, logger, topups });
      relay.start();
      periods.start();
      await bus.ensureTopics([TOPICS.usageEvents]);
      usageConsumer = await subscribeUsageRecorded(bus, unbilled, logger);
      unbilled.start();
      taskRunner.start();
    },
    async stop() {
      await taskRunner.stop();
      await usageConsumer?.stop();
      await unbilled.stop();
      await periods.stop();
      await consumer?.stop();
      await walletConsumer?.stop();
      await relay.stop();
      await accessNotices.stop();
      await usageNotices.stop();
      accessCache.close();
      await httpLookup.close();
      await httpMeters.close();
      await httpWallets.close();
      await tasksIngestion.close();
      await tasksCustomers.close();
    },
  };
}
