/** One file: billing's composition root: every part of the service constructed and wired in dependency order, in one place to read. */
import { TOPICS, type Subscription as BusSubscription } from '@billstream/bus';
import { migrate, pingDb } from '@billstream/db';
import { OutboxRelay } from '@billstream/outbox';
import { createServiceApp, type ServiceDeps } from '@billstream/runtime';
import { billingSettingsFrom } from './config';
import { subscribeCustomerEvents } from './customer-events/consumer';
import { CustomerDirectory } from './customers/directory';
import { HttpCustomerLookup } from './clients/customers/http-lookup';
import { EntitlementStore } from './entitlements/store';
import { EntitlementService } from './entitlements/service';
import { FeatureStore } from './features/store';
import { FeatureService } from './features/service';
import { mountFeatureRoutes } from './features/routes';
import { mountEntitlementRoutes } from './entitlements/routes';
import { mountSnapshotRoute } from './entitlements/snapshot';
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
import { HttpMeters } from './clients/meters/http-meters';
import { migrations, SCHEMA } from './migrations';
import { mountPlanRoutes } from './plans/routes';
import { PlanService } from './plans/service';
import { PlanStore } from './plans/store';
import { MeterCheck } from './prices/new-price';
import { mountPriceRoutes } from './prices/routes';
import { PriceService } from './prices/service';
import { PriceStore } from './prices/store';
import { composePeriodJob } from './composition/periods';
import { composeTasks } from './composition/tasks';
import { composeCommunications } from './composition/communications';
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
import { HttpWallets } from './clients/wallets/http-wallets';
import { mountTaskRoutes } from './tasks/routes';
import { subscribeUsageRecorded } from './unbilled/consumer';
import { composeUnbilled } from './composition/unbilled';
import type { BillingServiceConfig, BillingServiceHandle, Url } from './composition/handle';

export type { BillingServiceConfig, BillingServiceHandle } from './composition/handle';

const getter = (url: Url) => (typeof url === 'string' ? () => url : url);

export function createBillingService({ db, bus, logger }: ServiceDeps, config: BillingServiceConfig): BillingServiceHandle {
  const clock = config.clock ?? (() => new Date());
  const settings = { ...billingSettingsFrom(config.env ?? {}), ...config.settings };
  const relay = new OutboxRelay({ db, schema: SCHEMA, bus, logger });
  const published = () => relay.nudge();
  const planStore = new PlanStore();
  const priceStore = new PriceStore();
  // The entitlement check is the entitlements service's (ADR 0061): billing keeps no check cache.
  const customerStore = new CustomerStore();
  const subscriptionStore = new SubscriptionStore();
  const httpLookup = new HttpCustomerLookup(getter(config.customerServiceUrl), config.internalToken);
  const httpMeters = new HttpMeters(getter(config.ingestionServiceUrl), config.internalToken);
  const meters = config.meters ?? httpMeters;
  const meterCheck = new MeterCheck(meters);
  const directory = new CustomerDirectory({ db, store: customerStore, lookup: config.customerLookup ?? httpLookup, clock });
  const plans = new PlanService({ db, plans: planStore, prices: priceStore, meters: meterCheck, clock });
  const prices = new PriceService({ db, plans: planStore, prices: priceStore, meters: meterCheck, clock });
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
  const grantApplier = new GrantApplier({ db, applications: applicationStore, wallets: config.walletCredits ?? httpWallets, logger, clock });
  const grantBinder = new CreditGrantBinder({ db, grants: grantStore, applications: applicationStore, subscriptions: subscriptionStore, applier: grantApplier, logger, clock });
  const billing = new PeriodBilling({ db, subscriptions: subscriptionStore, invoices: invoiceStore, maker, clock, published, prices: priceStore, grants: grantBinder });
  const coupons = new CouponService({ db, coupons: couponStore, prices: priceStore, subscriptions: subscriptionStore, invoiceDiscounts, clock, published });
  const creditGrants = new CreditGrantService({ db, grants: grantStore, applications: applicationStore, plans: planStore, subscriptions: subscriptionStore, binder: grantBinder, clock });
  const subscriptions = new SubscriptionService({
    db,
    subscriptions: subscriptionStore,
    plans: planStore,
    prices: priceStore,
    customers: directory,
    clock,
    published,
    invoicing: new SubscriptionInvoices(db, maker, billing),
    grants: grantBinder,
    discounts: coupons,
  });
  const creditNoteStore = new CreditNoteStore();
  const creditNoteIssuer = new CreditNoteIssuer({ notes: creditNoteStore, invoices: invoiceStore, payments: paymentStore, clock, numberPrefix: settings.creditNoteNumberPrefix });
  const usage = new UsageService({ db, subscriptions: subscriptionStore, prices: priceStore, customers: customerStore, meters, clock, directory });
  const excessCredits = new ExcessCredits({ db, wallets: config.walletCredits ?? httpWallets, logger, clock });
  // Invoice documents (ADR 0045): the finalizer sets the signed links and snapshots what the PDF shows.
  // Their key: DOCUMENT_LINK_SECRET, or derived from the internal token (ADR 0059), never kept in the database.
  const documentLinks = new DocumentLinks(settings.publicBaseUrl, documentLinkKey(settings.documentLinkSecret, config.internalToken), settings.documentLinkTtlDays);
  const communications = composeCommunications({ db, logger, clock, settings }, { invoices: invoiceStore, customers: customerStore, pdf: (scope, id) => documents.pdf(scope, id) });
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
    emails: communications.recorder,
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
  // Plan changes (ADR 0043): one SUBSCRIPTION_UPDATE invoice per change, under the subscription's lock with the swap.
  const planChanges = new PlanChangeService({
    db,
    subscriptions: subscriptionStore,
    plans: planStore,
    prices: priceStore,
    changes: new ChangeStore(),
    invoices: invoiceStore,
    invoicer: new ChangeInvoicer(maker, invoiceStore, new ProrationDue(creditNoteIssuer, paymentStore)),
    billing,
    finalizer,
    grants: grantBinder,
    clock,
    published,
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
  const periods = composePeriodJob(
    { db, logger, clock, published, settings },
    { subscriptions: subscriptionStore, invoices: invoiceStore, billing, finalizer, grants: grantBinder, topups: settlement, payments, creditNotes, excessCredits, thresholdReturns, dunning, thresholds },
  );
  const { tasks, taskRunner, close: closeTaskClients } = composeTasks(
    { db, bus, logger, clock, settings },
    { internalToken: config.internalToken, ingestionUrl: getter(config.ingestionServiceUrl), customerUrl: getter(config.customerServiceUrl), invoices: invoiceStore },
  );
  const featureStore = new FeatureStore();
  const entitlementStore = new EntitlementStore();
  const features = new FeatureService(db, featureStore, meterCheck, clock, published);
  const entitlements = new EntitlementService(db, planStore, featureStore, entitlementStore, clock, published);
  // Real-time balance (ADR 0024): usage-recorded notifications and a sweep recompute customers' unbilled usage for the wallets.
  const unbilled = composeUnbilled({ db, logger, clock, settings }, { subscriptions: subscriptionStore, customers: customerStore, maker, meters, wallets, thresholds });
  const customerEventsDeps = (on: ServiceDeps['bus']) => ({ db, bus: on, logger, customers: customerStore, subscriptions: subscriptionStore, clock, maker, published });
  let consumer: BusSubscription | undefined;
  let walletConsumer: BusSubscription | undefined;
  let usageConsumer: BusSubscription | undefined;

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
      mountInvoiceRoutes(a, { db, invoices: invoiceStore, finalizer, upcoming, customers: customerStore }, logger);
      mountRenewalRoutes(a, periods, logger);
      mountPaymentRoutes(a, payments, logger);
      mountTaskRoutes(a, tasks, logger);
      mountFeatureRoutes(a, features, logger);
      mountEntitlementRoutes(a, entitlements, logger);
      // The entitlements service seeds its projection from it (ADR 0061).
      mountSnapshotRoute(a, db, logger);
      mountCreditGrantRoutes(a, creditGrants, logger);
      mountCreditNoteRoutes(a, creditNotes, logger, (scope, id, children) => customerScope(db, customerStore, scope, id, children));
      mountCouponRoutes(a, coupons, logger);
      mountPlanChangeRoutes(a, planChanges, logger);
      mountSettingsRoutes(a, billingSettings, logger);
      mountDocumentRoutes(a, documents, logger);
      communications.mount(a);
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
    invoiceEndedPeriods: (id, requestId) => billing.catchUp(id, requestId),
    thresholds,
    consumeCustomerEvents: (on) => subscribeCustomerEvents(customerEventsDeps(on)),
    topups,
    tasks,
    unbilled,
    creditGrants,
    planChanges,
    coupons,
    creditNotes,
    emails: communications.sender,
    async start() {
      await migrate(db, SCHEMA, migrations);
      consumer = await subscribeCustomerEvents(customerEventsDeps(bus));
      walletConsumer = await subscribeWalletEvents({ bus, logger, topups });
      relay.start();
      periods.start();
      await bus.ensureTopics([TOPICS.usageEvents]);
      usageConsumer = await subscribeUsageRecorded(bus, unbilled, logger);
      unbilled.start();
      taskRunner.start();
      communications.sender.start();
    },
    async stop() {
      await communications.sender.stop();
      await taskRunner.stop();
      await usageConsumer?.stop();
      await unbilled.stop();
      await periods.stop();
      await consumer?.stop();
      await walletConsumer?.stop();
      await relay.stop();
      await httpLookup.close();
      await httpMeters.close();
      await httpWallets.close();
      await closeTaskClients();
    },
  };
}
