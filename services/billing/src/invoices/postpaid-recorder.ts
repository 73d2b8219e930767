import type { DomainEvent } from '@billstream/contracts';
import type { Trx } from '@billstream/db';
import type { Invoice } from './domain';

/** What a postpaid wallet paid of an invoice at its finalization (the allocation's `postpaid`). */
export interface PostpaidPayment {
  walletId: string;
  transactionId: string;
  /** Minor units. */
  amount: number;
  at: Date;
}

/**
 * Writes the CREDITS payment a postpaid wallet made, in the finalization's transaction, and
 * answers its `payment.success` event (written after `invoice.update.finalized`). payments/
 * implements it (`PostpaidPayments`): payments sit above invoices, which name no payment.
 */
export interface PostpaidRecorder {
  /** Writes the payment; answers its events (`payment.created`, `payment.success`) for the finalizer to write after the invoice's. */
  record(trx: Trx, invoice: Invoice, paid: PostpaidPayment, actor: string): Promise<DomainEvent[]>;
}
