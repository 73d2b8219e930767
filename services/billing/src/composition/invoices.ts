/**
 * Finalizing invoices: the finalizer runs the "finalize an invoice" workflow (ADR 0062) with the
 * parts its steps are done with; invoiced top-ups (ADR 0056) are finalized by it and settled
 * after; the excess credit goes to the PRE_PAID wallet (ADR 0043).
 */
import type { WalletCredits, Wallets } from '../clients/wallets/domain';
import type { DocumentService } from '../documents/service';
import { ExcessCredits } from '../invoices/excess-credit';
import { InvoiceFinalizer } from '../invoices/finalizer';
import type { PeriodBilling } from '../invoices/period-billing';
import { PostpaidPayments } from '../payments/postpaid';
import { TopupInvoicer } from '../topups/invoicer';
import { TopupSettlement } from '../topups/settlement';
import { FinalizeInvoiceWorkflow } from '../workflows/finalize-invoice';
import type { CompositionBase } from './base';
import type { CreditNotes } from './credit-notes';
import type { BillingStores } from './stores';
import type { DraftTaxes } from '../invoices/draft-taxes';

export interface Invoices {
  finalizer: InvoiceFinalizer;
  /** Step (6) again before finalization, and the HTTP tax provider's calls (docs/api/taxes.md#http-provider). */
  draftTaxes: DraftTaxes;
  settlement: TopupSettlement;
  excessCredits: ExcessCredits;
  topups: TopupInvoicer;
}

export function composeInvoices(
  { db, logger, clock, published, settings }: CompositionBase,
  parts: { stores: BillingStores; wallets: Wallets; walletCredits: WalletCredits; billing: PeriodBilling; documents: DocumentService; creditNotes: CreditNotes; draftTaxes: DraftTaxes },
): Invoices {
  const { stores, wallets } = parts;
  const settlement = new TopupSettlement({ db, invoices: stores.invoices, wallets, logger });
  const excessCredits = new ExcessCredits({ db, wallets: parts.walletCredits, logger, clock });
  const { draftTaxes } = parts;
  const finalizer = new InvoiceFinalizer({
    db,
    invoices: stores.invoices,
    wallets,
    logger,
    clock,
    published,
    invoiceNumberPrefix: settings.invoiceNumberPrefix,
    // Drafts wait BILLING_FINALIZE_DELAY for late events: their usage is read again at finalization.
    steps: new FinalizeInvoiceWorkflow({
      repricing: settings.finalizeDelayMs > 0 ? parts.billing : null,
      postpaid: new PostpaidPayments(stores.payments),
      documents: parts.documents,
      settlement,
      excess: excessCredits,
      thresholdReturns: parts.creditNotes.thresholdReturns,
      taxes: draftTaxes,
    }),
    voidNote: parts.creditNotes.issuer,
  });
  const topups = new TopupInvoicer({ db, invoices: stores.invoices, wallets, finalizer, logger, clock, published });
  return { finalizer, draftTaxes, settlement, excessCredits, topups };
}
