import { draftOf } from '../testing/invoice-fixtures';
import { taxRetryDelayMs } from './draft-taxes';
import { checkProviderAnswer, providerRateId, providerRequestOf, providerTaxed, type ProviderRequest } from './provider-taxes';

const seller = { company_name: 'Seller GmbH', address: 'Hamburg', country: 'DE', tax_id: 'DE136695976' };
const buyer = { address: { address_country: 'DE', address_state: null }, tax_ids: [], tax_exempt: 'none' as const };
const request = (lines: ProviderRequest['lines']): ProviderRequest => ({ invoice_id: 'inv_1', currency: 'usd', seller, buyer, lines });

describe('the HTTP tax provider answer check (docs/api/taxes.md#http-provider)', () => {
  const ex = request([
    { id: 'a', amount: 1000, tax_behavior: 'exclusive', price_id: 'p' },
    { id: 'b', amount: 333, tax_behavior: 'exclusive', price_id: 'p' },
  ]);

  it('takes an answer whose amounts are the exact product within one minor unit', () => {
    const checked = checkProviderAnswer(ex, {
      lines: [
        { id: 'a', taxes: [{ name: 'VAT', percentage: '19.00', amount: 190 }] },
        // 333 × 19 % = 63.27: 63 and 64 are within one unit.
        { id: 'b', taxes: [{ name: 'VAT', percentage: 19, amount: 64 }] },
      ],
    });
    expect(checked).toEqual({ ok: true, lines: new Map([['a', [{ name: 'VAT', percentage: '19', amount: 190 }]], ['b', [{ name: 'VAT', percentage: '19', amount: 64 }]]]) });
  });

  it('refuses an amount off by more than one minor unit, naming it', () => {
    const checked = checkProviderAnswer(ex, { lines: [{ id: 'a', taxes: [{ name: 'VAT', percentage: '19', amount: 192 }] }, { id: 'b', taxes: [] }] });
    expect(checked).toEqual({ ok: false, reason: expect.stringContaining('answer.lines.0.taxes.0.amount') });
    // 333 × 19 % = 63.27: 62 is 1.27 off.
    expect(checkProviderAnswer(ex, { lines: [{ id: 'a', taxes: [] }, { id: 'b', taxes: [{ name: 'VAT', percentage: '19', amount: 62 }] }] }).ok).toBe(false);
  });

  it('checks an inclusive line on the base net × 100 / (100 + Σ p), rates adding', () => {
    const inc = request([{ id: 'a', amount: 1190, tax_behavior: 'inclusive', price_id: null }]);
    expect(checkProviderAnswer(inc, { lines: [{ id: 'a', taxes: [{ name: 'VAT', percentage: '19', amount: 190 }] }] }).ok).toBe(true);
    // As if exclusive (1190 × 19 %): refused.
    expect(checkProviderAnswer(inc, { lines: [{ id: 'a', taxes: [{ name: 'VAT', percentage: '19', amount: 226 }] }] }).ok).toBe(false);
    // Two rates on one base: 1200 × 10/120 = 100 each.
    const two = request([{ id: 'a', amount: 1200, tax_behavior: 'inclusive', price_id: null }]);
    expect(checkProviderAnswer(two, { lines: [{ id: 'a', taxes: [{ name: 'A', percentage: '10', amount: 100 }, { name: 'B', percentage: '10', amount: 100 }] }] }).ok).toBe(true);
  });

  it('needs every line answered once, and only the lines asked', () => {
    expect(checkProviderAnswer(ex, { lines: [{ id: 'a', taxes: [] }] })).toEqual({ ok: false, reason: 'answer.lines: line b is not answered' });
    expect(checkProviderAnswer(ex, { lines: [{ id: 'a', taxes: [] }, { id: 'a', taxes: [] }, { id: 'b', taxes: [] }] })).toMatchObject({ ok: false, reason: expect.stringContaining('twice') });
    expect(checkProviderAnswer(ex, { lines: [{ id: 'a', taxes: [] }, { id: 'b', taxes: [] }, { id: 'c', taxes: [] }] })).toMatchObject({ ok: false, reason: expect.stringContaining('not a line of the request') });
    expect(checkProviderAnswer(ex, { lines: [{ id: 'a', taxes: [{ name: 'VAT', percentage: '19', amount: 190 }, { name: 'VAT', percentage: '19.0', amount: 190 }] }, { id: 'b', taxes: [] }] }).ok).toBe(false);
  });

  it('refuses a malformed answer, naming the path', () => {
    for (const bad of [null, 'x', {}, { lines: {} }, { lines: [{ id: 'a' }] }, { lines: [{ id: 'a', taxes: [{ name: 'VAT', percentage: '101', amount: 0 }] }] }, { lines: [{ id: 'a', taxes: [{ name: 'VAT', percentage: '19', amount: 1.5 }] }] }, { lines: [{ id: 'a', taxes: [{ name: '', percentage: '19', amount: 0 }] }] }]) {
      expect(checkProviderAnswer(ex, bad)).toMatchObject({ ok: false, reason: expect.stringMatching(/^answer/) });
    }
  });
});

describe('a draft taxed with the provider answer', () => {
  it('stores it as the built-in result: line taxes, sums, breakdown per provider rate, totals', () => {
    const draft = draftOf([1000, 1190]);
    const req = providerRequestOf(draft, seller, buyer, new Map([['line_1', { behavior: 'inclusive' as const }]]))!;
    expect(req.lines).toEqual([
      { id: 'line_0', amount: 1000, tax_behavior: 'exclusive', price_id: 'price_0' },
      { id: 'line_1', amount: 1190, tax_behavior: 'inclusive', price_id: 'price_1' },
    ]);
    const vat = [{ name: 'VAT', percentage: '19', amount: 190 }];
    const taxed = providerTaxed(draft, req, new Map([['line_0', vat], ['line_1', vat]]), { taxExempt: 'none', taxIds: [], addressCountry: 'DE', addressState: null });
    const id = providerRateId('VAT', '19');
    expect(id).toMatch(/^ext_[0-9a-f]{20}$/);
    expect(taxed.lines.map((l) => [l.taxAmount, l.taxBehavior, l.taxes])).toEqual([
      [190, 'exclusive', [{ taxRateId: id, code: 'VAT', percentage: '19', taxableAmount: 1000, amount: 190 }]],
      [190, 'inclusive', [{ taxRateId: id, code: 'VAT', percentage: '19', taxableAmount: 1000, amount: 190 }]],
    ]);
    expect(taxed).toMatchObject({ totalTax: 380, exclusiveTax: 190, total: 2190 + 190, taxStatus: 'ok', taxAttempts: 0 });
    expect(taxed.taxBreakdown).toEqual([{ taxRateId: id, code: 'VAT', country: null, region: null, percentage: '19', taxableAmount: 2000, amount: 380 }]);
  });

  it('asks nothing for a purchase of credits', () => {
    expect(providerRequestOf(draftOf([1000], { billingReason: 'CREDIT_PURCHASE' }), seller, buyer, new Map())).toBeUndefined();
  });
});

describe('the retry backoff', () => {
  it('doubles from the base after each failure in a row, capped', () => {
    const r = { baseMs: 60_000, maxMs: 3_600_000 };
    expect([1, 2, 3, 4, 5, 6, 7, 8, 50].map((n) => taxRetryDelayMs(n, r))).toEqual([60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000, 3_600_000, 3_600_000, 3_600_000]);
  });
});
