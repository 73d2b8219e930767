import { assembleTaxReport, trimPercentage, type RateInfo, type TaxSum } from './tax-report';

const rates = new Map<string, RateInfo>([
  ['txr_de', { id: 'txr_de', code: 'DE_19', taxType: 'VAT', country: 'DE', region: null, percentage: '19' }],
  ['txr_red', { id: 'txr_red', code: 'DE_7', taxType: 'VAT', country: 'DE', region: null, percentage: '7' }],
]);
const sum = (currency: string, taxRateId: string | null, taxable: number, tax: number, treatment: TaxSum['treatment'] = 'taxed'): TaxSum => ({ currency, taxRateId, treatment, taxable, tax });

describe('assembleTaxReport', () => {
  it('nets credited against invoiced per currency and rate, in a stable order, with totals of tax per currency', () => {
    const report = assembleTaxReport(
      { from: '2026-11-01T00:00:00Z', to: '2026-12-01T00:00:00Z' },
      [sum('usd', 'txr_de', 1000, 190), sum('eur', 'txr_red', 333, 23), sum('eur', 'txr_de', 2000, 380), sum('eur', null, 500, 0, 'reverse_charge'), sum('eur', null, 100, 0, 'exempt')],
      [sum('eur', 'txr_de', 300, 57), sum('usd', 'txr_red', 100, 7), sum('eur', null, 200, 0, 'reverse_charge')],
      rates,
    );
    expect(report.rows.map((r) => [r.currency, r.treatment, r.code, r.invoiced_taxable, r.invoiced_tax, r.credited_taxable, r.credited_tax, r.net_taxable, r.net_tax])).toEqual([
      ['eur', 'taxed', 'DE_19', 2000, 380, 300, 57, 1700, 323],
      ['eur', 'taxed', 'DE_7', 333, 23, 0, 0, 333, 23],
      ['eur', 'reverse_charge', null, 500, 0, 200, 0, 300, 0],
      ['eur', 'exempt', null, 100, 0, 0, 0, 100, 0],
      ['usd', 'taxed', 'DE_19', 1000, 190, 0, 0, 1000, 190],
      // Credited in the window, invoiced before it: a negative net.
      ['usd', 'taxed', 'DE_7', 0, 0, 100, 7, -100, -7],
    ]);
    expect(report.rows[0]).toMatchObject({ tax_rate_id: 'txr_de', tax_type: 'VAT', country: 'DE', region: null, percentage: '19' });
    expect(report.totals).toEqual([
      { currency: 'eur', invoiced_tax: 403, credited_tax: 57, net_tax: 346 },
      { currency: 'usd', invoiced_tax: 190, credited_tax: 7, net_tax: 183 },
    ]);
    expect(report).toMatchObject({ from: '2026-11-01T00:00:00Z', to: '2026-12-01T00:00:00Z', currency: null });
  });

  it('answers no rows and no totals when nothing was invoiced or credited', () => {
    expect(assembleTaxReport({ from: 'a', to: 'b', currency: 'usd' }, [], [], rates)).toEqual({ from: 'a', to: 'b', currency: 'usd', rows: [], totals: [] });
  });

  it('writes percentages as the rates answer them', () => {
    expect(['19.0000', '7.2500', '0.0000', '12.3456', '5'].map(trimPercentage)).toEqual(['19', '7.25', '0', '12.3456', '5']);
  });
});
