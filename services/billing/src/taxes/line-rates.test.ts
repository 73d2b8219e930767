import { euReverseCharge, lineRates, type RateRef, type ReverseChargeSetting, type TaxBuyer } from './line-rates';

const rate = (id: string, country: string | null, region: string | null = null, active = true): RateRef => ({ id, code: id.toUpperCase(), percentage: '10', country, region, active });
const rates = new Map(
  [rate('txr_de', 'DE'), rate('txr_us', 'US'), rate('txr_ca', 'US', 'US-CA'), rate('txr_ny', 'US', 'US-NY'), rate('txr_p', null), rate('txr_q', null), rate('txr_old', 'DE', null, false)].map((r) => [r.id, r]),
);
const buyer = (b: Partial<TaxBuyer> = {}): TaxBuyer => ({ taxExempt: 'none', taxIds: [], taxRateIds: [], addressCountry: null, addressState: null, ...b });
const off: ReverseChargeSetting = { enabled: false, sellerCountry: null };
const eu: ReverseChargeSetting = { enabled: true, sellerCountry: 'DE' };
const ids = (r: ReturnType<typeof lineRates>) => r.rates.map((x) => x.id);
const run = (b: TaxBuyer, price: string[] = [], plan: string[] = [], reverseCharge = off) => lineRates({ buyer: b, priceRateIds: price, planRateIds: plan, reverseCharge, rates });

describe('which rates a line bears (docs/api/taxes.md#which-rates-a-line-bears)', () => {
  it('an exempt customer bears none, whatever the price names', () => {
    expect(run(buyer({ taxExempt: 'exempt', addressCountry: 'DE' }), ['txr_p'])).toEqual({ kind: 'exempt', rates: [], reverseCharge: false, exemptReason: 'customer_exempt' });
  });

  it('a reverse-charge customer bears none, reverse charged', () => {
    expect(run(buyer({ taxExempt: 'reverse' }), ['txr_p'], ['txr_q'])).toMatchObject({ kind: 'reverse_charge', rates: [], reverseCharge: true });
  });

  it('the EU reverse charge: another member state than the seller with an eu_vat id', () => {
    const fr = buyer({ addressCountry: 'FR', taxIds: [{ type: 'eu_vat', value: 'FR40303265045' }] });
    expect(run(fr, ['txr_p'], [], eu)).toMatchObject({ kind: 'reverse_charge', reverseCharge: true });
    expect(euReverseCharge({ ...fr, addressCountry: ' fr ' }, eu)).toBe(true);
    // Not when off, not in the seller's own state, not outside the EU, not without an eu_vat id.
    expect(run(fr, ['txr_p'], [], off)).toMatchObject({ kind: 'rates', rates: [{ id: 'txr_p' }] });
    expect(euReverseCharge({ ...fr, addressCountry: 'DE' }, eu)).toBe(false);
    expect(euReverseCharge({ ...fr, addressCountry: 'CH' }, eu)).toBe(false);
    expect(euReverseCharge({ ...fr, taxIds: [{ type: 'gb_vat', value: 'GB980780684' }] }, eu)).toBe(false);
    expect(euReverseCharge({ ...fr, addressCountry: null }, eu)).toBe(false);
  });

  it("the price's rates first, then the plan's, then the customer's; several rates add", () => {
    const b = buyer({ taxRateIds: ['txr_q'], addressCountry: 'DE' });
    expect(run(b, ['txr_p', 'txr_q'], ['txr_de'])).toMatchObject({ kind: 'rates', source: 'price' });
    expect(ids(run(b, ['txr_p', 'txr_q'], ['txr_de']))).toEqual(['txr_p', 'txr_q']);
    expect(run(b, [], ['txr_de'])).toMatchObject({ source: 'plan', rates: [{ id: 'txr_de' }] });
    expect(run(b)).toMatchObject({ source: 'customer', rates: [{ id: 'txr_q' }] });
  });

  it('an archived rate is dropped; a list naming none active falls through', () => {
    const b = buyer({ addressCountry: 'DE' });
    expect(ids(run(b, ['txr_old', 'txr_p']))).toEqual(['txr_p']);
    expect(run(b, ['txr_old'], ['txr_q'])).toMatchObject({ source: 'plan', rates: [{ id: 'txr_q' }] });
    expect(run(b, ['txr_gone'])).toMatchObject({ source: 'address', rates: [{ id: 'txr_de' }] });
  });

  it("else the active rates of the address country whose region is empty or the buyer's", () => {
    expect(ids(run(buyer({ addressCountry: 'US', addressState: 'CA' })))).toEqual(['txr_us', 'txr_ca']);
    expect(ids(run(buyer({ addressCountry: 'us', addressState: 'ny' })))).toEqual(['txr_us', 'txr_ny']);
    expect(ids(run(buyer({ addressCountry: 'US' })))).toEqual(['txr_us']);
    expect(ids(run(buyer({ addressCountry: 'DE' })))).toEqual(['txr_de']);
    expect(run(buyer({ addressCountry: 'JP' }))).toEqual({ kind: 'rates', source: null, rates: [], reverseCharge: false, exemptReason: null });
    expect(run(buyer())).toMatchObject({ source: null, rates: [] });
  });
});
