import type { Trx } from '@billstream/db';
import type { Invoice } from './domain';
import type { NoteMoney } from './lifecycle';

/**
 * What a void of a finalized invoice does with its credit notes (docs/api/credit-notes.md, ADR
 * 0041), implemented by `credit-notes/` and wired by the composition.
 */
export interface VoidCreditNote {
  /**
   * In the void's transaction, the invoice locked and still finalized: refuses the void (a 400)
   * when it cannot be made (a pending payment), else writes the one `INVOICE_VOID` note for
   * what is still creditable and answers its money (null: no note), which the void's
   * transition (`lifecycle.voidInvoice`) applies to the invoice.
   */
  onVoid(trx: Trx, invoice: Invoice, actor: string): Promise<NoteMoney | null>;
  /** In the transaction that records the void's wallet refund as done: the note's wallet part is that refund. */
  refunded(trx: Trx, invoice: Invoice): Promise<void>;
}
