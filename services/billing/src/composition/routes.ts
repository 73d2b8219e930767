/** The billing API's routes, each area's mounted on the service's app (ADR 0063: the composition is the one place that wires). */
import type { Express } from 'express';
import type { Db } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { mountCouponRoutes } from '../coupons/routes';
import { mountCreditGrantRoutes } from '../credit-grants/routes';
import { mountCreditNoteRoutes } from '../credit-notes/routes';
import { customerScope } from '../customers/hierarchy';
import type { DocumentService } from '../documents/service';
import { mountDocumentRoutes } from '../documents/routes';
import { mountEntitlementRoutes } from '../entitlements/routes';
import { mountSnapshotRoute } from '../entitlements/snapshot';
import { mountFeatureRoutes } from '../features/routes';
import { mountTaxRateRoutes } from '../taxes/routes';
import { mountInvoiceRoutes } from '../invoices/routes';
import { mountPaymentRoutes } from '../payments/routes';
import type { PlanChangeService } from '../plan-changes/service';
import { mountPlanChangeRoutes } from '../plan-changes/routes';
import { mountPlanRoutes } from '../plans/routes';
import { mountPriceRoutes } from '../prices/routes';
import type { PeriodJob } from '../renewals/period-job';
import { mountRenewalRoutes } from '../renewals/routes';
import { mountReportRoutes } from '../reports/billing-daily';
import { mountSettingsRoutes } from '../settings/routes';
import { mountSubscriptionRoutes } from '../subscriptions/routes';
import type { TaskService } from '../tasks/service';
import { mountTaskRoutes } from '../tasks/routes';
import type { Catalog } from './catalog';
import type { CreditGrants } from './credit-grants';
import type { CreditNotes } from './credit-notes';
import type { Invoices } from './invoices';
import type { Invoicing } from './invoicing';
import type { Payments } from './payments';
import type { BillingStores } from './stores';
import type { Subscriptions } from './subscriptions';

export interface RoutedAreas {
  stores: BillingStores;
  catalog: Catalog;
  subscriptions: Subscriptions;
  invoicing: Invoicing;
  invoices: Invoices;
  payments: Payments;
  grants: CreditGrants;
  creditNotes: CreditNotes;
  planChanges: PlanChangeService;
  documents: DocumentService;
  periods: PeriodJob;
  tasks: TaskService;
}

export function mountBillingRoutes(a: Express, db: Db, logger: Logger, areas: RoutedAreas): void {
  const { stores, catalog, subscriptions } = areas;
  mountPlanRoutes(a, catalog.plans, logger);
  mountPriceRoutes(a, catalog.prices, logger);
  mountSubscriptionRoutes(a, subscriptions.subscriptions, subscriptions.usage, logger);
  mountInvoiceRoutes(a, { db, invoices: stores.invoices, finalizer: areas.invoices.finalizer, upcoming: areas.invoicing.upcoming, customers: stores.customers }, logger);
  mountRenewalRoutes(a, areas.periods, logger);
  mountPaymentRoutes(a, areas.payments.payments, logger);
  mountTaskRoutes(a, areas.tasks, logger);
  mountFeatureRoutes(a, catalog.features, logger);
  mountEntitlementRoutes(a, catalog.entitlements, logger);
  mountTaxRateRoutes(a, catalog.taxRates, logger);
  // The entitlements service seeds its projection from it (ADR 0061).
  mountSnapshotRoute(a, db, logger);
  mountCreditGrantRoutes(a, areas.grants.service, logger);
  mountCreditNoteRoutes(a, areas.creditNotes.service, logger, (scope, id, children) => customerScope(db, stores.customers, scope, id, children));
  mountCouponRoutes(a, subscriptions.coupons, logger);
  mountPlanChangeRoutes(a, areas.planChanges, logger);
  mountSettingsRoutes(a, areas.payments.settings, logger);
  mountDocumentRoutes(a, areas.documents, logger);
  mountReportRoutes(a, db, logger);
}
