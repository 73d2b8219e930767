import { NotFoundError, ValidationError } from '@billstream/errors';
import { chargeLine, type Invoice, type InvoiceLine } from '../invoices/domain';
import { creditableOf, largestNoteWithin, noteTax, requestedLines, splitAmount } from './money';

const line = (id: string, position: number, amount: number, extra: Partial<InvoiceLine> = {}): InvoiceLine => ({
  id,
  position,
  priceId: null,
  priceType: 'FIXED',
  meterId: null,
  description: id,
  quantity: '1',
  unitAmount: '1',
  ...chargeLine(amount),
  prorationFactor: null,
  prepaidCreditsApplied: 0,
  periodStart: null,
  periodEnd: null,
  ...extra,
});
const invoiceOf = (lines: InvoiceLine[]) => ({ id: 'inv_1', lines }) as Invoice;

function thrown(f: () => unknown): { error: unknown; details: unknown } {
  try {
    f();
  } catch (error) {
    return { error, details: (error as { details?: unknown }).details };
  }
  throw new Error('did not throw');
}

describe('credit note money (docs/api/credit-notes.md)', () => {
  it('a line takes net_amount − credited_amount; a negative line nothing', () => {
    expect(creditableOf(line('a', 0, 500, { netAmount: 450, discountAmount: 50, creditedAmount: 100 }))).toBe(350);
    expect(creditableOf(line('p', 1, -200, { lineType: 'PRORATION_CREDIT', netAmount: 0 }))).toBe(0);
  });

  it('spreads an amount by what each line can take, largest remainder, in position order', () => {
    const inv = invoiceOf([line('b', 1, 1000), line('a', 0, 4900), line('p', 2, -100, { lineType: 'PRORATION_CREDIT', netAmount: 0 })]);
    expect(requestedLines(inv, { amount: 100 })).toEqual([
      { invoiceLineItemId: 'a', amount: 83 },
      { invoiceLineItemId: 'b', amount: 17 },
    ]);
    expect(requestedLines(inv, { amount: 5900 }).map((l) => l.amount)).toEqual([4900, 1000]);
    expect(thrown(() => requestedLines(inv, { amount: 5901 })).details).toMatchObject({ field: 'amount', creditable_amount: 5900 });
  });

  it('checks given lines: unknown is a 404, more than the line holds a 400 with what it can take', () => {
    const inv = invoiceOf([line('a', 0, 500, { creditedAmount: 490 })]);
    expect(requestedLines(inv, { lines: [{ invoiceLineItemId: 'a', amount: 10 }] })).toEqual([{ invoiceLineItemId: 'a', amount: 10 }]);
    const over = thrown(() => requestedLines(inv, { lines: [{ invoiceLineItemId: 'a', amount: 11 }] }));
    expect(over.error).toBeInstanceOf(ValidationError);
    expect(over.details).toMatchObject({ field: 'lines.0.amount', creditable_amount: 10 });
    const unknown = thrown(() => requestedLines(inv, { lines: [{ invoiceLineItemId: 'x', amount: 1 }] }));
    expect(unknown.error).toBeInstanceOf(NotFoundError);
    expect(unknown.details).toMatchObject({ field: 'lines.0.invoice_line_item_id' });
  });

  it('splits in order: what is due, then wallet money, then money paid as refund says', () => {
    const money = { dueLeft: 300, walletLeft: 200, paidLeft: 500 };
    expect(splitAmount(250, money, 'NONE')).toEqual({ prePaymentAmount: 250, walletAmount: 0, refundAmount: 0 });
    expect(splitAmount(450, money, 'NONE')).toEqual({ prePaymentAmount: 300, walletAmount: 150, refundAmount: 0 });
    expect(splitAmount(1000, money, 'OFFLINE')).toEqual({ prePaymentAmount: 300, walletAmount: 200, refundAmount: 500 });
    expect(thrown(() => splitAmount(501, money, 'NONE')).details).toMatchObject({ field: 'refund', refund_amount: 1 });
    expect(thrown(() => splitAmount(1001, money, 'WALLET')).details).toMatchObject({ field: 'amount', creditable_amount: 1000 });
    // Pending payments can reserve more than is left: nothing due is lowered.
    expect(splitAmount(100, { dueLeft: -50, walletLeft: 100, paidLeft: 0 }, 'NONE')).toEqual({ prePaymentAmount: 0, walletAmount: 100, refundAmount: 0 });
  });

  it('fits a note of a taxed line into what is due: the largest amount whose total (amount plus the tax it returns) fits', () => {
    const taxes = [{ taxRateId: 'txr_19', code: 'DE19', percentage: '19', taxableAmount: 10000, amount: 1900 }];
    const exclusive = invoiceOf([line('a', 0, 10000, { taxAmount: 1900, taxes, taxBehavior: 'exclusive' })]);
    // 6900 due of 11900: 5798 + round(1900 × 5798/10000) = 5798 + 1102 = 6900; 5799 would return 1102 too but total 6901.
    expect(largestNoteWithin(exclusive, 'a', 9677, 6900)).toEqual({ amount: 5798, total: 6900 });
    expect(noteTax(exclusive, [{ invoiceLineItemId: 'a', amount: 5799 }]).total).toBe(6901);
    // Enough due: the whole part; nothing due: nothing.
    expect(largestNoteWithin(exclusive, 'a', 9677, 11900)).toEqual({ amount: 9677, total: 9677 + 1839 });
    expect(largestNoteWithin(exclusive, 'a', 9677, 0)).toEqual({ amount: 0, total: 0 });
    // Cumulative over what was credited before: the rest of the tax comes with the rest of the line.
    const credited = invoiceOf([line('a', 0, 10000, { taxAmount: 1900, taxes, taxBehavior: 'exclusive', creditedAmount: 9000 })]);
    expect(largestNoteWithin(credited, 'a', 1000, 5000)).toEqual({ amount: 1000, total: 1190 });
    // An inclusive line's amount holds its tax: the note's total is its amount.
    const inclusive = invoiceOf([line('a', 0, 11900, { taxAmount: 1900, taxes, taxBehavior: 'inclusive' })]);
    expect(largestNoteWithin(inclusive, 'a', 11000, 6900)).toEqual({ amount: 6900, total: 6900 });
    // Untaxed: as before, the amount due in full.
    expect(largestNoteWithin(invoiceOf([line('a', 0, 10000)]), 'a', 9677, 6900)).toEqual({ amount: 6900, total: 6900 });
  });
});
