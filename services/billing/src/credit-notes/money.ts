import type { CreditNoteRefund } from '@billstream/contracts';
import { NotFoundError, ValidationError } from '@billstream/errors';
import { creditNoteLineTax, spreadByLargestRemainder } from '../invoice-arithmetic';
import type { Invoice } from '../invoices/domain';
import { creditableOf } from '../invoices/lifecycle';
import type { NewCreditNote } from './domain';

/** What a line can still give back (`lifecycle.creditableOf`: the invoice's owner decides it). */
export { creditableOf } from '../invoices/lifecycle';

/**
 * The lines a request takes back: as given (each at most what its line can take; an unknown
 * line is 404), or `amount` spread by what each line can take (largest remainder, ties to the
 * first line). Answers `[{invoiceLineItemId, amount}]` without zero parts, in line order.
 */
export function requestedLines(invoice: Invoice, asked: Pick<NewCreditNote, 'lines' | 'amount'>): Array<{ invoiceLineItemId: string; amount: number }> {
  const lines = [...invoice.lines].sort((a, b) => a.position - b.position);
  if (asked.lines) {
    const byId = new Map(lines.map((l) => [l.id, l]));
    return asked.lines.map((one, i) => {
      const line = byId.get(one.invoiceLineItemId);
      if (!line) {
        throw new NotFoundError(`Line ${one.invoiceLineItemId} is not a line of invoice ${invoice.id}`, {
          field: `lines.${i}.invoice_line_item_id`,
          invoice_line_item_id: one.invoiceLineItemId,
        });
      }
      const creditable = creditableOf(line);
      if (one.amount > creditable) {
        throw new ValidationError(`Line ${line.id} can take at most ${creditable} back`, { field: `lines.${i}.amount`, creditable_amount: creditable });
      }
      return { invoiceLineItemId: line.id, amount: one.amount };
    });
  }
  const amount = asked.amount!;
  const weights = lines.map(creditableOf);
  const creditable = weights.reduce((s, w) => s + w, 0);
  if (amount > creditable) throw tooMuch(creditable);
  const parts = spreadByLargestRemainder(amount, weights);
  return lines.map((l, k) => ({ invoiceLineItemId: l.id, amount: parts[k]! })).filter((p) => p.amount > 0);
}

/** What the invoice holds now, for the split of a note's amount. */
export interface InvoiceMoney {
  /** amount_remaining − what pending payments reserve. */
  dueLeft: number;
  /** Wallet money received (credits applied + CREDITS payments) not yet given back by notes. */
  walletLeft: number;
  /** Money paid (OFFLINE payments) not yet refunded by notes. */
  paidLeft: number;
}

export interface NoteSplit {
  prePaymentAmount: number;
  walletAmount: number;
  refundAmount: number;
}

/**
 * The note's amount in the order of docs/api/credit-notes.md: (1) what is still due, (2) wallet money, (3) money
 * paid, refunded as `refund` says (NONE: 400 `refund` when money would have to go back). More
 * than the invoice can take: 400 `amount` with `creditable_amount`.
 */
export function splitAmount(amount: number, money: InvoiceMoney, refund: CreditNoteRefund): NoteSplit {
  const dueLeft = Math.max(0, money.dueLeft);
  const creditable = dueLeft + money.walletLeft + money.paidLeft;
  if (amount > creditable) throw tooMuch(creditable);
  const prePaymentAmount = Math.min(amount, dueLeft);
  const walletAmount = Math.min(amount - prePaymentAmount, money.walletLeft);
  const refundAmount = amount - prePaymentAmount - walletAmount;
  if (refundAmount > 0 && refund === 'NONE') {
    throw new ValidationError(`${refundAmount} of this note is money paid: say how it is refunded (WALLET or OFFLINE)`, {
      field: 'refund',
      refund_amount: refundAmount,
    });
  }
  return { prePaymentAmount, walletAmount, refundAmount };
}

function tooMuch(creditable: number): ValidationError {
  return new ValidationError(`The invoice can take at most ${creditable} back`, { field: 'amount', creditable_amount: creditable });
}

/** A note's lines with the tax each returns, and the note's sums (docs/api/taxes.md#arithmetic). */
export interface NoteTax {
  lines: Array<{ invoiceLineItemId: string; amount: number; taxAmount: number; taxes: Array<{ taxRateId: string; amount: number }> }>;
  amount: number;
  taxAmount: number;
  /** amount + the exclusive lines' tax: what the money order splits. */
  total: number;
}

/**
 * The tax the lines of a note return, through the arithmetic's `creditNoteLineTax`: per rate,
 * cumulative over what notes and proration credits already took of the line (its
 * `credited_amount`), so a line's notes return exactly its tax once it is wholly credited, never
 * more. An untaxed line returns none.
 */
export function noteTax(invoice: Invoice, lines: ReadonlyArray<{ invoiceLineItemId: string; amount: number }>): NoteTax {
  const byId = new Map(invoice.lines.map((l) => [l.id, l]));
  const out = lines.map((one) => {
    const line = byId.get(one.invoiceLineItemId);
    if (!line) throw new Error(`credit note line of ${one.invoiceLineItemId}: not a line of invoice ${invoice.id}`);
    const billed = { id: line.id, behavior: line.taxBehavior ?? 'exclusive', taxableAmount: 0, taxAmount: line.taxAmount ?? 0, taxes: line.taxes ?? [] } as const;
    const t = creditNoteLineTax({ ...billed, taxes: [...billed.taxes] }, line.netAmount, line.creditedAmount, one.amount);
    return { invoiceLineItemId: one.invoiceLineItemId, amount: one.amount, taxAmount: t.taxAmount, taxes: t.taxes, total: t.total };
  });
  return {
    lines: out.map(({ total: _t, ...l }) => l),
    amount: out.reduce((s, l) => s + l.amount, 0),
    taxAmount: out.reduce((s, l) => s + l.taxAmount, 0),
    total: out.reduce((s, l) => s + l.total, 0),
  };
}

/**
 * The largest part of one line, at most `upTo` (in the line's terms), whose note fits `limit`
 * of money: max L with noteTax(L).total ≤ limit (docs/api/taxes.md#arithmetic). The total grows
 * with L (an exclusive line's tax is returned on top, cumulatively), so a binary search finds it.
 * A plan change lowers what is due on a partly paid invoice by such a note (ADR 0056): what is due
 * holds the tax, so the note's amount is less than it when the line bears exclusive tax.
 */
export function largestNoteWithin(invoice: Invoice, lineId: string, upTo: number, limit: number): { amount: number; total: number } {
  const totalOf = (amount: number) => (amount === 0 ? 0 : noteTax(invoice, [{ invoiceLineItemId: lineId, amount }]).total);
  if (upTo <= 0 || limit <= 0) return { amount: 0, total: 0 };
  const whole = totalOf(upTo);
  if (whole <= limit) return { amount: upTo, total: whole };
  let lo = 0; // fits
  let hi = upTo; // does not fit
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (totalOf(mid) <= limit) lo = mid;
    else hi = mid;
  }
  return { amount: lo, total: totalOf(lo) };
}
