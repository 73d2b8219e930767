import type { Scope } from '@billstream/contracts';
import type { Trx } from '@billstream/db';
import { ValidationError } from '@billstream/errors';
import { newId } from '@billstream/ids';
import type { Invoice } from '../invoices/domain';
import * as lifecycle from '../invoices/lifecycle';
import { invoiceEvent } from '../invoices/maker';
import type { InvoiceStore } from '../invoices/store';
import { outboxInsertMany } from '@billstream/outbox';
import { TOPICS } from '@billstream/bus';
import type { VoidCreditNote } from '../invoices/void-credit-note';
import type { PaymentStore } from '../payments/store';
import { sumAmounts } from '@billstream/pricing';
import { CREDIT_NOTE_EVENTS, creditNoteNumber, walletCreditOf, type CreditNote } from './domain';
import { creditableOf, noteTax, splitAmount, type InvoiceMoney } from './money';
import { announceCreditNote, type CreditNoteStore } from './store';

export type NoteInput = Pick<CreditNote, 'reason' | 'memo' | 'refund' | 'origin' | 'idempotencyKey' | 'requestHash' | 'metadata' | 'prePaymentAmount' | 'walletAmount' | 'refundAmount'> & {
  lines: Array<{ invoiceLineItemId: string; amount: number }>;
};

/**
 * Writes credit notes on a locked invoice (docs/api/credit-notes.md, ADR 0041): the request's
 * notes for `CreditNoteService`, and the one `INVOICE_VOID` note of an invoice's void (the
 * `VoidCreditNote` port of `invoices/`).
 */
export interface CreditNoteIssuerDeps {
  notes: CreditNoteStore;
  invoices: InvoiceStore;
  payments: PaymentStore;
  clock: () => Date;
  numberPrefix: string;
}

export class CreditNoteIssuer implements VoidCreditNote {
  private readonly notes: CreditNoteStore;
  private readonly invoices: InvoiceStore;
  private readonly payments: PaymentStore;
  private readonly clock: () => Date;
  private readonly numberPrefix: string;

  constructor(deps: CreditNoteIssuerDeps) {
    ({ notes: this.notes, invoices: this.invoices, payments: this.payments, clock: this.clock, numberPrefix: this.numberPrefix } = deps);
  }

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
   * Writes a note on a locked invoice: the lines' credited amounts, the invoice's totals
   * (`lifecycle.applyCreditNote`: the pre-payment part lowers what is due; nothing left: paid),
   * the number (gap-free: rolled back with the transaction) and the events (`credit_note.created`,
   * then the transition's `invoice.update`). Answers undefined when the idempotency key is taken.
   */
  async issue(trx: Trx, ctx: Scope & { actor: string }, invoice: Invoice, n: NoteInput): Promise<{ note: CreditNote; invoice: Invoice } | undefined> {
    const now = this.clock();
    lifecycle.assertCan('credit', invoice);
    const note = await this.write(trx, ctx, invoice, n, now);
    if (!note) return undefined;
    const t = lifecycle.applyCreditNote(invoice, noteMoney(note), now);
    const saved = await this.invoices.save(trx, t.invoice);
    await announceCreditNote(trx, CREDIT_NOTE_EVENTS.created, note, ctx.actor);
    await outboxInsertMany(
      trx,
      TOPICS.billingEvents,
      t.events.map((type) => ({ key: saved.id, event: invoiceEvent(type, saved, ctx.actor) })),
    );
    return { note, invoice: saved };
  }

  /** The note's rows: its number, the note and its lines, and the lines' credited amounts; undefined when its idempotency key is taken. */
  private async write(trx: Trx, ctx: Scope, invoice: Invoice, n: NoteInput, now: Date): Promise<CreditNote | undefined> {
    // The tax its lines return (cumulative per line and rate); the caller split the total it makes.
    const taxed = noteTax(invoice, n.lines);
    if (taxed.total !== n.prePaymentAmount + n.walletAmount + n.refundAmount) {
      throw new Error(`credit note on ${invoice.id}: parts ${n.prePaymentAmount} + ${n.walletAmount} + ${n.refundAmount} are not its total ${taxed.total}`);
    }
    const number = await this.notes.nextNumber(trx, ctx);
    const note: CreditNote = {
      ...n,
      id: newId('creditNote'),
      tenantId: ctx.tenantId,
      environmentId: ctx.environmentId,
      number: creditNoteNumber(this.numberPrefix, now, number),
      invoiceId: invoice.id,
      customerId: invoice.customerId,
      currency: invoice.currency,
      amount: taxed.amount,
      taxAmount: taxed.taxAmount,
      total: taxed.total,
      status: 'issued',
      // An INVOICE_VOID note's wallet part is the void's refund: pending until that refund is done.
      refundStatus: (n.origin === 'INVOICE_VOID' ? n.walletAmount : walletCreditOf(n)) > 0 ? 'pending' : 'none',
      walletTransactionId: null,
      voidedAt: null,
      createdAt: now,
      updatedAt: now,
      lines: taxed.lines.map((l, k) => ({ id: newId('creditNoteLineItem'), position: k, ...l })),
    };
    if (!(await this.notes.insert(trx, note))) return undefined;
    await this.notes.addCredited(trx, note.lines, 1);
    return note;
  }

  /**
   * The void of a finalized invoice: a pending payment refuses it (400); else one INVOICE_VOID
   * note (reason OTHER) takes all that is still creditable: (1) what is due, to 0; (2) the wallet
   * money, which the void's wallet refund (ADR 0016) gives back, once; (3) money paid, OFFLINE
   * (it stays recorded). Nothing left to credit, or a CREDIT_PURCHASE invoice: no note. Wallet
   * money that manual notes already gave back would be refunded a second time by the wallet's
   * refund of every debit: such an invoice cannot be voided (400); its rest is credited with a
   * note instead. Answers the note's money for the void's transition (null: no note).
   */
  async onVoid(trx: Trx, invoice: Invoice, actor: string): Promise<lifecycle.NoteMoney | null> {
    const pending = await this.payments.pendingAmount(trx, invoice.id);
    if (pending > 0) {
      throw new ValidationError(`Invoice ${invoice.id} has a payment in progress: void it once the payment is done`, { field: 'status', pending_payment_amount: pending });
    }
    // A purchase of credits takes no credit notes (its void fails the pending credit instead).
    if (invoice.billingReason === 'CREDIT_PURCHASE') return null;
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
    if (amount === 0) return null;
    // The rest of each line and of its tax (the notes of a wholly credited line return all its tax).
    const split = splitAmount(noteTax(invoice, lines).total, await this.moneyOf(trx, invoice), 'OFFLINE');
    const scope = { tenantId: invoice.tenantId, environmentId: invoice.environmentId, actor };
    const noteInput: NoteInput = { reason: 'OTHER', memo: null, refund: 'OFFLINE', origin: 'INVOICE_VOID', idempotencyKey: null, requestHash: null, metadata: {}, lines, ...split };
    const note = (await this.write(trx, scope, invoice, noteInput, this.clock()))!;
    // The void announces the invoice (`invoice.update.voided`): the note only its own event.
    await announceCreditNote(trx, CREDIT_NOTE_EVENTS.created, note, actor);
    return noteMoney(note);
  }

  /** The void's wallet refund is done: the INVOICE_VOID note's wallet part with it (`credit_note.updated`). */
  async refunded(trx: Trx, invoice: Invoice): Promise<void> {
    const note = await this.notes.voidNoteOf(trx, invoice.id);
    if (!note || note.refundStatus !== 'pending') return;
    const saved = await this.notes.save(trx, { ...note, refundStatus: 'succeeded', updatedAt: this.clock() });
    await announceCreditNote(trx, CREDIT_NOTE_EVENTS.updated, saved);
  }
}

/** A note's money as its invoice takes it (`lifecycle`). */
export function noteMoney(n: Pick<CreditNote, 'lines' | 'prePaymentAmount' | 'walletAmount' | 'refundAmount'>): lifecycle.NoteMoney {
  return { lines: n.lines, prePaymentAmount: n.prePaymentAmount, postPaymentAmount: n.walletAmount + n.refundAmount };
}
