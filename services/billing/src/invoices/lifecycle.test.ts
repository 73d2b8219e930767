import { ValidationError } from '@billstream/errors';
import { draftOf } from '../testing/invoice-fixtures';
import { priceInvoice, type Invoice } from './domain';
import * as lifecycle from './lifecycle';

const NOW = new Date('2026-02-01T00:00:00Z');

/** A draft of 1000 + 500 finalized with `credit` of wallet credits on the first line. */
function finalized(credit = 0, postpaid = 0): Invoice {
  const allocated = lifecycle.allocate(draftOf([1000, 500]), new Map([['line_0', credit]]), postpaid).invoice;
  return lifecycle.finalize(allocated, { invoiceNumber: 'INV-202602-00001', now: NOW }).invoice;
}

function refusal(f: () => unknown): ValidationError {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return err as ValidationError;
  }
  throw new Error('not refused');
}

describe('invoice lifecycle (ADR 0062)', () => {
  it('allocates credits and a postpaid payment on a draft, still a draft with no event', () => {
    const t = lifecycle.allocate(draftOf([1000, 500]), new Map([['line_0', 300]]), 200);
    expect(t.events).toEqual([]);
    expect(t.invoice).toMatchObject({ status: 'draft', totalPrepaidCreditsApplied: 300, total: 1200, amountDue: 1200, amountPaid: 200, amountRemaining: 1000, paymentStatus: 'pending' });
    expect(() => lifecycle.allocate(draftOf([1000]), new Map([['line_0', 1001]]), 0)).toThrow('applies 1001 to line line_0');
  });

  it('finalizes a draft: finalized with money remaining, paid with none; the payment event only when a wallet paid', () => {
    const open = lifecycle.finalize(lifecycle.allocate(draftOf([1000]), new Map(), 0).invoice, { invoiceNumber: 'N-1', now: NOW });
    expect(open.events).toEqual(['invoice.update.finalized']);
    expect(open.invoice).toMatchObject({ status: 'finalized', invoiceNumber: 'N-1', finalizedAt: NOW, dueDate: new Date(NOW.getTime() + 30 * 86_400_000), amountRemaining: 1000 });
    const paid = lifecycle.finalize(lifecycle.allocate(draftOf([1000]), new Map([['line_0', 400]]), 600).invoice, { invoiceNumber: 'N-2', now: NOW });
    expect(paid.events).toEqual(['invoice.update.finalized', 'invoice.update.payment']);
    expect(paid.invoice).toMatchObject({ status: 'paid', paymentStatus: 'succeeded', amountRemaining: 0 });
    const nothing = lifecycle.finalize(lifecycle.allocate(draftOf([0]), new Map(), 0).invoice, { invoiceNumber: 'N-3', now: NOW });
    expect(nothing.invoice.status).toBe('paid');
  });

  it('makes a new draft: its status and money from the arithmetic, whatever the maker wrote, and the drafted event', () => {
    const made = draftOf([1000, 500]);
    const handWritten: Invoice = { ...made, total: 9999, amountDue: 1, amountPaid: 7, amountRemaining: 3, totalPrepaidCreditsApplied: 5, prePaymentCreditNotesAmount: 2, postPaymentCreditNotesAmount: 4, paymentStatus: 'succeeded' };
    const t = lifecycle.draft({ ...handWritten, invoiceNumber: 'N-9', dueDate: NOW, overdue: true, finalizedAt: NOW, refundState: 'pending', settleState: 'done' });
    expect(t.events).toEqual(['invoice.create.drafted']);
    expect(t.invoice).toMatchObject({
      status: 'draft',
      paymentStatus: 'pending',
      subtotal: 1500,
      totalDiscount: 0,
      excessCredit: 0,
      totalPrepaidCreditsApplied: 0,
      total: 1500,
      prePaymentCreditNotesAmount: 0,
      postPaymentCreditNotesAmount: 0,
      amountDue: 1500,
      amountPaid: 0,
      amountRemaining: 1500,
      invoiceNumber: null,
      dueDate: null,
      overdue: false,
      finalizedAt: null,
      voidedAt: null,
      refundState: null,
      settleState: null,
    });
    // What the maker decided stays: who, why, which period, when it may be finalized, its lines.
    expect(t.invoice).toMatchObject({ id: made.id, customerId: made.customerId, billingReason: made.billingReason, finalizeAfter: made.finalizeAfter, version: 1 });
    expect(t.invoice.lines).toEqual(made.lines);
    // The new draft finalizes like any other.
    const finalizedDraft = lifecycle.finalize(lifecycle.allocate(t.invoice, new Map(), 0).invoice, { invoiceNumber: 'N-1', now: NOW });
    expect(finalizedDraft.invoice).toMatchObject({ status: 'finalized', amountRemaining: 1500 });
  });

  it('makes a new draft from the discounted pricing: lines, discounts and totals of the arithmetic', () => {
    const made = draftOf([1000, 500]);
    const priced = priceInvoice(made.lines, [{ discountId: 'disc_1', kind: 'PERCENTAGE', percent: '10', appliesTo: ['line_0', 'line_1'] }]);
    const t = lifecycle.draft(made, priced);
    expect(t.invoice).toMatchObject({ status: 'draft', subtotal: 1500, totalDiscount: 150, total: 1350, amountDue: 1350, amountRemaining: 1350 });
    expect(t.invoice.discounts).toEqual(priced.discounts);
    expect(t.invoice.lines.map((l) => l.netAmount)).toEqual([900, 450]);
  });

  it('refuses a new invoice that is not a draft, a new line with credits, and totals that would be negative', () => {
    expect(() => lifecycle.draft(finalized())).toThrow('a new invoice is a draft, not finalized');
    const made = draftOf([1000]);
    expect(() => lifecycle.draft({ ...made, lines: made.lines.map((l) => ({ ...l, prepaidCreditsApplied: 100 })) })).toThrow('new line line_0 has credits applied or credited');
    expect(() => lifecycle.draft({ ...made, lines: made.lines.map((l) => ({ ...l, creditedAmount: 1 })) })).toThrow('new line line_0 has credits applied or credited');
    expect(() => lifecycle.draft(made, { ...made, totalDiscount: 1001 })).toThrow('invoice totals would be negative');
  });

  it('reprices a draft with totals from the arithmetic, frozen', () => {
    const draft = draftOf([1000]);
    const priced = draftOf([700, 100]);
    const t = lifecycle.reprice(draft, priced, NOW);
    expect(t.invoice).toMatchObject({ status: 'draft', subtotal: 800, total: 800, amountDue: 800, amountRemaining: 800, frozenAt: NOW });
    expect(t.events).toEqual([]);
  });

  it('applies payments: partial stays finalized, the rest makes it paid; more than remains is refused', () => {
    const i = finalized();
    const part = lifecycle.applyPayment(i, 500, NOW);
    expect(part.invoice).toMatchObject({ status: 'finalized', amountPaid: 500, amountRemaining: 1000, paymentStatus: 'partially_paid' });
    expect(part.events).toEqual(['invoice.update.payment']);
    const rest = lifecycle.applyPayment(part.invoice, 1000, NOW);
    expect(rest.invoice).toMatchObject({ status: 'paid', amountRemaining: 0, paymentStatus: 'succeeded' });
    expect(refusal(() => lifecycle.applyPayment(i, 1501, NOW)).details).toMatchObject({ field: 'amount', amount_remaining: 1500 });
    expect(refusal(() => lifecycle.applyPayment(i, 0, NOW)).details).toMatchObject({ field: 'amount' });
  });

  it('applies and removes credit notes: a pre-payment note of what remains makes it paid; its void makes it finalized again', () => {
    const i = finalized();
    const note = { lines: [{ invoiceLineItemId: 'line_0', amount: 1000 }, { invoiceLineItemId: 'line_1', amount: 500 }], prePaymentAmount: 1500, postPaymentAmount: 0 };
    const credited = lifecycle.applyCreditNote(i, note, NOW);
    expect(credited.events).toEqual(['invoice.update']);
    expect(credited.invoice).toMatchObject({ status: 'paid', prePaymentCreditNotesAmount: 1500, amountDue: 0, amountRemaining: 0, paymentStatus: 'succeeded' });
    expect(credited.invoice.lines.map((l) => l.creditedAmount)).toEqual([1000, 500]);
    expect(lifecycle.availableActions(credited.invoice)).toEqual([]);
    const removed = lifecycle.removeCreditNote(credited.invoice, note, NOW);
    expect(removed.invoice).toMatchObject({ status: 'finalized', prePaymentCreditNotesAmount: 0, amountDue: 1500, amountRemaining: 1500, paymentStatus: 'pending' });
    expect(removed.invoice.lines.map((l) => l.creditedAmount)).toEqual([0, 0]);
    // Money paid given back: post-payment, the invoice stays paid.
    const paid = lifecycle.applyPayment(i, 1500, NOW).invoice;
    const back = lifecycle.applyCreditNote(paid, { lines: [{ invoiceLineItemId: 'line_0', amount: 200 }], prePaymentAmount: 0, postPaymentAmount: 200 }, NOW);
    expect(back.invoice).toMatchObject({ status: 'paid', postPaymentCreditNotesAmount: 200, amountDue: 1500, amountRemaining: 0 });
    expect(() => lifecycle.applyCreditNote(i, { lines: [{ invoiceLineItemId: 'line_1', amount: 501 }], prePaymentAmount: 501, postPaymentAmount: 0 }, NOW)).toThrow('cannot take 501');
    expect(() => lifecycle.removeCreditNote(back.invoice, { lines: [{ invoiceLineItemId: 'line_0', amount: 200 }], prePaymentAmount: 0, postPaymentAmount: 200 }, NOW)).toThrow('gave money back');
  });

  it('voids a draft or a finalized invoice (with its void note), refunds once, and marks overdue once', () => {
    const d = lifecycle.voidInvoice(draftOf([1000]), NOW);
    expect(d.events).toEqual(['invoice.update.voided']);
    expect(d.invoice).toMatchObject({ status: 'voided', voidedAt: NOW, refundState: 'pending' });
    const f = finalized(300);
    const v = lifecycle.voidInvoice(f, NOW, { lines: [{ invoiceLineItemId: 'line_0', amount: 1000 }, { invoiceLineItemId: 'line_1', amount: 500 }], prePaymentAmount: 1200, postPaymentAmount: 300 });
    expect(v.invoice).toMatchObject({ status: 'voided', amountDue: 0, amountRemaining: 0, postPaymentCreditNotesAmount: 300 });
    const done = lifecycle.refunded(v.invoice, NOW);
    expect(done.invoice.refundState).toBe('done');
    expect(() => lifecycle.refunded(done.invoice, NOW)).toThrow('no refund pending');
    expect(() => lifecycle.voidInvoice(draftOf([1]), NOW, { lines: [], prePaymentAmount: 0, postPaymentAmount: 0 })).toThrow("only a finalized invoice's void");
    const due = f.dueDate!;
    expect(lifecycle.isOverdue(f, new Date(due.getTime() - 1))).toBe(false);
    const o = lifecycle.markOverdue(f, due);
    expect(o.events).toEqual(['invoice.payment.overdue']);
    expect(o.invoice.overdue).toBe(true);
    expect(() => lifecycle.markOverdue(o.invoice, due)).toThrow('not overdue');
    expect(() => lifecycle.markOverdue(draftOf([1]), due)).toThrow('not overdue');
  });

  it('lists the actions of each status and refuses every other with its 400', () => {
    const draft = draftOf([1000]);
    const open = finalized();
    const paid = lifecycle.applyPayment(open, 1500, NOW).invoice;
    const voided = lifecycle.voidInvoice(open, NOW).invoice;
    const topup = finalized(0, 0);
    expect(lifecycle.availableActions(draft)).toEqual(['finalize', 'void']);
    expect(lifecycle.availableActions(open)).toEqual(['pay', 'credit', 'void']);
    expect(lifecycle.availableActions(paid)).toEqual(['credit']);
    expect(lifecycle.availableActions(voided)).toEqual([]);
    expect(lifecycle.availableActions({ ...topup, billingReason: 'CREDIT_PURCHASE' })).toEqual(['pay', 'void']);
    expect(refusal(() => lifecycle.finalize(open, { invoiceNumber: 'x', now: NOW })).message).toBe('Cannot finalize an invoice that is finalized');
    expect(refusal(() => lifecycle.reprice(paid, draft, NOW)).details).toMatchObject({ field: 'status', status: 'paid' });
    expect(refusal(() => lifecycle.allocate(voided, new Map(), 0)).details).toMatchObject({ status: 'voided' });
    expect(refusal(() => lifecycle.applyPayment(draft, 1, NOW)).message).toBe('Invoice inv_1 is draft: only a finalized invoice takes payments');
    expect(refusal(() => lifecycle.applyPayment(paid, 1, NOW)).details).toMatchObject({ field: 'invoice_id', status: 'paid' });
    expect(refusal(() => lifecycle.applyCreditNote(draft, { lines: [], prePaymentAmount: 0, postPaymentAmount: 0 }, NOW)).details).toMatchObject({ field: 'invoice_id', status: 'draft' });
    expect(refusal(() => lifecycle.applyCreditNote(voided, { lines: [], prePaymentAmount: 0, postPaymentAmount: 0 }, NOW)).details).toMatchObject({ status: 'voided' });
    expect(refusal(() => lifecycle.assertCan('credit', { ...open, billingReason: 'CREDIT_PURCHASE' })).details).toMatchObject({ billing_reason: 'CREDIT_PURCHASE' });
    expect(refusal(() => lifecycle.removeCreditNote(draft, { lines: [], prePaymentAmount: 0, postPaymentAmount: 0 }, NOW)).details).toMatchObject({ field: 'status', invoice_status: 'draft' });
    expect(refusal(() => lifecycle.voidInvoice(paid, NOW)).message).toBe('Cannot void an invoice that is paid');
    expect(refusal(() => lifecycle.voidInvoice(voided, NOW)).details).toMatchObject({ field: 'status', status: 'voided' });
  });

  it('lists no credit when nothing is left to credit', () => {
    const open = finalized();
    const all = lifecycle.applyCreditNote(open, { lines: [{ invoiceLineItemId: 'line_0', amount: 1000 }, { invoiceLineItemId: 'line_1', amount: 500 }], prePaymentAmount: 1000, postPaymentAmount: 0 }, NOW).invoice;
    expect(all.status).toBe('finalized');
    expect(lifecycle.availableActions(all)).toEqual(['pay', 'void']);
  });

  it('keeps the table: no transition moves a status where the table does not let it', () => {
    expect(lifecycle.STATUS_TRANSITIONS).toEqual({ draft: ['draft', 'finalized', 'paid', 'voided'], finalized: ['finalized', 'paid', 'voided'], paid: ['paid', 'finalized'], voided: ['voided'] });
  });
});
