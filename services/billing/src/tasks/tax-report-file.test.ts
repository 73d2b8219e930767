import type { TaxReport } from '@billstream/contracts';
import { encodeRows } from './files';
import { EXPORT_COLUMNS, minorToDecimal, taxReportFileRows } from './exports';

describe('the TAX_REPORT file', () => {
  it('writes minor units as exact decimal strings of the currency', () => {
    expect([minorToDecimal(1990, 'usd'), minorToDecimal(5, 'eur'), minorToDecimal(-5, 'usd'), minorToDecimal(0, 'usd'), minorToDecimal(500, 'jpy'), minorToDecimal(1234, 'bhd')]).toEqual([
      '19.90',
      '0.05',
      '-0.05',
      '0.00',
      '500',
      '1.234',
    ]);
    expect(minorToDecimal(Number.MAX_SAFE_INTEGER, 'usd')).toBe('90071992547409.91');
  });

  it('is a header and one row per report row, amounts as numbers and decimals', () => {
    const report: TaxReport = {
      from: 'a',
      to: 'b',
      currency: null,
      rows: [
        { currency: 'eur', treatment: 'taxed', tax_rate_id: 'txr_1', code: 'DE_19', tax_type: 'VAT', country: 'DE', region: null, percentage: '19', invoiced_taxable: 2000, invoiced_tax: 380, credited_taxable: 300, credited_tax: 57, net_taxable: 1700, net_tax: 323 },
        { currency: 'eur', treatment: 'reverse_charge', tax_rate_id: null, code: null, tax_type: null, country: null, region: null, percentage: null, invoiced_taxable: 0, invoiced_tax: 0, credited_taxable: 100, credited_tax: 0, net_taxable: -100, net_tax: 0 },
      ],
      totals: [],
    };
    const csv = encodeRows('CSV', EXPORT_COLUMNS.TAX_REPORT, taxReportFileRows(report), true).toString();
    expect(csv.split('\n')).toEqual([
      'currency,treatment,tax_rate_id,code,tax_type,country,region,percentage,invoiced_taxable,invoiced_taxable_decimal,invoiced_tax,invoiced_tax_decimal,credited_taxable,credited_taxable_decimal,credited_tax,credited_tax_decimal,net_taxable,net_taxable_decimal,net_tax,net_tax_decimal',
      'eur,taxed,txr_1,DE_19,VAT,DE,,19,2000,20.00,380,3.80,300,3.00,57,0.57,1700,17.00,323,3.23',
      // Negative amounts are numbers, never quoted against formulas: in minor units and as decimals.
      'eur,reverse_charge,,,,,,,0,0.00,0,0.00,100,1.00,0,0.00,-100,-1.00,0,0.00',
      '',
    ]);
    // JSONL: the same row, decimals as strings.
    const line = JSON.parse(encodeRows('JSONL', EXPORT_COLUMNS.TAX_REPORT, taxReportFileRows(report), true).toString().split('\n')[1]!);
    expect(line).toMatchObject({ treatment: 'reverse_charge', net_taxable: -100, net_taxable_decimal: '-1.00', tax_rate_id: null });
  });

  it('still quotes text that starts like a formula', () => {
    expect(encodeRows('CSV', ['a', 'b'], [{ a: '-1.00', b: { x: 1 } }], false).toString()).toBe('\'-1.00,"{""x"":1}"\n');
  });
});
