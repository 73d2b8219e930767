import { invoiceLine } from '../testing/invoice-fixtures';
import { netLines, priceInvoice, settleInvoice } from './domain';
import { taxed, type InvoiceTaxContext } from './taxed';

/** Step (6) on a priced invoice (docs/api/taxes.md#invoices-bearing-tax): what the maker and the finalizer store. */
const line = invoiceLine;
const vat = { id: 'txr_de', code: 'DE_19', percentage: '19', country: 'DE', region: null, active: true };
const buyer = { taxExempt: 'none' as const, taxIds: [], addressCountry: 'DE', addressState: null };
const ctx = (lines: Array<[string, 'exclusive' | 'inclusive']>): InvoiceTaxContext => ({
  rounding: 'LINE',
  buyer,
  reverseCharge: false,
  exemptReason: null,
  lines: new Map(lines.map(([id, behavior]) => [id, { behavior, rates: [vat] }])),
});

describe('taxed: step (6) on a priced invoice', () => {
  const lines = [line('a', 0, { amount: 1000 }), line('b', 1, { amount: 1190 }), line('c', 2, { amount: -300, lineType: 'PRORATION_CREDIT' })];
  const priced = { ...priceInvoice(lines), billingReason: 'SUBSCRIPTION_CYCLE' as const, prePaymentCreditNotesAmount: 0 };

  it('taxes positive lines after the credit took its part, adds only the exclusive tax to the total, and lets credits pay it', () => {
    const t = taxed(priced, ctx([['a', 'exclusive'], ['b', 'inclusive'], ['c', 'exclusive']]));
    // The credit took 300 of a: its net 700 bears 133; b holds 190 of its 1190; the negative line none.
    expect(t.lines.map((l) => [l.id, l.netAmount, l.taxBehavior, l.taxAmount])).toEqual([
      ['a', 700, 'exclusive', 133],
      ['b', 1190, 'inclusive', 190],
      ['c', 0, 'exclusive', 0],
    ]);
    expect(t).toMatchObject({ subtotal: 1890, totalTax: 323, exclusiveTax: 133, total: 1890 + 133, buyerTax: buyer, reverseCharge: false });
    expect(t.taxBreakdown).toEqual([{ taxRateId: 'txr_de', code: 'DE_19', country: 'DE', region: null, percentage: '19', taxableAmount: 700 + 1000, amount: 323 }]);
    // Wallets are offered the net and the exclusive tax; a credit beyond that is refused.
    expect(netLines(t).map((l) => l.amount)).toEqual([833, 1190, 0]);
    expect(settleInvoice(t, t.lines.map((l) => ({ ...l, prepaidCreditsApplied: l.id === 'a' ? 833 : 0 })), 0)).toMatchObject({ total: 1890 + 133 - 833 });
    expect(() => settleInvoice(t, t.lines.map((l) => ({ ...l, prepaidCreditsApplied: l.id === 'a' ? 834 : 0 })), 0)).toThrow(/credits 834 applied to a net amount of 700/);
  });

  it('taxes no purchase of credits, and a line priced again drops the tax it bore', () => {
    const purchase = taxed({ ...priced, billingReason: 'CREDIT_PURCHASE' }, ctx([['a', 'exclusive']]));
    expect([purchase.totalTax, purchase.exclusiveTax, purchase.total, purchase.buyerTax]).toEqual([0, 0, 1890, null]);
    const t = taxed(priced, ctx([['a', 'exclusive']]));
    const again = priceInvoice(t.lines);
    expect(again.lines.map((l) => [l.taxAmount, l.taxes, l.taxBehavior])).toEqual([[0, [], null], [0, [], null], [0, [], null]]);
    expect([again.totalTax, again.total]).toEqual([0, 1890]);
  });
});
