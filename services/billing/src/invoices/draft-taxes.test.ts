import { draftOf } from '../testing/invoice-fixtures';
import { taxOf } from './draft-taxes';
import { taxed } from './taxed';

/** What the retax at finalization compares (docs/api/taxes.md#invoices-bearing-tax): a draft whose tax did not move is not written again. */
const vat = { id: 'txr_de', code: 'DE_19', percentage: '19', country: 'DE', region: null, active: true };
const buyer = { taxExempt: 'none' as const, taxIds: [{ type: 'eu_vat', value: 'DE136695976' }], addressCountry: 'DE', addressState: null };

/** The same object with its keys in the reverse order, as a row read back (jsonb orders keys its own way) may hold them. */
const reversed = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).reverse()) as T;

describe('taxOf: what a retax compares', () => {
  const draft = draftOf([1000, 250]);
  const t = taxed(draft, { rounding: 'LINE', buyer, reverseCharge: false, exemptReason: null, lines: new Map(draft.lines.map((l) => [l.id, { behavior: 'exclusive' as const, rates: [vat] }])) });

  it('is the same for the same tax whatever the order of the members of its rates, breakdown and buyer', () => {
    const read = {
      ...t,
      lines: t.lines.map((l) => ({ ...l, taxes: (l.taxes ?? []).map(reversed) })),
      taxBreakdown: (t.taxBreakdown ?? []).map(reversed),
      buyerTax: reversed({ ...t.buyerTax!, taxIds: t.buyerTax!.taxIds.map(reversed) }),
    };
    expect(JSON.stringify(read.taxBreakdown)).not.toBe(JSON.stringify(t.taxBreakdown));
    expect(taxOf(read)).toBe(taxOf(t));
  });

  it('differs when a tax, the breakdown, the buyer or the total moved', () => {
    expect(taxOf({ ...t, lines: t.lines.map((l, i) => (i === 0 ? { ...l, taxAmount: 191 } : l)) })).not.toBe(taxOf(t));
    expect(taxOf({ ...t, taxBreakdown: (t.taxBreakdown ?? []).map((b) => ({ ...b, taxableAmount: b.taxableAmount + 1 })) })).not.toBe(taxOf(t));
    expect(taxOf({ ...t, buyerTax: { ...t.buyerTax!, addressCountry: 'FR' } })).not.toBe(taxOf(t));
    expect(taxOf({ ...t, total: t.total + 1 })).not.toBe(taxOf(t));
    expect(taxOf(draft)).not.toBe(taxOf(t));
  });
});
