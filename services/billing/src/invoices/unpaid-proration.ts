import type { Trx } from '@billstream/db';
import type { Invoice } from './domain';

/**
 * The metadata key of a change's credit note: a period's charges (commitments,
 * docs/api/billing.md#minimum-commitments) subtract such notes as they would the PRORATION_CREDIT line each replaces.
 */
export const PRORATION_NOTE_KEY = 'plan_change_proration';

/**
 * What a plan change's proration does with the unused time of an invoice not paid yet (ADR
 * 0056), implemented by `credit-notes/` and wired by the composition: that part lowers what is
 * due on the credited invoice instead of becoming a credit on the change invoice (and excess
 * credit in the wallet), so a credit never returns money that was never paid.
 */
export interface UnpaidProration {
  /**
   * Under the invoice's lock, in the change's transaction: what is still due on it (a finalized
   * invoice's `amount_remaining`; 0 when paid). A payment in progress refuses the change (400):
   * it may still succeed or fail.
   */
  dueLeft(trx: Trx, invoice: Invoice): Promise<number>;
  /**
   * The largest part of a line, at most `upTo` (the line's terms), whose note fits `due` (money,
   * tax included): its amount, and its total (amount plus the exclusive tax it returns,
   * docs/api/taxes.md#arithmetic), which is what it lowers the amount due by.
   */
  fitDue(invoice: Invoice, lineId: string, upTo: number, due: number): { amount: number; total: number };
  /** One pre-payment credit note on the invoice for these lines' parts: what is due falls by their sum. */
  lowerDue(trx: Trx, invoice: Invoice, lines: Array<{ invoiceLineItemId: string; amount: number }>, memo: string): Promise<void>;
}
