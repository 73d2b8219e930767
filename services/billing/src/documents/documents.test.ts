import type { InvoiceResponse } from '@billstream/contracts';
import { fontRuns } from './fonts';
import { escapeHtml, renderHtml } from './html';
import { formatDecimal, formatMinor, formatQuantity, type DocumentModel } from './model';
import { renderPdf } from './pdf';

const invoice: InvoiceResponse = {
  id: 'inv_1',
  invoice_number: 'INV-202611-00001',
  customer_id: 'cus_1',
  subscription_id: null,
  subscription_customer_id: null,
  billing_reason: 'SUBSCRIPTION_CREATE',
  status: 'finalized',
  payment_status: 'pending',
  currency: 'usd',
  period_start: '2026-11-01T00:00:00.000Z',
  period_end: '2026-12-01T00:00:00.000Z',
  due_date: '2026-12-01T00:00:00.000Z',
  overdue: false,
  subtotal: 123456,
  total_discount: 456,
  discounts: [{ discount_id: 'dis_1', amount: 456 }],
  excess_credit: 0,
  total_prepaid_credits_applied: 0,
  total: 123000,
  total_tax: 0,
  total_excluding_tax: 123000,
  tax_breakdown: [],
  reverse_charge: false,
  tax_exempt_reason: null,
  tax_status: 'ok',
  buyer_tax: null,
  pre_payment_credit_notes_amount: 0,
  post_payment_credit_notes_amount: 0,
  amount_due: 123000,
  amount_paid: 0,
  amount_remaining: 123000,
  hosted_invoice_url: null,
  invoice_pdf_url: null,
  available_actions: ['pay', 'credit', 'void'],
  line_items: [
    {
      id: 'li_1',
      price_id: 'price_1',
      price_type: 'USAGE',
      meter_id: 'mtr_1',
      description: 'API calls <b>',
      quantity: '1000.500000',
      unit_amount: '1.2339',
      line_type: 'CHARGE',
      amount: 123456,
      offset_amount: 0,
      discount_amount: 456,
      net_amount: 123000,
      credited_amount: 0,
      prepaid_credits_applied: 0,
      period_start: null,
      period_end: null,
      tax_amount: 0,
      taxes: [],
      tax_behavior: null,
    },
  ],
  finalized_at: '2026-11-01T00:00:00.000Z',
  voided_at: null,
  created_at: '2026-11-01T00:00:00.000Z',
  updated_at: '2026-11-01T00:00:00.000Z',
  tenant_id: 't',
  environment_id: 'e',
};

const model: DocumentModel = {
  invoice,
  seller: { company_name: 'Acme & Söhne', address: 'Street 1\nBerlin', logo_url: 'https://example.com/logo.png" onerror="x', footer: null, tax_id: null },
  buyer: { id: 'cus_1', external_id: 'ext-1', name: '<script>alert(1)</script> 山田', email: 'a@example.com', address: ['Москва'] },
  payments: [],
  creditNotes: [],
};

describe('invoice documents', () => {
  it('format money in the currency minor digits, unit amounts and quantities as stored', () => {
    expect(formatMinor(123456, 'usd')).toBe('1,234.56 USD');
    expect(formatMinor(-5, 'usd')).toBe('-0.05 USD');
    expect(formatMinor(4900, 'jpy')).toBe('4,900 JPY');
    expect(formatMinor(12345, 'kwd')).toBe('12.345 KWD');
    expect(formatDecimal('49', 'usd')).toBe('49.00 USD');
    expect(formatDecimal('0.0005', 'usd')).toBe('0.0005 USD');
    expect(formatDecimal('4900', 'jpy')).toBe('4,900 JPY');
    expect(formatQuantity('1000.500000')).toBe('1000.5');
    expect(formatQuantity('3.000')).toBe('3');
  });

  it('escape every text of the HTML, attributes included', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    const html = renderHtml(model);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; 山田');
    expect(html).toContain('API calls &lt;b&gt;');
    expect(html).toContain('Acme &amp; Söhne');
    expect(html).toContain('src="https://example.com/logo.png&quot; onerror=&quot;x"');
    expect(html).not.toMatch(/<script|onerror="/);
  });

  it('cut text into runs of the font that has the glyphs', () => {
    expect(fontRuns('Жанна Ωμέγα 山田 太郎 Ltd', 'sans')).toEqual([
      { font: 'sans', text: 'Жанна Ωμέγα ' },
      { font: 'cjk', text: '山田 太郎 ' },
      { font: 'sans', text: 'Ltd' },
    ]);
  });

  it('render the same PDF bytes for the same model, whenever rendered; its dates and /ID from the invoice', async () => {
    const first = await renderPdf(model);
    await new Promise((r) => setTimeout(r, 1100));
    const second = await renderPdf(model);
    expect(second.equals(first)).toBe(true);
    const text = first.toString('latin1');
    expect(text).toMatch(/\/CreationDate \d+ 0 R/);
    expect(text).toContain('(D:20261101000000Z)');
    expect(text).toMatch(/\/ID \[<[0-9a-f]{32}> <[0-9a-f]{32}>\]/);
    expect((await renderPdf({ ...model, invoice: { ...invoice, finalized_at: '2026-11-02T00:00:00.000Z' } })).equals(first)).toBe(false);
  }, 30_000);

  it('render an invoice whose texts are all Latin (the CJK font is registered at its first run, as npm run demo needed: a 500 before)', async () => {
    const latin: typeof model = { ...model, seller: { ...model.seller!, company_name: 'Acme', address: 'Street 1' }, buyer: { ...model.buyer, name: 'Hooli Inc', address: [] } };
    const pdf = await renderPdf(latin);
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect((await renderPdf(latin)).equals(pdf)).toBe(true);
  }, 30_000);
});
