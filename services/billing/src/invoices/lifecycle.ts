/**
 * The one owner of an invoice's status and money fields (ADR 0062): pure transitions, each
 * answering the new invoice and the events it emits, with totals from the invoice arithmetic's
 * `invoiceTotals` only (ADR 0038). The store saves only what these return (`OwnedInvoice`).
 */
import type { InvoiceAction, InvoiceStatus } from '@billstream/contracts';
import { INVOICE_ACTIONS } from '@billstream/contracts';
import { ValidationError } from '@billstream/errors';
import { invoiceTotals, type DiscountAmount, type Settlement } from '../invoice-arithmetic';
import { INVOICE_EVENTS, owedOf, paymentStatusOf, settleInvoice, type Invoice, type InvoiceEventType, type InvoiceLine } from './domain';
import { own, type OwnedInvoice } from './owned';

export type { OwnedInvoice } from './owned';

export interface Transition {
  invoice: OwnedInvoice;
  /** The invoice events it emits, in order, written by the caller with the invoice as saved. */
  events: InvoiceEventType[];
}

const DAY_MS = 86_400_000;

/**
 * Which status may become which (docs/api/billing.md#invoice-lifecycle). `paid` is reached only
 * from `draft` (finalized with nothing remaining) and `finalized` (a payment or a pre-payment
 * credit note took what remained), and left only to `finalized` (a voided credit note made money
 * due again). `voided` is final; a paid invoice is never voided.
 */
export const STATUS_TRANSITIONS: Readonly<Record<InvoiceStatus, readonly InvoiceStatus[]>> = {
  draft: ['draft', 'finalized', 'paid', 'voided'],
  finalized: ['finalized', 'paid', 'voided'],
  paid: ['paid', 'finalized'],
  voided: ['voided'],
};

/** What a line can still give back: `net_amount − credited_amount`; a negative line nothing. */
export function creditableOf(l: InvoiceLine): number {
  if (l.lineType === 'PRORATION_CREDIT' || l.lineType === 'THRESHOLD_DEDUCTION' || l.amount < 0) return 0;
  return Math.max(0, l.netAmount - l.creditedAmount);
}

// The refusals, one per action: the 400 the API answers when the action is not available.
function refuseFinalize(i: Invoice): ValidationError | undefined {
  if (i.status !== 'draft') return new ValidationError(`Cannot finalize an invoice that is ${i.status}`, { field: 'status', status: i.status, invoice_id: i.id });
  return undefined;
}
function refusePay(i: Invoice): ValidationError | undefined {
  if (i.status !== 'finalized') {
    return new ValidationError(`Invoice ${i.id} is ${i.status}: only a finalized invoice takes payments`, { field: 'invoice_id', status: i.status });
  }
  return undefined;
}
function refuseCredit(i: Invoice): ValidationError | undefined {
  if (i.billingReason === 'CREDIT_PURCHASE') {
    return new ValidationError(`Invoice ${i.id} is a purchase of credits: it takes no credit notes`, { field: 'invoice_id', billing_reason: i.billingReason });
  }
  if (i.status !== 'finalized' && i.status !== 'paid') {
    return new ValidationError(`Invoice ${i.id} is ${i.status}: only a finalized or paid invoice takes credit notes`, { field: 'invoice_id', status: i.status });
  }
  return undefined;
}
function refuseVoid(i: Invoice): ValidationError | undefined {
  if (i.status !== 'draft' && i.status !== 'finalized') {
    return new ValidationError(`Cannot void an invoice that is ${i.status}`, { field: 'status', status: i.status, invoice_id: i.id });
  }
  return undefined;
}

const REFUSALS: Record<InvoiceAction, (i: Invoice) => ValidationError | undefined> = {
  finalize: refuseFinalize,
  pay: refusePay,
  credit: (i) => refuseCredit(i) ?? (i.lines.some((l) => creditableOf(l) > 0) ? undefined : new ValidationError(`The invoice can take at most 0 back`, { field: 'amount', creditable_amount: 0 })),
  void: refuseVoid,
};

/** The action's 400 when the invoice's status does not take it now (a credit's amount is the credit-note split's to check). */
export function refusalOf(action: InvoiceAction, i: Invoice): ValidationError | undefined {
  return action === 'credit' ? refuseCredit(i) : REFUSALS[action](i);
}

/** Throws the action's 400 when the invoice does not take it now. */
export function assertCan(action: InvoiceAction, i: Invoice): void {
  const refused = refusalOf(action, i);
  if (refused) throw refused;
}

export const canFinalize = (i: Invoice): boolean => !REFUSALS.finalize(i);
export const canPay = (i: Invoice): boolean => !REFUSALS.pay(i);
export const canCredit = (i: Invoice): boolean => !REFUSALS.credit(i);
export const canVoid = (i: Invoice): boolean => !REFUSALS.void(i);

/** The invoice view's `available_actions`: the actions whose transition the invoice takes now, in a fixed order. */
export function availableActions(i: Invoice): InvoiceAction[] {
  return INVOICE_ACTIONS.filter((a) => !REFUSALS[a](i));
}

/** What was applied or paid against the invoice (the arithmetic's settlement), `over` replacing some. */
function settlementOf(i: Invoice, over: Partial<Settlement> = {}): Settlement {
  return { totalPrepaidCreditsApplied: i.totalPrepaidCreditsApplied, prePaymentCreditNotesAmount: i.prePaymentCreditNotesAmount, amountPaid: i.amountPaid, ...over };
}

/** The status a finalized (or paid) invoice has for its totals: paid exactly when nothing remains. */
function settledStatus(i: Invoice, amountRemaining: number): InvoiceStatus {
  if (i.status !== 'finalized' && i.status !== 'paid') return i.status;
  return amountRemaining === 0 ? 'paid' : 'finalized';
}

/** The one place an invoice becomes its next value: the status change checked against the table. */
function moved(before: Invoice, after: Invoice, events: InvoiceEventType[]): Transition {
  if (!STATUS_TRANSITIONS[before.status].includes(after.status)) throw new Error(`invoice ${before.id}: ${before.status} -> ${after.status} is no transition`);
  // A draft's payment status stays as made (pending): it follows the money from finalization on.
  const paymentStatus = after.status === 'draft' ? after.paymentStatus : paymentStatusOf(after.amountDue, after.amountPaid);
  return { invoice: own({ ...after, paymentStatus }), events };
}

/** What the arithmetic prices of a draft (`priceInvoice`): its lines with their offsets, discounts and net amounts, and the sums before any credit. */
export type DraftPricing = Pick<Invoice, 'lines' | 'discounts' | 'subtotal' | 'totalDiscount' | 'excessCredit' | TaxFields>;

/** Step (6)'s fields of an invoice (docs/api/taxes.md#invoices-bearing-tax): set by `taxed`, carried by `draft` and `reprice`. */
type TaxFields = 'totalTax' | 'exclusiveTax' | 'taxBreakdown' | 'reverseCharge' | 'taxExemptReason' | 'buyerTax' | 'taxStatus' | 'taxAttempts';
const taxFieldsOf = (p: Partial<Pick<Invoice, TaxFields>>): Pick<Invoice, TaxFields> => ({
  totalTax: p.totalTax ?? 0,
  exclusiveTax: p.exclusiveTax ?? 0,
  taxBreakdown: p.taxBreakdown ?? [],
  reverseCharge: p.reverseCharge ?? false,
  taxExemptReason: p.taxExemptReason ?? null,
  buyerTax: p.buyerTax ?? null,
  taxStatus: p.taxStatus ?? 'ok',
  taxAttempts: p.taxAttempts ?? 0,
});

/**
 * A new draft, the one way an invoice begins: the maker's terms (who, which subscription and
 * period, why, when it may be finalized) and the arithmetic's pricing, with a draft's status and
 * money made here: `draft`, payment `pending`, nothing applied, credited, paid or numbered yet,
 * totals from `invoiceTotals`. The store inserts only what this returns. Emits
 * `invoice.create.drafted`.
 */
export function draft(made: Invoice, priced: DraftPricing = made): Transition {
  if (made.status !== 'draft') throw new Error(`invoice ${made.id}: a new invoice is a draft, not ${made.status}`);
  for (const l of priced.lines) {
    if (l.prepaidCreditsApplied !== 0 || l.creditedAmount !== 0) throw new Error(`invoice ${made.id}: new line ${l.id} has credits applied or credited`);
  }
  const totals = invoiceTotals(priced, { totalPrepaidCreditsApplied: 0, prePaymentCreditNotesAmount: 0, amountPaid: 0 });
  return moved(
    made,
    {
      ...made,
      lines: priced.lines,
      discounts: priced.discounts as DiscountAmount[],
      ...taxFieldsOf(priced),
      ...totals,
      postPaymentCreditNotesAmount: 0,
      status: 'draft',
      paymentStatus: 'pending',
      dueDate: null,
      overdue: false,
      invoiceNumber: null,
      hostedInvoiceUrl: null,
      invoicePdfUrl: null,
      finalizedAt: null,
      voidedAt: null,
      refundState: null,
      settleState: null,
    },
    [INVOICE_EVENTS.drafted],
  );
}

/**
 * A draft priced again (its usage read again before finalization): lines, discounts and totals
 * from the arithmetic, frozen at `now`. Still a draft; no event.
 */
export function reprice(draft: Invoice, priced: DraftPricing, now: Date): Transition {
  assertCan('finalize', draft);
  const totals = invoiceTotals(priced, { totalPrepaidCreditsApplied: 0, prePaymentCreditNotesAmount: 0, amountPaid: 0 });
  return moved(draft, { ...draft, lines: priced.lines, discounts: priced.discounts as DiscountAmount[], ...taxFieldsOf(priced), ...totals, frozenAt: now, updatedAt: now }, []);
}

/**
 * A draft taxed again at finalization (docs/api/taxes.md#invoices-bearing-tax): its lines as
 * they are, their tax and the invoice's sums from step (6) now, totals from the arithmetic. Its
 * usage stays as read (not a reprice: `frozenAt` is kept). Still a draft; no event.
 */
export function retax(draft: Invoice, taxed: DraftPricing, now: Date): Transition {
  assertCan('finalize', draft);
  const totals = invoiceTotals(taxed, { totalPrepaidCreditsApplied: 0, prePaymentCreditNotesAmount: 0, amountPaid: 0 });
  return moved(draft, { ...draft, lines: taxed.lines, ...taxFieldsOf(taxed), ...totals, updatedAt: now }, []);
}

/**
 * The wallets' allocation recorded on a draft before it is numbered: each line's credits (at
 * most what it owes: its net amount and exclusive tax) and what a postpaid wallet paid. Still a draft; no event.
 */
export function allocate(draft: Invoice, credits: ReadonlyMap<string, number>, postpaidAmount: number): Transition {
  assertCan('finalize', draft);
  const lines = draft.lines.map((l) => {
    const credit = credits.get(l.id) ?? 0;
    if (credit < 0 || credit > owedOf(l)) throw new Error(`allocation of ${draft.id} applies ${credit} to line ${l.id} owing ${owedOf(l)}`);
    return { ...l, prepaidCreditsApplied: credit };
  });
  return moved(draft, { ...draft, lines, ...settleInvoice(draft, lines, postpaidAmount) }, []);
}

/** The due date a draft finalized at `now` gets (its payment terms after). */
export function dueDateOf(draft: Pick<Invoice, 'paymentTermsDays'>, now: Date): Date {
  return new Date(now.getTime() + draft.paymentTermsDays * DAY_MS);
}

/**
 * An allocated draft finalized with its number at `now`: `paid` when nothing remains, else
 * `finalized`. Emits `invoice.update.finalized`, then `invoice.update.payment` when a postpaid
 * wallet paid part of it (the payment's own events go between the two).
 */
export function finalize(allocated: Invoice, f: { invoiceNumber: string; now: Date; links?: { hostedInvoiceUrl: string; invoicePdfUrl: string } }): Transition {
  assertCan('finalize', allocated);
  const totals = invoiceTotals(allocated, settlementOf(allocated));
  const events: InvoiceEventType[] = [INVOICE_EVENTS.finalized, ...(totals.amountPaid > 0 ? [INVOICE_EVENTS.payment] : [])];
  return moved(
    allocated,
    {
      ...allocated,
      ...totals,
      ...f.links,
      invoiceNumber: f.invoiceNumber,
      status: totals.amountRemaining === 0 ? 'paid' : 'finalized',
      finalizedAt: f.now,
      dueDate: dueDateOf(allocated, f.now),
      updatedAt: f.now,
    },
    events,
  );
}

/** A succeeded payment of `amount` (at most what remains) on a finalized invoice: `paid` when nothing remains. Emits `invoice.update.payment`. */
export function applyPayment(i: Invoice, amount: number, now: Date): Transition {
  assertCan('pay', i);
  if (!Number.isSafeInteger(amount) || amount <= 0 || amount > i.amountRemaining) {
    throw new ValidationError(`The payment is more than the invoice's amount remaining (${i.amountRemaining})`, { field: 'amount', amount_remaining: i.amountRemaining });
  }
  const totals = invoiceTotals(i, settlementOf(i, { amountPaid: i.amountPaid + amount }));
  return moved(i, { ...i, ...totals, status: settledStatus(i, totals.amountRemaining), updatedAt: now }, [INVOICE_EVENTS.payment]);
}

/** A credit note's money as the invoice takes it: its lines' parts, the pre-payment part (lowers what is due) and the rest (money given back). */
export interface NoteMoney {
  lines: ReadonlyArray<{ invoiceLineItemId: string; amount: number }>;
  prePaymentAmount: number;
  /** Wallet and refund parts. */
  postPaymentAmount: number;
}

function withNote(i: Invoice, note: NoteMoney, sign: 1 | -1): Invoice {
  const byLine = new Map<string, number>();
  for (const l of note.lines) byLine.set(l.invoiceLineItemId, (byLine.get(l.invoiceLineItemId) ?? 0) + l.amount);
  const lines = i.lines.map((l) => {
    const part = byLine.get(l.id) ?? 0;
    if (part === 0) return l;
    const creditedAmount = l.creditedAmount + sign * part;
    if (creditedAmount < 0 || (sign === 1 && part > creditableOf(l))) throw new Error(`invoice ${i.id}: line ${l.id} cannot take ${sign * part} credited`);
    return { ...l, creditedAmount };
  });
  const totals = invoiceTotals(i, settlementOf(i, { prePaymentCreditNotesAmount: i.prePaymentCreditNotesAmount + sign * note.prePaymentAmount }));
  const postPaymentCreditNotesAmount = i.postPaymentCreditNotesAmount + sign * note.postPaymentAmount;
  if (postPaymentCreditNotesAmount < 0) throw new Error(`invoice ${i.id}: post-payment credit notes would be ${postPaymentCreditNotesAmount}`);
  return { ...i, ...totals, lines, postPaymentCreditNotesAmount };
}

/** A credit note issued on a finalized or paid invoice: what it takes of lines, due and money paid; `paid` when nothing remains. Emits `invoice.update`. */
export function applyCreditNote(i: Invoice, note: NoteMoney, now: Date): Transition {
  const refused = refuseCredit(i);
  if (refused) throw refused;
  const after = withNote(i, note, 1);
  return moved(i, { ...after, status: settledStatus(i, after.amountRemaining), updatedAt: now }, [INVOICE_EVENTS.updated]);
}

/** A credit note voided (it gave no money back): what it took off is due again (`paid` → `finalized`). Emits `invoice.update`. */
export function removeCreditNote(i: Invoice, note: NoteMoney, now: Date): Transition {
  if (i.status !== 'finalized' && i.status !== 'paid') {
    throw new ValidationError(`Invoice ${i.id} is ${i.status}: its credit notes stay as they are`, { field: 'status', invoice_status: i.status });
  }
  if (note.postPaymentAmount !== 0) throw new Error(`invoice ${i.id}: a credit note that gave money back is not removed`);
  const after = withNote(i, note, -1);
  return moved(i, { ...after, status: settledStatus(i, after.amountRemaining), updatedAt: now }, [INVOICE_EVENTS.updated]);
}

/**
 * A draft or finalized invoice voided at `now`, with the money of its `INVOICE_VOID` credit note
 * (a finalized one's, when it had something creditable): its credits are to be refunded
 * (`refund_state: pending`). Emits `invoice.update.voided`.
 */
export function voidInvoice(i: Invoice, now: Date, voidNote?: NoteMoney | null): Transition {
  assertCan('void', i);
  if (voidNote && i.status !== 'finalized') throw new Error(`invoice ${i.id}: only a finalized invoice's void has a credit note`);
  const noted = voidNote ? withNote(i, voidNote, 1) : i;
  return moved(i, { ...noted, status: 'voided', voidedAt: now, refundState: 'pending', updatedAt: now }, [INVOICE_EVENTS.voided]);
}

/** The void's wallet refund is done. No event. */
export function refunded(i: Invoice, now: Date): Transition {
  if (i.status !== 'voided' || i.refundState !== 'pending') throw new Error(`invoice ${i.id} has no refund pending (${i.status}, ${i.refundState})`);
  return moved(i, { ...i, refundState: 'done', updatedAt: now }, []);
}

/** Whether a finalized invoice is past its due date and not marked overdue yet. */
export function isOverdue(i: Invoice, now: Date): boolean {
  return i.status === 'finalized' && !i.overdue && i.dueDate !== null && i.dueDate <= now;
}

/** A finalized invoice past its due date marked overdue, once. Emits `invoice.payment.overdue`. */
export function markOverdue(i: Invoice, now: Date): Transition {
  if (!isOverdue(i, now)) throw new Error(`invoice ${i.id} is not overdue at ${now.toISOString()}`);
  return moved(i, { ...i, overdue: true, updatedAt: now }, [INVOICE_EVENTS.overdue]);
}
