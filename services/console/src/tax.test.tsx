import { describe, expect, it } from '@jest/globals';
import { isTaxed, lineRates, percent, placeOf, rateLabel, taxIdText } from './tax';

describe('tax formatting', () => {
  it('says whether an invoice went through the tax step', () => {
    expect(isTaxed({ buyer_tax: null, line_items: [] })).toBe(false);
    expect(isTaxed({ buyer_tax: null, line_items: [{ tax_behavior: null } as never] })).toBe(false);
    expect(isTaxed({ buyer_tax: { tax_exempt: 'none', tax_ids: [], address_country: 'DE', address_state: null }, line_items: [] })).toBe(true);
    expect(isTaxed({ buyer_tax: null, line_items: [{ tax_behavior: 'inclusive' } as never] })).toBe(true);
  });

  it('shows percentages as the API answers them, rates added, 0 % too', () => {
    expect(percent('7.25')).toBe('7.25 %');
    expect(percent('0')).toBe('0 %');
    const t = (percentage: string) => ({ tax_rate_id: 'x', code: 'X', percentage, taxable_amount: 0, amount: 0 });
    expect(lineRates({ taxes: [t('10'), t('2.5')] })).toBe('10 % + 2.5 %');
    expect(lineRates({ taxes: [t('0')] })).toBe('0 %');
    expect(lineRates({ taxes: [] })).toBe('–');
  });

  it('names a rate by its code and place, a tax id by its type', () => {
    expect(rateLabel({ code: 'US_CA', country: 'US', region: 'US-CA' })).toBe('US_CA (US-CA)');
    expect(rateLabel({ code: 'DE_19', country: 'DE', region: null })).toBe('DE_19 (DE)');
    expect(rateLabel({ code: 'TEN', country: null, region: null })).toBe('TEN');
    expect(placeOf({ country: null, region: null })).toBe('any');
    expect(placeOf({ country: 'US', region: 'US-CA' })).toBe('US / US-CA');
    expect(taxIdText({ type: 'eu_vat', value: 'DE123456789' })).toBe('eu_vat DE123456789');
  });
});
