import { invoiceLine } from '../testing/invoice-fixtures';
import { netLines, priceInvoice, settleInvoice } from './domain';

/** An invoice's money through the invoice arithmetic (ADR 0038): what the maker, the finalizer and the wallets see. */
const line = invoiceLine;

describe('invoice money (section 0 through the invoice)', () => {
  const lines = [line('a', 0, { amount: 1000 }), line('b', 1, { amount: 500, priceType: 'USAGE' }), line('c', 2, { amount: -1200, lineType: 'PRORATION_CREDIT' })];

  it('prices a draft: lines with their offsets and nets, the totals, the discounts', () => {
    const priced = priceInvoice(lines, [{ discountId: 'disc_1', kind: 'PERCENTAGE', percent: '10', appliesTo: ['a', 'b'] }]);
    // 10% of 1500 = 150 (100 + 50); the credit takes the 900 and 300 left of the 1200 asked: nothing is excess.
    expect(priced.lines.map((l) => [l.id, l.lineType, l.amount, l.discountAmount, l.offsetAmount, l.netAmount])).toEqual([
      ['a', 'CHARGE', 1000, 100, 900, 0],
      ['b', 'CHARGE', 500, 50, 300, 150],
      ['c', 'PRORATION_CREDIT', -1200, 0, 0, 0],
    ]);
    expect(priced).toMatchObject({ subtotal: 300, totalDiscount: 150, discounts: [{ discountId: 'disc_1', amount: 150 }], excessCredit: 0, total: 150, amountDue: 150, amountRemaining: 150 });
  });

  it('offers the wallets each line’s net amount, and refuses credits beyond it', () => {
    const priced = priceInvoice(lines);
    expect(netLines(priced)).toEqual([
      { id: 'a', price_type: 'FIXED', amount: 0 },
      { id: 'b', price_type: 'USAGE', amount: 300 },
      { id: 'c', price_type: 'FIXED', amount: 0 },
    ]);
    const credited = priced.lines.map((l) => ({ ...l, prepaidCreditsApplied: l.id === 'b' ? 300 : 0 }));
    expect(settleInvoice(priced, credited, 0)).toMatchObject({ totalPrepaidCreditsApplied: 300, total: 0, amountDue: 0, amountRemaining: 0 });
    expect(() => settleInvoice(priced, priced.lines.map((l) => ({ ...l, prepaidCreditsApplied: l.id === 'a' ? 1 : 0 })), 0)).toThrow(/credits 1 applied to a net amount of 0/);
    expect(() => settleInvoice(priced, priced.lines, 301)).toThrow(/negative/);
  });

  it('keeps an ordinary invoice as it was: CHARGE lines netting their amount, total = subtotal − credits', () => {
    const priced = priceInvoice([line('a', 0, { amount: 1000 }), line('b', 1, { amount: 500 })]);
    expect(netLines(priced).map((l) => l.amount)).toEqual([1000, 500]);
    const credited = priced.lines.map((l) => ({ ...l, prepaidCreditsApplied: l.id === 'a' ? 400 : 0 }));
    expect(settleInvoice(priced, credited, 100)).toEqual({
      subtotal: 1500,
      totalDiscount: 0,
      excessCredit: 0,
      totalPrepaidCreditsApplied: 400,
      total: 1100,
      prePaymentCreditNotesAmount: 0,
      amountDue: 1100,
      amountPaid: 100,
      amountRemaining: 1000,
    });
  });
});
