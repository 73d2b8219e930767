import { ArithmeticInputError } from './domain';
import { creditNoteLineTax, invoiceTax, percentageUnits, type TaxableLine } from './tax';
import { invoiceArithmetic } from './compute';
import { invoiceTotals } from './totals';

const vat = { id: 'txr_vat', code: 'VAT20', percentage: '20' };
const ten = { id: 'txr_10', code: 'T10', percentage: '10' };
const line = (id: string, netAmount: number, rates = [vat], behavior: TaxableLine['behavior'] = 'exclusive'): TaxableLine => ({ id, netAmount, behavior, rates });

describe('tax arithmetic (step 6, docs/api/taxes.md)', () => {
  it('taxes an exclusive line on its net and an inclusive one inside it', () => {
    const taxed = invoiceTax([line('a', 1000), line('b', 1200, [vat], 'inclusive')], 'LINE');
    expect(taxed.lines).toEqual([
      { id: 'a', behavior: 'exclusive', taxableAmount: 1000, taxAmount: 200, taxes: [{ taxRateId: 'txr_vat', code: 'VAT20', percentage: '20', taxableAmount: 1000, amount: 200 }] },
      { id: 'b', behavior: 'inclusive', taxableAmount: 1000, taxAmount: 200, taxes: [{ taxRateId: 'txr_vat', code: 'VAT20', percentage: '20', taxableAmount: 1000, amount: 200 }] },
    ]);
    expect(taxed).toMatchObject({ totalTax: 400, exclusiveTax: 200, breakdown: [{ taxRateId: 'txr_vat', taxableAmount: 2000, amount: 400 }] });
  });

  it('rounds half up once per line and rate (LINE), or once per rate and spreads by largest remainder (TOTAL)', () => {
    const lines = [line('a', 5, [ten]), line('b', 5, [ten]), line('c', 5, [ten])];
    expect(invoiceTax(lines, 'LINE').lines.map((l) => l.taxAmount)).toEqual([1, 1, 1]);
    const total = invoiceTax(lines, 'TOTAL');
    // 1.5 rounds to 2; the tie of remainders goes to the earlier lines.
    expect(total.lines.map((l) => l.taxAmount)).toEqual([1, 1, 0]);
    expect(total.totalTax).toBe(2);
  });

  it('adds several rates of a line without compounding, and keeps a 0 % rate in the breakdown', () => {
    const taxed = invoiceTax([line('a', 1000, [{ id: 'txr_s', code: 'STATE', percentage: '5' }, { id: 'txr_c', code: 'CITY', percentage: '7.25' }, { id: 'txr_z', code: 'ZERO', percentage: '0' }])], 'LINE');
    expect(taxed.lines[0]!.taxes.map((t) => t.amount)).toEqual([50, 73, 0]);
    expect(taxed.breakdown.map((b) => [b.code, b.amount])).toEqual([['STATE', 50], ['CITY', 73], ['ZERO', 0]]);
    expect(taxed.totalTax).toBe(123);
  });

  it('taxes nothing of a negative or zero line', () => {
    const taxed = invoiceTax([line('credit', -500), line('free', 0)], 'LINE');
    expect(taxed.lines.map((l) => [l.taxAmount, l.taxes])).toEqual([[0, []], [0, []]]);
    expect(taxed.breakdown).toEqual([]);
  });

  it('never lets the inclusive taxes of a tiny line exceed it', () => {
    const hundred = (id: string) => ({ id, code: id, percentage: '100' });
    // Each exact tax is 2 × 100 / 400 = 0.5, rounding to 1: 3 > 2, so one comes off.
    const taxed = invoiceTax([line('a', 2, [hundred('x'), hundred('y'), hundred('z')], 'inclusive')], 'LINE');
    expect(taxed.lines[0]).toMatchObject({ taxableAmount: 0, taxAmount: 2 });
  });

  it('keeps TOTAL rounding within each tiny inclusive line whose rates pass 100 % (the spread gave one line both ceilings)', () => {
    const rates = [
      { id: 'txr_a', code: 'A', percentage: '60' },
      { id: 'txr_b', code: 'B', percentage: '60' },
    ];
    // Each rate: 2 × (1 × 60 / 220) = 0.545 exact, rounded to 1; both 1s go to the first line (ties: the earlier), which holds 1.
    const taxed = invoiceTax([line('a', 1, rates, 'inclusive'), line('b', 1, rates, 'inclusive')], 'TOTAL');
    expect(taxed.lines.map((l) => [l.taxableAmount, l.taxes.map((t) => t.amount)])).toEqual([
      [0, [1, 0]],
      [1, [0, 0]],
    ]);
    expect(taxed.totalTax).toBe(1);
    expect(taxed.breakdown.map((b) => b.amount)).toEqual([1, 0]);
  });

  it('returns a line tax over credit notes cumulatively: never more, all of it once wholly credited', () => {
    const billed = invoiceTax([line('a', 100, [{ id: 'txr_33', code: 'T33', percentage: '33' }])], 'LINE').lines[0]!;
    expect(billed.taxAmount).toBe(33);
    const first = creditNoteLineTax(billed, 100, 0, 33);
    const second = creditNoteLineTax(billed, 100, 33, 33);
    const last = creditNoteLineTax(billed, 100, 66, 34);
    expect([first.taxAmount, second.taxAmount, last.taxAmount]).toEqual([11, 11, 11]);
    expect(first.total).toBe(44);
    const inclusive = invoiceTax([line('b', 120, [vat], 'inclusive')], 'LINE').lines[0]!;
    expect(creditNoteLineTax(inclusive, 120, 0, 60)).toEqual({ taxAmount: 10, taxes: [{ taxRateId: 'txr_vat', amount: 10 }], total: 60 });
    expect(() => creditNoteLineTax(billed, 100, 66, 35)).toThrow(ArithmeticInputError);
  });

  it('reads percentages of at most 4 decimals in [0, 100]', () => {
    expect(percentageUnits('7.25')).toBe(72_500n);
    expect(percentageUnits('0.0001')).toBe(1n);
    expect(percentageUnits('100')).toBe(1_000_000n);
    for (const bad of ['100.0001', '7.12345', '-1', '1e2', '', ' 5']) expect(() => percentageUnits(bad)).toThrow(ArithmeticInputError);
    expect(() => invoiceTax([line('a', 10, [vat, vat])], 'LINE')).toThrow(/appears twice/);
  });
  it('adds only exclusive tax to the total, after discounts and before credits (step 6)', () => {
    const a = invoiceArithmetic({
      lines: [
        { id: 'a', position: 0, lineType: 'CHARGE', priceId: 'p1', amount: 1000 },
        { id: 'b', position: 1, lineType: 'CHARGE', priceId: 'p2', amount: 1070 },
      ],
      discounts: [{ discountId: 'd', kind: 'PERCENTAGE', percent: '10', appliesTo: ['a'] }],
    });
    const tax = invoiceTax([line('a', a.lines[0]!.netAmount), line('b', a.lines[1]!.netAmount, [{ ...ten, percentage: '7' }], 'inclusive')], 'LINE');
    expect([tax.lines[0]!.taxAmount, tax.lines[1]!.taxAmount, tax.exclusiveTax, tax.totalTax]).toEqual([180, 70, 180, 250]);
    const totals = invoiceTotals({ ...a, exclusiveTax: tax.exclusiveTax }, { totalPrepaidCreditsApplied: 500, prePaymentCreditNotesAmount: 0, amountPaid: 0 });
    // total = subtotal − discount + excess credit + Σ exclusive tax − credits = 2070 − 100 + 0 + 180 − 500.
    expect(totals).toMatchObject({ subtotal: 2070, totalDiscount: 100, total: 1650, amountDue: 1650, amountRemaining: 1650 });
    expect(invoiceTotals(a, { totalPrepaidCreditsApplied: 0, prePaymentCreditNotesAmount: 0, amountPaid: 0 }).total).toBe(1970);
    expect(() => invoiceTotals({ ...a, exclusiveTax: -1 }, { totalPrepaidCreditsApplied: 0, prePaymentCreditNotesAmount: 0, amountPaid: 0 })).toThrow(ArithmeticInputError);
  });
});
