import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb, type Db } from '@billstream/db';
import { startIntegrationStack, TEST_TENANT, type IntegrationStack } from '../../support/stack';
import { taxedInvoiceHelpers } from './taxes-invoices';

/**
 * Tax on invoice documents (docs/api/taxes.md#documents) as a client meets it: through the
 * gateway, on the whole stack with real Postgres and Kafka. The PDF is read back with poppler's
 * `pdftotext` (poppler-utils), the hosted page's HTML read as served. A taxed invoice shows the
 * seller's country and tax id, the buyer's tax ids, each line's rates and tax, a breakdown per rate
 * (0 % too), total excluding tax, tax and total; a reverse-charged one the seller's legal text.
 */
const LEGAL = 'Steuerschuldnerschaft des Leistungsempfängers: reverse charge, Article 196 of Directive 2006/112/EC.';

describe('tax on invoice documents through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let db: Db;
  let t: Awaited<ReturnType<typeof taxedInvoiceHelpers>>;
  let key: string;
  const rates: Record<string, string> = {};
  const dir = mkdtempSync(path.join(os.tmpdir(), 'billstream-tax-documents-'));
  let n = 0;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0' } } });
    db = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    t = await taxedInvoiceHelpers(stack, db);
    key = await stack.keyFor(TEST_TENANT, 'taxes-invoices', ['*']);
    rates.de19 = await t.rate('DOC_DE_19', '19', { country: 'DE' });
    rates.zero = await t.rate('DOC_ZERO', '0');
    await t.settings({ enabled: true, rounding: 'LINE', reverse_charge: { enabled: true, seller_country: 'DE' } });
  }, 120_000);
  afterAll(async () => {
    await db?.destroy();
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function fetchDocument(pathAndQuery: string): Promise<Buffer> {
    const res = await fetch(`${stack.embedded.url}${pathAndQuery}`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  }
  function pdfText(bytes: Buffer): string {
    const file = path.join(dir, `doc-${++n}.pdf`);
    writeFileSync(file, bytes);
    if (process.env.TAX_DOC_PNG) execFileSync('pdftoppm', ['-png', '-r', '80', '-f', '1', '-l', '1', file, path.join(process.env.TAX_DOC_PNG, `int-${n}`)]);
    return execFileSync('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-'], { encoding: 'utf8' });
  }
  const flat = (text: string) => text.replace(/\s+/g, ' ');

  it('refuses a reverse-charge text that is empty or too long, naming the field, and saves nothing', async () => {
    const before = (await t.api.get('/v1/settings/billing')).body;
    for (const text of ['', 'x'.repeat(501), 42]) {
      const res = await t.api.put('/v1/settings/billing', { invoice_settings: { reverse_charge_text: text } });
      expect([res.status, res.body.error?.details?.field]).toEqual([400, 'invoice_settings.reverse_charge_text']);
    }
    expect((await t.api.get('/v1/settings/billing')).body).toEqual(before);
    const saved = await t.api.put('/v1/settings/billing', { invoice_settings: { reverse_charge_text: LEGAL } });
    expect(saved.status).toBe(200);
    expect(saved.body.invoice_settings).toMatchObject({ company_name: 'Seller GmbH', country: 'DE', tax_id: 'DE136695976', reverse_charge_text: LEGAL });
  });

  it('prints a taxed invoice: the parties\' tax identities, each line\'s rate and tax, the breakdown per rate with 0 %, the totals; the hosted page says the same', async () => {
    const cust = await t.customer({ name: 'Käufer AG', address_country: 'DE', address_city: 'München', tax_ids: [{ type: 'eu_vat', value: 'DE811907980' }] });
    const [draft] = await t.subscribe(cust, [['10', { tax_rate_ids: [rates.de19] }], ['11.90', { tax_rate_ids: [rates.de19], tax_behavior: 'inclusive' }], ['5', { tax_rate_ids: [rates.zero] }]]);
    const invoice = await t.finalize(draft!.id);
    expect(invoice).toMatchObject({ subtotal: 2690, total_tax: 380, total_excluding_tax: 2500, total: 2880, reverse_charge: false });

    const text = pdfText(await fetchDocument(`/v1/invoices/${invoice.id}/pdf`));
    for (const expected of ['Seller GmbH', 'Germany', 'Tax ID: DE136695976', 'Käufer AG', 'VAT ID: DE811907980']) expect(flat(text)).toContain(expected);
    expect(text).toMatch(/Description\s+Quantity\s+Unit amount\s+Discount\s+Tax\s+Amount/);
    expect(text).toMatch(/\b1\s+10\.00 USD\s+19%\s+10\.00 USD/);
    expect(text).toMatch(/\b1\s+11\.90 USD\s+19%\s+11\.90 USD/);
    expect(text).toMatch(/1\.90 USD\s+incl\. tax/);
    expect(text).toMatch(/\b1\s+5\.00 USD\s+0%\s+5\.00 USD/);
    for (const [label, amount] of [
      ['Subtotal', '26\\.90 USD'],
      ['Total excluding tax', '25\\.00 USD'],
      ['\\n\\s*Tax', '3\\.80 USD'],
      ['Total', '28\\.80 USD'],
      ['Amount due', '28\\.80 USD'],
    ]) {
      expect(text).toMatch(new RegExp(`${label}\\s+${amount}`));
    }
    expect(text).toMatch(/Rate\s+Percentage\s+Taxable amount\s+Tax/);
    expect(text).toMatch(/DOC_DE_19 \(DE\)\s+19%\s+20\.00 USD\s+3\.80 USD/);
    expect(text).toMatch(/DOC_ZERO\s+0%\s+5\.00 USD\s+0\.00 USD/);
    expect(text).not.toContain('Reverse charge');

    // A credit note of the exclusive line's 10.00 returns its 1.90: the live page lists its tax and total.
    const note = await t.api.post('/v1/credit_notes', { invoice_id: invoice.id, reason: 'OTHER', lines: [{ invoice_line_item_id: invoice.line_items[0]!.id, amount: 1000 }] });
    expect(note.body).toMatchObject({ amount: 1000, tax_amount: 190, total: 1190 });
    const html = (await fetchDocument(`/v1/invoices/${invoice.id}/html`)).toString('utf8');
    expect(html).toContain('<th class="num">Tax</th>');
    expect(html).toContain('VAT ID: DE811907980');
    expect(html).toMatch(/19%<div class="muted small">1\.90 USD<\/div>/);
    expect(html).toMatch(/11\.90 USD<div class="muted small">incl\. tax<\/div>/);
    expect(html).toContain('<tr><td>DOC_DE_19 (DE)</td><td class="num">19%</td><td class="num">20.00 USD</td><td class="num">3.80 USD</td></tr>');
    expect(html).toContain('<tr><td>DOC_ZERO</td><td class="num">0%</td><td class="num">5.00 USD</td><td class="num">0.00 USD</td></tr>');
    expect(html).toContain('<td>Total excluding tax</td><td class="num">25.00 USD</td>');
    expect(html).toContain(`<td>${note.body.credit_note_number}</td>`);
    expect(html).toContain('<td class="num">-1.90 USD</td><td class="num">-11.90 USD</td>');
  }, 60_000);

  it('prints a reverse-charged invoice with the seller\'s legal text and no tax on its lines; an exempt buyer\'s says so', async () => {
    const cust = await t.customer({ name: 'Acheteur SARL', address_country: 'FR', tax_ids: [{ type: 'eu_vat', value: 'FR40303265045' }] });
    const [draft] = await t.subscribe(cust, [['10', { tax_rate_ids: [rates.de19] }]]);
    const invoice = await t.finalize(draft!.id);
    expect(invoice).toMatchObject({ reverse_charge: true, total_tax: 0, total: 1000 });
    const text = flat(pdfText(await fetchDocument(`/v1/invoices/${invoice.id}/pdf`)));
    expect(text).toContain(`Reverse charge ${LEGAL}`);
    expect(text).toContain('VAT ID: FR40303265045');
    expect(text).toMatch(/1 10\.00 USD – 10\.00 USD/);
    expect(text).toMatch(/Tax \(reverse charge\) 0\.00 USD/);
    expect((await fetchDocument(`/v1/invoices/${invoice.id}/html`)).toString('utf8')).toContain(`<div class="notice"><strong>Reverse charge</strong>${LEGAL}</div>`);

    const exempt = await t.customer({ name: 'Charity e.V.', address_country: 'DE', tax_exempt: 'exempt' });
    await t.billingKnows(exempt, 'exempt');
    const [exemptDraft] = await t.subscribe(exempt, [['10', { tax_rate_ids: [rates.de19] }]]);
    const exemptInvoice = await t.finalize(exemptDraft!.id);
    expect(exemptInvoice.tax_exempt_reason).toBe('customer_exempt');
    const exemptText = flat(pdfText(await fetchDocument(`/v1/invoices/${exemptInvoice.id}/pdf`)));
    expect(exemptText).toContain('Tax exempt Tax exempt: the buyer is exempt from tax; no tax is charged.');
    expect(exemptText).not.toContain('Reverse charge');
  }, 60_000);
});
