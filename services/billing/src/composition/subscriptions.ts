/**
 * Customers and subscriptions: the customer directory (the customer service's customers,
 * known locally), coupons (ADR 0040), subscriptions with their invoices and grants, and usage.
 */
import type { CustomerLookup } from '../clients/customers/domain';
import type { Meters } from '../clients/meters/domain';
import { CouponService } from '../coupons/service';
import { CustomerDirectory } from '../customers/directory';
import { SubscriptionInvoices } from '../invoices/subscription-invoicing';
import { SubscriptionService } from '../subscriptions/service';
import { UsageService } from '../subscriptions/usage';
import type { CompositionBase } from './base';
import type { CreditGrants } from './credit-grants';
import type { Invoicing } from './invoicing';
import type { BillingStores } from './stores';

export interface Subscriptions {
  coupons: CouponService;
  subscriptions: SubscriptionService;
  usage: UsageService;
}

export function composeSubscriptions(
  { db, clock, published }: CompositionBase,
  parts: { stores: BillingStores; customerLookup: CustomerLookup; meters: Meters; invoicing: Invoicing; grants: CreditGrants },
): Subscriptions {
  const { stores, invoicing } = parts;
  const directory = new CustomerDirectory({ db, store: stores.customers, lookup: parts.customerLookup, clock });
  const coupons = new CouponService({ db, coupons: stores.coupons, prices: stores.prices, subscriptions: stores.subscriptions, invoiceDiscounts: invoicing.discounts, clock, published });
  const subscriptions = new SubscriptionService({
    db,
    subscriptions: stores.subscriptions,
    plans: stores.plans,
    prices: stores.prices,
    customers: directory,
    clock,
    published,
    invoicing: new SubscriptionInvoices(db, invoicing.maker, invoicing.billing),
    grants: parts.grants.binder,
    discounts: coupons,
  });
  const usage = new UsageService({ db, subscriptions: stores.subscriptions, prices: stores.prices, customers: stores.customers, meters: parts.meters, clock, directory });
  return { coupons, subscriptions, usage };
}
