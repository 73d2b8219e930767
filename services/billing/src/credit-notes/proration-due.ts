import type { Trx } from '@billstream/db';
import { ValidationError } from '@billstream/errors';
import type { Invoice } from '../invoices/domain';
import { PRORATION_NOTE_KEY, type UnpaidProration } from '../invoices/unpaid-proration';
import type { PaymentStore } from '../payments/store';
import type { CreditNoteIssuer } from './issuer';
import { largestNoteWithin, noteTax } from './money';

/**
 * The unpaid part of a proration credit as a credit note on the credited invoice (ADR 0056):
 * origin MANUAL (the system's notes share it, as threshold returns do), reason ORDER_CHANGE,
 * refund NONE, metadata `plan_change_proration: "true"`, all of it pre-payment: what is due
 * falls, nothing goes to a wallet.
 */
export class ProrationDue implements UnpaidProration {
  constructor(
    private readonly issuer: CreditNoteIssuer,
    private readonly payments: PaymentStore,
  ) {}

  async dueLeft(trx: Trx, invoice: Invoice): Promise<number> {
    // A draft (only a preview meets one: a change finalizes them first) counts as unpaid.
    if (invoice.status === 'draft') return invoice.amountDue;
    if (invoice.status !== 'finalized') return 0;
    const pending = await this.payments.pendingAmount(trx, invoice.id);
    if (pending > 0) {
      throw new ValidationError(`Invoice ${invoice.id} has a payment in progress: change the plan with prorations once the payment is done`, {
        field: 'proration_behavior',
        invoice_id: invoice.id,
        pending_payment_amount: pending,
      });
    }
    return invoice.amountRemaining;
  }

  fitDue(invoice: Invoice, lineId: string, upTo: number, due: number): { amount: number; total: number } {
    return largestNoteWithin(invoice, lineId, upTo, due);
  }

  async lowerDue(trx: Trx, invoice: Invoice, lines: Array<{ invoiceLineItemId: string; amount: number }>, memo: string): Promise<void> {
    const amount = lines.reduce((s, l) => s + l.amount, 0);
    // A draft takes no credit note (a preview's, rolled back anyway): the change invoice shows no credit for it.
    if (amount === 0 || invoice.status === 'draft') return;
    const scope = { tenantId: invoice.tenantId, environmentId: invoice.environmentId, actor: 'system' };
    await this.issuer.issue(trx, scope, invoice, {
      reason: 'ORDER_CHANGE',
      memo,
      refund: 'NONE',
      origin: 'MANUAL',
      idempotencyKey: null,
      requestHash: null,
      // Marks the note as a change's: the period's charges (commitments) count it as the credit it replaces.
      metadata: { [PRORATION_NOTE_KEY]: 'true' },
      // What was due of the lines and of the tax they return (docs/api/taxes.md#arithmetic).
      prePaymentAmount: noteTax(invoice, lines).total,
      walletAmount: 0,
      refundAmount: 0,
      lines,
    });
  }
}
