import type { Scope } from '@billstream/contracts';
import type { Trx } from '@billstream/db';
import { ValidationError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import { INVOICE_EVENTS, paymentStatusOf, type Invoice } from '../invoices/domain';
import { announceInvoice } from '../invoices/maker';
import type { InvoiceStore } from '../invoices/store';
import type { VoidCreditNote } from '../invoices/void-credit-note';
import type { PaymentStore } from '../payments/store';
import { sumAmounts } from '@billstream/pricing';
import { CREDIT_NOTE_EVENTS, creditNoteNumber, walletCreditOf, type CreditNote } from './domain';
import { creditableOf, splitAmount, type InvoiceMoney } from './money';
import { announceCreditNote, type CreditNoteStore } from './store';

export type NoteInput = Pick<CreditNote, 'reason' | 'memo' | 'refund' | 'origin' | 'idempotencyKey' | 'requestHash' | 'metadata' | 'prePaymentAmount' | 'walletAmount' | 'refundAmount'> & {
  lines: Array<{ invoiceLineItemId: string; amount: number }>;
};

/**
 * Writes credit notes on a locked invoice (docs/api/credit-notes.md, ADR 0041): the request's
 * notes for `CreditNoteService`, and the one `INVOICE_VOID` note of an invoice's void (the
 * `VoidCreditNote` port of `invoices/`).
 */
export class CreditNoteIssuer implements VoidCreditNote {
  constructor(
    private readonly notes: CreditNoteStore,
    private readonly invoices: InvoiceStore,
    private readonly payments: PaymentStore,
    private readonly clock: () => Date,
    private readonly numberPrefix: string,
  ) {}

  /** What is still due, wallet money and money paid that notes have not given back yet (under the invoice's lock). */
  async moneyOf(trx: Trx, invoice: Invoice): Promise<InvoiceMoney> {
    const pending = await this.payments.pendingAmount(trx, invoice.id);
    const creditsPaid = await this.payments.succeededAmount(trx, invoice.id, 'CREDITS');
    // Money received: OFFLINE and a processor's (PROVIDER) alike, refunded outside Billstream.
    const offlinePaid = (await this.payments.succeededAmount(trx, invoice.id, 'OFFLINE')) + (await this.payments.succeededAmount(trx, invoice.id, 'PROVIDER'));
    const credited = await this.notes.creditedOf(trx, invoice.id);
    return {
      dueLeft: invoice.amountRemaining - pending,
      walletLeft: invoice.totalPrepaidCreditsApplied + creditsPaid - credited.walletAmount,
      paidLeft: offlinePaid - credited.refundAmount,
    };
  }

  /**
   * Writes a note on a locked invoice: the lines' credited amounts, the invoice's totals (the
   * pre-payment part lowers what is due; nothing left: paid), the number (gap-free: rolled back
   * with the transaction) and the events (`invoice.update` unless the void announces the
   * invoice). Answers undefined when the idempotency key is taken.
   */
  async issue(trx: Trx, ctx: Scope & { actor: string }, invoice: Invoice, n: NoteInput): Promise<{ note: CreditNote; invoice: Invoice } | undefined> {
    const number = await this.notes.nextNumber(trx, ctx);
    const now = this.clock();
    const note: CreditNote = {
      ...n,
      id: newId('creditNote'),
      tenantId: ctx.tenantId,
      environmentId: ctx.environmentId,
      number: creditNoteNumber(this.numberPrefix, now, number),
      invoiceId: invoice.id,
      customerId: invoice.customerId,
      currency: invoice.currency,
      amount: n.prePaymentAmount + n.walletAmount + n.refundAmount,
      status: 'issued',
      // An INVOICE_VOID note's wallet part is the void's refund: pending until that refund is done.
      refundStatus: (n.origin === 'INVOICE_VOID' ? n.walletAmount : walletCreditOf(n)) > 0 ? 'pending' : 'none',
      walletTransactionId: null,
      voidedAt: null,
      createdAt: now,
      updatedAt: now,
      lines: n.lines.map((l, k) => ({ id: newId('creditNoteLineItem'), invoiceLineItemId: l.invoiceLineItemId, position: k, amount: l.amount })),
    };
    if (!(await this.notes.insert(trx, note))) return undefined;
    await this.notes.addCredited(trx, note.lines, 1);
    const amountDue = invoice.amountDue - note.prePaymentAmount;
    const amountRemaining = invoice.amountRemaining - note.prePaymentAmount;
    const saved = await this.invoices.save(trx, {
      ...invoice,
      lines: invoice.lines.map((l) => ({ ...l, creditedAmount: l.creditedAmount + (note.lines.find((x) => x.invoiceLineItemId === l.id)?.amount ?? 0) })),
      prePaymentCreditNotesAmount: invoice.prePaymentCreditNotesAmount + note.prePaymentAmount,
      postPaymentCreditNotesAmount: invoice.postPaymentCreditNotesAmount + note.walletAmount + note.refundAmount,
      amountDue,
      amountRemaining,
      paymentStatus: paymentStatusOf(amountDue, invoice.amountPaid),
      status: invoice.status === 'finalized' && amountRemaining === 0 ? 'paid' : invoice.status,
      updatedAt: now,
    });
    await announceCreditNote(trx, CREDIT_NOTE_EVENTS.created, note, ctx.actor);
    if (n.origin === 'MANUAL') await announceInvoice(trx, INVOICE_EVENTS.updated, saved, ctx.actor);
    return { note, invoice: saved };
  }

  /**
   * The void of a finalized invoice: a pending payment refuses it (400); else one INVOICE_VOID
   * note (reason OTHER) takes all that is still creditable: (1) what is due, to 0; (2) the wallet
   * money, which the void's wallet refund (ADR 0016) gives back, once; (3) money paid, OFFLINE
   * (it stays recorded). Nothing left to credit, or a CREDIT_PURCHASE invoice: no note. Wallet
   * money that manual notes already gave back would be refunded a second time by the wallet's
   * refund of every debit: such an invoice cannot be voided (400); its rest is credited with a
   * note instead.
   */
  async onVoid(trx: Trx, invoice: Invoice, actor: string): Promise<Invoice> {
    const pending = await this.payments.pendingAmount(trx, invoice.id);
    if (pending > 0) {
      throw new ValidationError(`Invoice ${invoice.id} has a payment in progress: void it once the payment is done`, { field: 'status', pending_payment_amount: pending });
    }
    // A purchase of credits takes no credit notes (its void fails the pending credit instead).
    if (invoice.billingReason === 'CREDIT_PURCHASE') return invoice;
    const credited = await this.notes.creditedOf(trx, invoice.id);
    if (credited.walletAmount > 0) {
      throw new ValidationError(`Credit notes gave wallet money of invoice ${invoice.id} back: voiding it would refund that money twice`, {
        field: 'status',
        credit_notes_wallet_amount: credited.walletAmount,
      });
    }
    const lines = [...invoice.lines]
      .sort((a, b) => a.position - b.position)
      .map((l) => ({ invoiceLineItemId: l.id, amount: creditableOf(l) }))
      .filter((l) => l.amount > 0);
    const amount = sumAmounts(lines);
    if (amount === 0) return invoice;
    const split = splitAmount(amount, await this.moneyOf(trx, invoice), 'OFFLINE');
    const scope = { tenantId: invoice.tenantId, environmentId: invoice.environmentId, actor };
    const noteInput: NoteInput = { reason: 'OTHER', memo: null, refund: 'OFFLINE', origin: 'INVOICE_VOID', idempotencyKey: null, requestHash: null, metadata: {}, lines, ...split };
    return (await this.issue(trx, scope, invoice, noteInput))!.invoice;
  }

  /** The void's wallet refund is done: the INVOICE_VOID note's wallet part with it (`credit_note.updated`). */
  async refunded(trx: Trx, invoice: Invoice): Promise<void> {
    const note = await this.notes.voidNoteOf(trx, invoice.id);
    if (!note || note.refundStatus !== 'pending') return;
    const saved = await this.notes.save(trx, { ...note, refundStatus: 'succeeded', updatedAt: this.clock() });
    await announceCreditNote(trx, CREDIT_NOTE_EVENTS.updated, saved);
  }
}
