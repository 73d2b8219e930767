import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { InvoiceResponse } from '@billstream/contracts';
import { renderHtml } from './html';
import { totalRows, type DocumentModel } from './model';
import { renderPdf } from './pdf';
import { breakdownRows, buyerTaxLines, DEFAULT_REVERSE_CHARGE_TEXT, formatPercentage, isTaxed, lineRates } from './tax';

type Line = InvoiceResponse['line_items'][number];
const line = (over: Partial<Line>): Line => ({
  id: 'li',
  price_id: 'price_1',
  price_type: 'FIXED',
  meter_id: null,
  description: 'Line',
  quantity: '1',
  unit_amount: '10',
  line_type: 'CHARGE',
  amount: 1000,
  offset_amount: 0,
  discount_amount: 0,
  net_amount: 1000,
  credited_amount: 0,
  prepaid_credits_applied: 0,
  period_start: null,
  period_end: null,
  tax_amount: 0,
  taxes: [],
  tax_behavior: null,
  ...over,
});

/** 10.00 exclusive at 19 % (1.90), 11.90 inclusive at 19 % (1.90 inside), 5.00 at 0 %: the figures of docs/api/taxes.md#arithmetic. */
const taxed: InvoiceResponse = {
  id: 'inv_t',
  invoice_number: 'INV-202612-00007',
  customer_id: 'cus_1',
  subscription_id: null,
  subscription_customer_id: null,
  billing_reason: 'SUBSCRIPTION_CYCLE',
  status: 'finalized',
  tax_status: 'ok',
  payment_status: 'pending',
  currency: 'eur',
  period_start: '2026-12-01T00:00:00.000Z',
  period_end: '2027-01-01T00:00:00.000Z',
  due_date: '2026-12-31T00:00:00.000Z',
  overdue: false,
  subtotal: 2690,
  total_discount: 0,
  discounts: [],
  excess_credit: 0,
  total_prepaid_credits_applied: 0,
  total: 2880,
  total_tax: 380,
  total_excluding_tax: 2500,
  tax_breakdown: [
    { tax_rate_id: 'txr_19', code: 'DE_VAT_19', country: 'DE', region: null, percentage: '19', taxable_amount: 2000, amount: 380 },
    { tax_rate_id: 'txr_0', code: 'ZERO', country: null, region: null, percentage: '0', taxable_amount: 500, amount: 0 },
  ],
  reverse_charge: false,
  tax_exempt_reason: null,
  buyer_tax: { tax_exempt: 'none', tax_ids: [{ type: 'eu_vat', value: 'DE123456789' }], address_country: 'DE', address_state: null },
  pre_payment_credit_notes_amount: 0,
  post_payment_credit_notes_amount: 0,
  amount_due: 2880,
  amount_paid: 0,
  amount_remaining: 2880,
  hosted_invoice_url: null,
  invoice_pdf_url: null,
  available_actions: ['pay', 'credit', 'void'],
  line_items: [
    line({ id: 'li_1', description: 'Platform fee', tax_amount: 190, tax_behavior: 'exclusive', taxes: [{ tax_rate_id: 'txr_19', code: 'DE_VAT_19', percentage: '19', taxable_amount: 1000, amount: 190 }] }),
    line({ id: 'li_2', description: 'Support (gross price)', unit_amount: '11.9', amount: 1190, net_amount: 1190, tax_amount: 190, tax_behavior: 'inclusive', taxes: [{ tax_rate_id: 'txr_19', code: 'DE_VAT_19', percentage: '19', taxable_amount: 1000, amount: 190 }] }),
    line({ id: 'li_3', description: 'Books', unit_amount: '5', amount: 500, net_amount: 500, tax_behavior: 'exclusive', taxes: [{ tax_rate_id: 'txr_0', code: 'ZERO', percentage: '0', taxable_amount: 500, amount: 0 }] }),
  ],
  finalized_at: '2026-12-01T00:00:00.000Z',
  voided_at: null,
  created_at: '2026-12-01T00:00:00.000Z',
  updated_at: '2026-12-01T00:00:00.000Z',
  tenant_id: 't',
  environment_id: 'e',
};

const seller = { company_name: 'Seller GmbH', address: '1 Hafenstrasse\n20457 Hamburg', logo_url: null, footer: null, tax_id: 'DE136695976', country: 'DE' };
const model: DocumentModel = {
  invoice: taxed,
  seller,
  buyer: { id: 'cus_1', external_id: 'ext-1', name: 'Käufer AG', email: 'ap@kaeufer.example', address: ['Marktplatz 1', '80331 München', 'DE'] },
  payments: [],
  creditNotes: [{ number: 'CN-1', date: '2026-12-02T00:00:00.000Z', reason: 'DUPLICATE', amount: 1000, tax: 190, total: 1190, status: 'ISSUED' }],
};
/** A reverse-charged invoice: no line bears tax; the seller's own legal text. */
const reverse: DocumentModel = {
  ...model,
  seller: { ...seller, reverse_charge_text: 'Steuerschuldnerschaft des Leistungsempfängers (§ 13b UStG).' },
  invoice: {
    ...taxed,
    subtotal: 1000,
    total: 1000,
    total_tax: 0,
    total_excluding_tax: 1000,
    amount_due: 1000,
    amount_remaining: 1000,
    tax_breakdown: [],
    reverse_charge: true,
    buyer_tax: { tax_exempt: 'none', tax_ids: [{ type: 'eu_vat', value: 'FR40303265045' }], address_country: 'FR', address_state: null },
    line_items: [line({ id: 'li_r', description: 'Platform fee', tax_behavior: 'exclusive' })],
  },
  creditNotes: [],
};

const dir = mkdtempSync(path.join(os.tmpdir(), 'billstream-tax-doc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
/** The PDF's text as poppler reads it back (`pdftotext -layout`). */
function pdfText(pdf: Buffer): string {
  const file = path.join(dir, `doc-${++n}.pdf`);
  writeFileSync(file, pdf);
  if (process.env.TAX_DOC_PNG) execFileSync('pdftoppm', ['-png', '-r', '80', '-f', '1', '-l', '1', file, path.join(process.env.TAX_DOC_PNG, `tax-${n}`)]);
  return execFileSync('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-'], { encoding: 'utf8' });
}
const squash = (t: string) => t.replace(/\s+/g, ' ');

describe('tax on invoice documents (docs/api/taxes.md#documents)', () => {
  it('say what an invoice bore: rates per line, the breakdown per rate (0 % too), totals that add up', () => {
    expect(isTaxed(taxed)).toBe(true);
    expect(isTaxed({ ...taxed, buyer_tax: null, line_items: [line({})] })).toBe(false);
    expect(formatPercentage('7.25')).toBe('7.25%');
    expect(lineRates(line({ taxes: [{ tax_rate_id: 'a', code: 'A', percentage: '10', taxable_amount: 1, amount: 0 }, { tax_rate_id: 'b', code: 'B', percentage: '2.5', taxable_amount: 1, amount: 0 }] }))).toBe('10% + 2.5%');
    expect(lineRates(line({}))).toBe('–');
    expect(breakdownRows(taxed)).toEqual([
      { rate: 'DE_VAT_19 (DE)', percentage: '19%', taxable: 2000, tax: 380 },
      { rate: 'ZERO', percentage: '0%', taxable: 500, tax: 0 },
    ]);
    expect(buyerTaxLines(taxed)).toEqual(['VAT ID: DE123456789']);
    const rows = totalRows(taxed).map((r) => [r.label, r.amount]);
    expect(rows.slice(0, 4)).toEqual([['Subtotal', 2690], ['Total excluding tax', 2500], ['Tax', 380], ['Total', 2880]]);
    // An untaxed invoice's totals are as they were.
    expect(totalRows({ ...taxed, buyer_tax: null, line_items: [line({})] }).map((r) => r.label)).toEqual(['Subtotal', 'Total', 'Amount due', 'Amount paid', 'Amount remaining']);
  });

  it('show the parties, the tax column, the breakdown and the totals on the hosted page', () => {
    const html = renderHtml(model);
    // TAX_DOC_PNG=dir: the page and the PDFs' first pages written there, to look at.
    if (process.env.TAX_DOC_PNG) writeFileSync(path.join(process.env.TAX_DOC_PNG, 'page.html'), html);
    expect(html).toContain('<th class="num">Tax</th>');
    expect(html).toContain('Germany');
    expect(html).toContain('Tax ID: DE136695976');
    expect(html).toContain('VAT ID: DE123456789');
    expect(html).toMatch(/19%<div class="muted small">1\.90 EUR<\/div>/);
    expect(html).toMatch(/11\.90 EUR<div class="muted small">incl\. tax<\/div>/);
    expect(html).toContain('<tr><td>DE_VAT_19 (DE)</td><td class="num">19%</td><td class="num">20.00 EUR</td><td class="num">3.80 EUR</td></tr>');
    expect(html).toContain('<tr><td>ZERO</td><td class="num">0%</td><td class="num">5.00 EUR</td><td class="num">0.00 EUR</td></tr>');
    expect(html).toContain('<td>Total excluding tax</td><td class="num">25.00 EUR</td>');
    expect(html).toContain('<td>Tax</td><td class="num">3.80 EUR</td>');
    expect(html).toContain('<td class="num">-1.90 EUR</td><td class="num">-11.90 EUR</td>');
    expect(html).not.toContain('Reverse charge');
  });

  it('print the same in the PDF, read back with pdftotext', async () => {
    const text = pdfText(await renderPdf(model));
    const flat = squash(text);
    expect(flat).toContain('Seller GmbH');
    expect(flat).toContain('Germany');
    expect(flat).toContain('Tax ID: DE136695976');
    expect(flat).toContain('VAT ID: DE123456789');
    expect(text).toMatch(/Description\s+Quantity\s+Unit amount\s+Discount\s+Tax\s+Amount/);
    expect(text).toMatch(/Platform fee\s+1\s+10\.00 EUR\s+19%\s+10\.00 EUR/);
    expect(text).toMatch(/Support \(gross price\)\s+1\s+11\.90 EUR\s+19%\s+11\.90 EUR/);
    expect(text).toMatch(/1\.90 EUR\s+incl\. tax/);
    expect(text).toMatch(/Books\s+1\s+5\.00 EUR\s+0%\s+5\.00 EUR/);
    expect(text).toMatch(/Total excluding tax\s+25\.00 EUR/);
    expect(text).toMatch(/\n\s*Tax\s+3\.80 EUR/);
    expect(text).toMatch(/Total\s+28\.80 EUR/);
    expect(text).toMatch(/Rate\s+Percentage\s+Taxable amount\s+Tax/);
    expect(text).toMatch(/DE_VAT_19 \(DE\)\s+19%\s+20\.00 EUR\s+3\.80 EUR/);
    expect(text).toMatch(/ZERO\s+0%\s+5\.00 EUR\s+0\.00 EUR/);
  }, 30_000);

  it('print the reverse charge with the seller\'s legal text, or the default, and no tax on the lines', async () => {
    const text = squash(pdfText(await renderPdf(reverse)));
    expect(text).toContain('Reverse charge Steuerschuldnerschaft des Leistungsempfängers (§ 13b UStG).');
    expect(text).toContain('VAT ID: FR40303265045');
    expect(text).toMatch(/Tax \(reverse charge\) 0\.00 EUR/);
    expect(text).toMatch(/Platform fee 1 10\.00 EUR – 10\.00 EUR/);
    const byDefault = renderHtml({ ...reverse, seller });
    expect(byDefault).toContain(`<div class="notice"><strong>Reverse charge</strong>${DEFAULT_REVERSE_CHARGE_TEXT}</div>`);
    const exempt = renderHtml({ ...reverse, invoice: { ...reverse.invoice, reverse_charge: false, tax_exempt_reason: 'customer_exempt' } });
    expect(exempt).toContain('<strong>Tax exempt</strong>');
    expect(exempt).not.toContain('Reverse charge');
  }, 30_000);

  it('leave an untaxed invoice as it was: no tax column, no breakdown, no notice', async () => {
    const untaxed: DocumentModel = { ...model, seller: { ...seller, country: null }, invoice: { ...taxed, buyer_tax: null, tax_breakdown: [], total_tax: 0, line_items: [line({ description: 'Platform fee' })] } };
    const html = renderHtml(untaxed);
    expect(html).not.toMatch(/<th class="num">Tax<\/th>|Tax breakdown|Total excluding tax|class="notice"/);
    const text = pdfText(await renderPdf(untaxed));
    expect(text).toMatch(/Description\s+Quantity\s+Unit amount\s+Discount\s+Amount\n/);
    expect(text).not.toMatch(/Tax breakdown|Total excluding tax/);
  }, 30_000);
});
