/**
 * Plan changes' composition (ADR 0043): one SUBSCRIPTION_UPDATE invoice per change, under the
 * subscription's lock with the swap; what the old plan's unpaid proration still owes is credited.
 */
import { ProrationDue } from '../credit-notes/proration-due';
import type { CreditNoteIssuer } from '../credit-notes/issuer';
import type { CreditGrantBinder } from '../credit-grants/binder';
import type { InvoiceFinalizer } from '../invoices/finalizer';
import type { DraftTaxes } from '../invoices/draft-taxes';
import type { InvoiceMaker } from '../invoices/maker';
import type { PeriodBilling } from '../invoices/period-billing';
import { ChangeInvoicer } from '../plan-changes/invoice';
import { PlanChangeService } from '../plan-changes/service';
import type { CompositionBase } from './base';
import type { BillingStores } from './stores';

export function composePlanChanges(
  { db, clock, published }: CompositionBase,
  parts: { stores: BillingStores; maker: InvoiceMaker; billing: PeriodBilling; finalizer: InvoiceFinalizer; issuer: CreditNoteIssuer; grants: CreditGrantBinder; taxes: DraftTaxes },
): PlanChangeService {
  const { stores } = parts;
  return new PlanChangeService({
    db,
    subscriptions: stores.subscriptions,
    plans: stores.plans,
    prices: stores.prices,
    changes: stores.changes,
    invoices: stores.invoices,
    invoicer: new ChangeInvoicer(parts.maker, stores.invoices, new ProrationDue(parts.issuer, stores.payments)),
    billing: parts.billing,
    finalizer: parts.finalizer,
    grants: parts.grants,
    taxes: parts.taxes,
    clock,
    published,
  });
}
