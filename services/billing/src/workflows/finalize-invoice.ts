import type { Trx } from '@billstream/db';
import type { ThresholdReturnNotes } from '../credit-notes/threshold-returns';
import type { DocumentService } from '../documents/service';
import type { Invoice } from '../invoices/domain';
import type { ExcessCredits } from '../invoices/excess-credit';
import type { FinalizationSteps } from '../invoices/finalization-steps';
import type { PeriodBilling } from '../invoices/period-billing';
import type { PostpaidPayments } from '../payments/postpaid';
import type { TopupSettlement } from '../topups/settlement';
import type { DraftTaxes } from '../invoices/draft-taxes';

export interface FinalizeInvoiceDeps {
  /** Reprices drafts made before their grace window ended; null when BILLING_FINALIZE_DELAY is 0. */
  repricing: PeriodBilling | null;
  postpaid: PostpaidPayments;
  documents: DocumentService;
  settlement: TopupSettlement;
  excess: ExcessCredits;
  thresholdReturns: ThresholdReturnNotes;
  /** Taxes drafts again at finalization (docs/api/taxes.md#invoices-bearing-tax). */
  taxes: DraftTaxes;
}

/**
 * Finalizing an invoice, step by step (ADR 0062). `InvoiceFinalizer` (invoices/finalizer.ts)
 * runs the steps in this order, for one draft (the API, a plan change) and for a batch (the
 * period job) alike; the invoice's own change is `lifecycle.allocate` then `lifecycle.finalize`.
 *
 * Before the transaction (no call inside it, ADR 0055):
 *   1. reprice: a draft made before its grace window ended reads its usage again (ADR 0016);
 *      then tax: rates and the buyer's tax identity as they are now (docs/api/taxes.md);
 *   2. allocate: the wallet service allocates prepaid credits and a postpaid wallet's payment
 *      (idempotent on the invoice id).
 * In one transaction, the invoice locked:
 *   3. the lines' credits, then the postpaid wallet's CREDITS payment (payments/, ADR 0044);
 *   4. the number (the tenant's counter, taken last), the signed document links (ADR 0059),
 *      the `finalize` transition, the save;
 *   5. the documents' snapshot, what the PDF shows (documents/, ADR 0045);
 *   6. the events (`invoice.update.finalized`, the payment's, `invoice.update.payment`), and
 *      for an invoice paid in full its top-up settle mark (topups/, ADR 0056).
 * After the commit (each step logs its failure and leaves it to the period job):
 *   7. the invoiced top-up's credit settled COMPLETED (topups/);
 *   8. the excess credit credited to the PRE_PAID wallet (ADR 0043);
 *   9. the threshold returns' credit notes of a closing invoice (credit-notes/, ADR 0046).
 * The period job then grants the credit grant periods of the finalized batch (renewals/, ADR 0048).
 */
export class FinalizeInvoiceWorkflow implements FinalizationSteps {
  readonly reprices: boolean;
  readonly postpaid: PostpaidPayments;
  readonly documents: DocumentService;

  constructor(private readonly deps: FinalizeInvoiceDeps) {
    this.reprices = deps.repricing !== null;
    this.postpaid = deps.postpaid;
    this.documents = deps.documents;
  }

  /** Step 1. */
  async reprice(draft: Invoice, requestId: string): Promise<Invoice | undefined> {
    return this.deps.repricing ? this.deps.repricing.reprice(draft, requestId) : draft;
  }

  /** Step 1, tax. */
  tax(drafts: Invoice[]): Promise<Invoice[]> {
    return this.deps.taxes.again(drafts);
  }

  /** Step 6, for an invoice finalized with nothing remaining. */
  async paidInTransaction(trx: Trx, saved: Invoice): Promise<void> {
    await this.deps.settlement.inTransaction(trx, saved);
  }

  /** Steps 7 to 9. */
  async afterCommit(invoice: Invoice, requestId: string): Promise<void> {
    if (invoice.status === 'paid') await this.deps.settlement.afterCommit(invoice, requestId);
    await this.deps.excess.afterCommit(invoice, requestId);
    await this.deps.thresholdReturns.afterCommit(invoice, requestId);
  }
}
