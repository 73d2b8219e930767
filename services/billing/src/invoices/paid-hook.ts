import type { Trx } from '@billstream/db';
import type { Invoice } from './domain';

/**
 * What follows an invoice's payment in full, in two halves so that it happens exactly once
 * without holding a database transaction across an HTTP call (ADR 0016): `inTransaction` records
 * durably, in the transaction that pays the invoice (a payment, or a finalization with nothing
 * due), what must follow; `afterCommit` does it once that transaction committed. The period job
 * retries what a crash or a failed call left recorded but not done.
 */
export interface PaidHook {
  inTransaction(trx: Trx, invoice: Invoice): Promise<void>;
  /** Never throws: the payment stands whatever happens here. */
  afterCommit(invoice: Invoice, requestId: string): Promise<void>;
}
