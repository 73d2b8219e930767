/**
 * The making of invoices: the maker prices new invoices (with the subscriptions' discounts,
 * ADR 0040), the period billing invoices ended periods, progressive billing's threshold
 * invoices (ADR 0046) and the upcoming invoice.
 */
import type { Meters } from '../clients/meters/domain';
import type { Wallets } from '../clients/wallets/domain';
import { InvoiceDiscounts } from '../coupons/discounts';
import type { CreditGrantBinder } from '../credit-grants/binder';
import { InvoiceMaker } from '../invoices/maker';
import { PeriodBilling } from '../invoices/period-billing';
import { ThresholdBilling } from '../invoices/thresholds';
import { UpcomingInvoices } from '../invoices/upcoming';
import type { CompositionBase } from './base';
import type { BillingStores } from './stores';
import { HttpTaxProvider } from '../clients/tax-provider/http-tax-provider';
import { DraftTaxes } from '../invoices/draft-taxes';
import { InvoiceTaxes } from '../invoices/invoice-taxes';
import { TaxRateStore } from '../taxes/store';

export interface Invoicing {
  discounts: InvoiceDiscounts;
  maker: InvoiceMaker;
  billing: PeriodBilling;
  thresholds: ThresholdBilling;
  upcoming: UpcomingInvoices;
  /** Step (6) again before finalization, and the HTTP tax provider's calls (docs/api/taxes.md#http-provider). */
  draftTaxes: DraftTaxes;
}

/** Step (6) of every invoice billing prices (docs/api/taxes.md#invoices-bearing-tax), on the stores (stateless: one per user is the same as one shared). */
export function invoiceTaxesOf(stores: BillingStores): InvoiceTaxes {
  return new InvoiceTaxes({ settings: stores.settings, customers: stores.customers, prices: stores.prices, plans: stores.plans, rates: new TaxRateStore() });
}

export function composeInvoicing(
  { db, logger, clock, published, settings }: CompositionBase,
  { stores, meters, wallets, grants }: { stores: BillingStores; meters: Meters; wallets: Wallets; grants: CreditGrantBinder },
): Invoicing {
  const discounts = new InvoiceDiscounts(stores.coupons);
  const maker = new InvoiceMaker({
    db,
    subscriptions: stores.subscriptions,
    prices: stores.prices,
    customers: stores.customers,
    invoices: stores.invoices,
    meters,
    finalizeDelayMs: settings.finalizeDelayMs,
    discounts,
    taxes: invoiceTaxesOf(stores),
  });
  const billing = new PeriodBilling({ db, subscriptions: stores.subscriptions, invoices: stores.invoices, maker, clock, published, prices: stores.prices, grants });
  const thresholds = new ThresholdBilling({ db, subscriptions: stores.subscriptions, invoices: stores.invoices, maker, meters, clock, published, logger });
  const draftTaxes = new DraftTaxes({
    db,
    invoices: stores.invoices,
    taxes: invoiceTaxesOf(stores),
    clock,
    logger,
    // The HTTP tax provider (docs/api/taxes.md#http-provider): asked only for scopes whose settings name it.
    provider: new HttpTaxProvider(settings.taxProvider.timeoutMs),
    retry: { baseMs: settings.taxProvider.retryBaseMs, maxMs: settings.taxProvider.retryMaxMs },
  });
  const upcoming = new UpcomingInvoices({ db, subscriptions: stores.subscriptions, maker, wallets, clock, taxes: draftTaxes });
  return { discounts, maker, billing, thresholds, upcoming, draftTaxes };
}
