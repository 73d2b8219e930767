/**
 * The stores: one of each table's store, shared by every area (a store keeps no state; ADR 0063).
 */
import { ApplicationStore } from '../credit-grants/applications-store';
import { CreditGrantStore } from '../credit-grants/store';
import { CreditNoteStore } from '../credit-notes/store';
import { CouponStore } from '../coupons/store';
import { CustomerStore } from '../customers/store';
import { DocumentStore } from '../documents/store';
import { EntitlementStore } from '../entitlements/store';
import { FeatureStore } from '../features/store';
import { InvoiceStore } from '../invoices/store';
import { PaymentStore } from '../payments/store';
import { ChangeStore } from '../plan-changes/store';
import { PlanStore } from '../plans/store';
import { PriceStore } from '../prices/store';
import { SettingsStore } from '../settings/store';
import { SubscriptionStore } from '../subscriptions/store';

export interface BillingStores {
  plans: PlanStore;
  prices: PriceStore;
  features: FeatureStore;
  entitlements: EntitlementStore;
  customers: CustomerStore;
  subscriptions: SubscriptionStore;
  coupons: CouponStore;
  grants: CreditGrantStore;
  applications: ApplicationStore;
  invoices: InvoiceStore;
  payments: PaymentStore;
  creditNotes: CreditNoteStore;
  documents: DocumentStore;
  settings: SettingsStore;
  changes: ChangeStore;
}

export function composeStores(): BillingStores {
  return {
    plans: new PlanStore(),
    prices: new PriceStore(),
    features: new FeatureStore(),
    entitlements: new EntitlementStore(),
    customers: new CustomerStore(),
    subscriptions: new SubscriptionStore(),
    coupons: new CouponStore(),
    grants: new CreditGrantStore(),
    applications: new ApplicationStore(),
    invoices: new InvoiceStore(),
    payments: new PaymentStore(),
    creditNotes: new CreditNoteStore(),
    documents: new DocumentStore(),
    settings: new SettingsStore(),
    changes: new ChangeStore(),
  };
}
