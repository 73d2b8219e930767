/**
 * Billing's composition root: the areas of the service, each composed in src/composition/ (ADR
 * 0063) from what the areas before it return, in dependency order, then the routes and the
 * handle. An area is one line here.
 */
import { TOPICS, type Subscription as BusSubscription } from '@billstream/bus';
import { migrate, pingDb } from '@billstream/db';
import { OutboxRelay } from '@billstream/outbox';
import { createServiceApp, type ServiceDeps } from '@billstream/runtime';
import { billingSettingsFrom } from './config';
import { subscribeCustomerEvents } from './customer-events/consumer';
import { migrations, SCHEMA } from './migrations';
import { subscribeWalletEvents } from './topups/consumer';
import { subscribeUsageRecorded } from './unbilled/consumer';
import type { CompositionBase } from './composition/base';
import { composeCatalog } from './composition/catalog';
import { composeCommunications } from './composition/communications';
import { composeClients, getter } from './composition/clients';
import { composeCreditGrants } from './composition/credit-grants';
import { composeCreditNotes } from './composition/credit-notes';
import { composeDocuments } from './composition/documents';
import type { BillingServiceConfig, BillingServiceHandle } from './composition/handle';
import { composeInvoices } from './composition/invoices';
import { composeInvoicing } from './composition/invoicing';
import { composePayments } from './composition/payments';
import { composePeriodJob } from './composition/periods';
import { composePlanChanges } from './composition/plan-changes';
import { mountBillingRoutes } from './composition/routes';
import { composeStores } from './composition/stores';
import { composeSubscriptions } from './composition/subscriptions';
import { composeTasks } from './composition/tasks';
import { composeUnbilled } from './composition/unbilled';

export type { BillingServiceConfig, BillingServiceHandle } from './composition/handle';

export function createBillingService({ db, bus, logger }: ServiceDeps, config: BillingServiceConfig): BillingServiceHandle {
  const settings = { ...billingSettingsFrom(config.env ?? {}), ...config.settings };
  const relay = new OutboxRelay({ db, schema: SCHEMA, bus, logger });
  const base: CompositionBase = { db, logger, clock: config.clock ?? (() => new Date()), published: () => relay.nudge(), settings };
  const stores = composeStores();
  const clients = composeClients(config);
  const { meters, wallets, walletCredits } = clients;
  const catalog = composeCatalog(base, { stores, meters });
  const grants = composeCreditGrants(base, { stores, walletCredits });
  const invoicing = composeInvoicing(base, { stores, meters, wallets, grants: grants.binder });
  const { maker, billing, thresholds } = invoicing;
  const subscriptions = composeSubscriptions(base, { stores, customerLookup: clients.customerLookup, meters, invoicing, grants });
  const creditNotes = composeCreditNotes(base, { stores, walletCredits });
  // Invoice email (ADR 0067): recorded in documents/' transactions, sent by its job with the frozen PDF.
  const communications = composeCommunications({ ...base, internalToken: config.internalToken }, { invoices: stores.invoices, customers: stores.customers, pdf: (scope, id) => documents.pdf(scope, id) });
  const documents = composeDocuments(base, { stores, internalToken: config.internalToken, emails: communications.recorder });
  const invoices = composeInvoices(base, { stores, wallets, walletCredits, billing, documents, creditNotes, draftTaxes: invoicing.draftTaxes });
  const { finalizer, settlement, excessCredits, topups } = invoices;
  const planChanges = composePlanChanges(base, { stores, maker, billing, finalizer, issuer: creditNotes.issuer, grants: grants.binder, taxes: invoicing.draftTaxes });
  const payments = composePayments(base, { stores, wallets, settlement });
  const periods = composePeriodJob(base, {
    ...{ subscriptions: stores.subscriptions, invoices: stores.invoices, billing, finalizer, grants: grants.binder, topups: settlement, thresholds },
    ...{ payments: payments.payments, creditNotes: creditNotes.service, excessCredits, thresholdReturns: creditNotes.thresholdReturns, dunning: payments.dunning, draftTaxes: invoices.draftTaxes },
  });
  const taskParts = { internalToken: config.internalToken, ingestionUrl: getter(config.ingestionServiceUrl), customerUrl: getter(config.customerServiceUrl), invoices: stores.invoices };
  const { tasks, taskRunner, close: closeTaskClients } = composeTasks({ ...base, bus }, taskParts);
  const unbilled = composeUnbilled(base, { subscriptions: stores.subscriptions, customers: stores.customers, maker, meters, wallets, thresholds });
  const customerEventsDeps = (on: ServiceDeps['bus']) => ({ ...base, bus: on, customers: stores.customers, subscriptions: stores.subscriptions, maker });
  let consumer: BusSubscription | undefined;
  let walletConsumer: BusSubscription | undefined;
  let usageConsumer: BusSubscription | undefined;

  const ready = async () => ({ database: await pingDb(db), broker: await bus.healthy() });
  const routed = { stores, catalog, subscriptions, invoicing, invoices, payments, grants, creditNotes, planChanges, documents, periods, tasks };
  const app = createServiceApp({ service: 'billing', logger, internalToken: config.internalToken, ready, mount: (a) => {
      mountBillingRoutes(a, db, logger, routed);
      communications.mount(a);
    },
  });
  return {
    name: 'billing',
    schema: SCHEMA,
    migrations,
    app,
    ready,
    plans: catalog.plans,
    prices: catalog.prices,
    subscriptions: subscriptions.subscriptions,
    periods,
    invoices: finalizer,
    payments: payments.payments,
    invoiceEndedPeriods: (id, requestId) => billing.catchUp(id, requestId),
    thresholds,
    consumeCustomerEvents: (on) => subscribeCustomerEvents(customerEventsDeps(on)),
    topups,
    tasks,
    unbilled,
    creditGrants: grants.service,
    planChanges,
    coupons: subscriptions.coupons,
    creditNotes: creditNotes.service,
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
      await clients.close();
      await closeTaskClients();
      await invoices.draftTaxes.close();
    },
  };
}
