import type { Trx } from '@billstream/db';
import type { Invoice } from './domain';

/**
 * What a finalization records for the invoice's documents (ADR 0045); documents/ implements it.
 * `links` gives the signed links set on the invoice before it is saved (so its
 * `invoice.update.finalized` event carries them); `inTransaction` snapshots, in the
 * finalizing transaction, what the issued PDF shows (the invoice, the seller, the buyer).
 */
export interface FinalizedHook {
  links(invoice: Invoice): Promise<{ hostedInvoiceUrl: string; invoicePdfUrl: string }>;
  /** Invoices of one tenant and environment. */
  inTransaction(trx: Trx, invoices: Invoice[]): Promise<void>;
}
