import { ValidationError } from '@billstream/errors';
import { ArithmeticInputError, invoiceArithmetic, invoiceTotals, spreadByLargestRemainder, type ArithmeticLine, type DiscountInput } from '.';

/** Worked examples of docs/api/billing.md#invoice-arithmetic (ADR 0038); the identities over random invoices are in arithmetic.property.test.ts. */
let n = 0;
const line = (amount: number, extra: Partial<ArithmeticLine> = {}): ArithmeticLine => {
  n += 1;
  return { id: `l${n}`, position: n, lineType: 'CHARGE', priceId: 'price_a', amount, ...extra };
};
const pct = (percent: string, appliesTo: ArithmeticLine[], discountId = 'd1'): DiscountInput => ({ discountId, kind: 'PERCENTAGE', percent, appliesTo: appliesTo.map((l) => l.id) });
const fixed = (remaining: number, appliesTo: ArithmeticLine[], discountId = 'd1'): DiscountInput => ({ discountId, kind: 'FIXED_AMOUNT', remaining, appliesTo: appliesTo.map((l) => l.id) });
const nets = (r: ReturnType<typeof invoiceArithmetic>) => r.lines.map((l) => [l.offsetAmount, l.discountAmount, l.netAmount]);

describe('invoice arithmetic (worked examples)', () => {
  it('leaves an ordinary invoice as docs/api/billing.md bills it: net = amount, nothing offset or discounted', () => {
    const r = invoiceArithmetic({ lines: [line(500), line(4900, { priceId: 'price_b' })] });
    expect(nets(r)).toEqual([
      [0, 0, 500],
      [0, 0, 4900],
    ]);
    expect(r).toMatchObject({ subtotal: 5400, totalDiscount: 0, discounts: [], excessCredit: 0, offsets: [] });
    expect(invoiceTotals(r, { totalPrepaidCreditsApplied: 400, prePaymentCreditNotesAmount: 0, amountPaid: 1000 })).toEqual({
      subtotal: 5400,
      totalDiscount: 0,
      excessCredit: 0,
      totalPrepaidCreditsApplied: 400,
      total: 5000,
      prePaymentCreditNotesAmount: 0,
      amountDue: 5000,
      amountPaid: 1000,
      amountRemaining: 4000,
    });
  });

  it('(2) a threshold deduction offsets its own price’s lines, first line first, and no other', () => {
    const a1 = line(300);
    const b = line(100, { priceId: 'price_b' });
    const a2 = line(200);
    const ded = line(-400, { lineType: 'THRESHOLD_DEDUCTION' });
    const r = invoiceArithmetic({ lines: [a1, b, a2, ded] });
    expect(nets(r)).toEqual([
      [300, 0, 0],
      [0, 0, 100],
      [100, 0, 100],
      [0, 0, 0],
    ]);
    expect(r.offsets).toEqual([
      { fromLineId: ded.id, toLineId: a1.id, amount: 300 },
      { fromLineId: ded.id, toLineId: a2.id, amount: 100 },
    ]);
    expect(r).toMatchObject({ subtotal: 200, excessCredit: 0 });
  });

  it('(3) spreads a discount by what lines have left, largest remainder, after the deductions', () => {
    const a = line(333);
    const b = line(667, { priceId: 'price_b' });
    // 10% of 1000 = 100: 33.3 and 66.7 -> 33 and 67 (the larger remainder gets the unit).
    expect(nets(invoiceArithmetic({ lines: [a, b], discounts: [pct('10', [a, b])] }))).toEqual([
      [0, 33, 300],
      [0, 67, 600],
    ]);
    // A deduction of 333 on price_a first: the 10% is of the 667 left, rounded once: 66.7 -> 67.
    const ded = line(-333, { lineType: 'THRESHOLD_DEDUCTION' });
    const r = invoiceArithmetic({ lines: [a, b, ded], discounts: [pct('10', [a, b])] });
    expect(nets(r)).toEqual([
      [333, 0, 0],
      [0, 67, 600],
      [0, 0, 0],
    ]);
    expect(r.discounts).toEqual([{ discountId: 'd1', amount: 67 }]);
  });

  it('(3) rounds a percentage once, half up, and applies several discounts in order on what is left', () => {
    const a = line(5);
    // 10% of 5 = 0.5 -> 1 (half up, not to even).
    expect(invoiceArithmetic({ lines: [a], discounts: [pct('10', [a])] }).totalDiscount).toBe(1);
    const b = line(1000);
    const c = line(1000);
    // 300 fixed first (150 each), then 50% of the 1700 left = 850 (425 each).
    const r = invoiceArithmetic({ lines: [b, c], discounts: [fixed(300, [b, c], 'first'), pct('50', [b, c], 'second')] });
    expect(r.discounts).toEqual([
      { discountId: 'first', amount: 300 },
      { discountId: 'second', amount: 850 },
    ]);
    expect(nets(r)).toEqual([
      [0, 575, 425],
      [0, 575, 425],
    ]);
    expect(r.totalDiscount).toBe(1150);
  });

  it('(3) caps a fixed amount at what its lines have left and touches only its lines', () => {
    const a = line(400);
    const b = line(900, { priceId: 'price_b' });
    const r = invoiceArithmetic({ lines: [a, b], discounts: [fixed(1000, [a])] });
    expect(nets(r)).toEqual([
      [0, 400, 0],
      [0, 0, 900],
    ]);
    expect(r.discounts).toEqual([{ discountId: 'd1', amount: 400 }]);
  });

  it('(4) a proration credit offsets lines in line order after discounts; what none absorbs is excess_credit', () => {
    const a = line(1000);
    const b = line(500, { priceId: 'price_b' });
    const credit = line(-2000, { lineType: 'PRORATION_CREDIT', priceId: 'price_old' });
    const r = invoiceArithmetic({ lines: [a, b, credit], discounts: [pct('20', [a, b])] });
    // 20% of 1500 = 300 (200 + 100); the credit takes the 800 and 400 left; 800 is excess.
    expect(nets(r)).toEqual([
      [800, 200, 0],
      [400, 100, 0],
      [0, 0, 0],
    ]);
    expect(r).toMatchObject({ subtotal: -500, totalDiscount: 300, excessCredit: 800 });
    expect(invoiceTotals(r, { totalPrepaidCreditsApplied: 0, prePaymentCreditNotesAmount: 0, amountPaid: 0 })).toMatchObject({ total: 0, amountDue: 0, amountRemaining: 0 });
  });

  it('a threshold deduction larger than its price’s lines leaves the rest as excess_credit (money billed before, returned)', () => {
    const a = line(100);
    const b = line(700, { priceId: 'price_b' });
    const r = invoiceArithmetic({ lines: [a, b, line(-250, { lineType: 'THRESHOLD_DEDUCTION' })] });
    expect(nets(r)).toEqual([
      [100, 0, 0],
      [0, 0, 700],
      [0, 0, 0],
    ]);
    expect(r).toMatchObject({ subtotal: 550, excessCredit: 150 });
    expect(invoiceTotals(r, { totalPrepaidCreditsApplied: 0, prePaymentCreditNotesAmount: 0, amountPaid: 0 }).total).toBe(700);
  });

  it('(5) totals: credit notes before payment lower amount_due; nothing may go below 0', () => {
    const r = invoiceArithmetic({ lines: [line(1000)] });
    expect(invoiceTotals(r, { totalPrepaidCreditsApplied: 100, prePaymentCreditNotesAmount: 300, amountPaid: 200 })).toMatchObject({ total: 900, amountDue: 600, amountRemaining: 400 });
    expect(() => invoiceTotals(r, { totalPrepaidCreditsApplied: 100, prePaymentCreditNotesAmount: 300, amountPaid: 601 })).toThrow(ArithmeticInputError);
    expect(() => invoiceTotals(r, { totalPrepaidCreditsApplied: 1001, prePaymentCreditNotesAmount: 0, amountPaid: 0 })).toThrow(/negative/);
    expect(() => invoiceTotals(r, { totalPrepaidCreditsApplied: -1, prePaymentCreditNotesAmount: 0, amountPaid: 0 })).toThrow(/totalPrepaidCreditsApplied/);
  });

  it('refuses inputs no caller may give', () => {
    const a = line(100);
    const credit = line(-10, { lineType: 'PRORATION_CREDIT' });
    expect(() => invoiceArithmetic({ lines: [a, credit], discounts: [pct('10', [credit])] })).toThrow(/not a CHARGE or COMMITMENT_TRUE_UP line/);
    expect(() => invoiceArithmetic({ lines: [a], discounts: [pct('100.01', [a])] })).toThrow(/percent/);
    expect(() => invoiceArithmetic({ lines: [a], discounts: [pct('1e1', [a])] })).toThrow(/percent/);
    expect(() => invoiceArithmetic({ lines: [a], discounts: [fixed(-1, [a])] })).toThrow(/remaining/);
    expect(() => invoiceArithmetic({ lines: [line(10, { lineType: 'PRORATION_CREDIT' })] })).toThrow(/PRORATION_CREDIT line cannot have amount 10/);
    expect(() => invoiceArithmetic({ lines: [line(-1)] })).toThrow(/CHARGE line cannot have amount -1/);
    expect(() => invoiceArithmetic({ lines: [line(1.5)] })).toThrow(/not an integer/);
    expect(() => invoiceArithmetic({ lines: [a, a] })).toThrow(/appears twice/);
    // Beyond 2^53 minor units: the 400 of ADR 0037.
    expect(() => invoiceArithmetic({ lines: [line(Number.MAX_SAFE_INTEGER), line(1)] })).toThrow(ValidationError);
  });
});

describe('spreadByLargestRemainder', () => {
  it('gives floor shares, then one unit each to the largest remainders, the first part first on a tie', () => {
    expect(spreadByLargestRemainder(10, [4, 4, 4])).toEqual([4, 3, 3]);
    expect(spreadByLargestRemainder(2, [1, 1, 1])).toEqual([1, 1, 0]);
    expect(spreadByLargestRemainder(100, [333, 667])).toEqual([33, 67]);
    expect(spreadByLargestRemainder(5, [0, 5, 0])).toEqual([0, 5, 0]);
    expect(spreadByLargestRemainder(0, [0, 0])).toEqual([0, 0]);
    expect(spreadByLargestRemainder(Number.MAX_SAFE_INTEGER, [Number.MAX_SAFE_INTEGER, 0])).toEqual([Number.MAX_SAFE_INTEGER, 0]);
  });

  it('refuses more than the parts have', () => {
    expect(() => spreadByLargestRemainder(4, [1, 2])).toThrow(/more than the parts have/);
    expect(() => spreadByLargestRemainder(1, [])).toThrow(/more than the parts have/);
  });
});
