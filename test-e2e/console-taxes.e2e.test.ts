import type { Locator, Page } from 'playwright-core';
import { waitFor, type ApiClient } from '@billstream/testing';
import { startConsoleStack, type ConsoleStack } from './console/harness';

/**
 * Tax in the console (docs/api/taxes.md, ADR 0050), in Debian's chromium on the embedded default
 * (./console/harness.ts): the tax rates page lists, creates, edits and archives rates, with the
 * schema's and the API's messages next to the fields they name; a taxed invoice shows its lines'
 * tax, the breakdown per rate, the totals and its credit notes' tax; a reverse-charged one says
 * so. Data is made through the API and every outcome checked through it too; every page is
 * checked with axe-core and its screenshot written (40-... onward).
 */
jest.setTimeout(600_000);

interface Invoice {
  id: string;
  invoice_number: string;
  total: number;
  total_tax: number;
  reverse_charge: boolean;
  line_items: Array<{ id: string }>;
}

describe('tax in the console, in a real browser, on the embedded default', () => {
  let stack: ConsoleStack;
  let api: ApiClient;
  let page: Page;

  beforeAll(async () => {
    // The duplicate code's 409 is the one failed request the journey makes on purpose.
    stack = await startConsoleStack([/status of 409/]);
    api = stack.api;
    page = await stack.newPage();
    await page.goto(`${stack.base}/console/`);
    await page.getByLabel('API key').fill(stack.key);
    await page.getByRole('button', { name: 'Open the console' }).click();
    await page.getByRole('heading', { name: 'Customers' }).waitFor();
  });
  afterAll(async () => {
    await stack?.stop();
  });
  afterEach(() => {
    expect(stack.problems).toEqual([]);
  });

  const rowOf = (text: string): Locator => page.getByRole('row').filter({ hasText: text }).first();
  const status = (text: string) => page.getByRole('status').filter({ hasText: text }).waitFor();
  /** The message an input shows: the text of what its aria-describedby names. */
  const describedText = (input: Locator) =>
    input.evaluate((el: { getAttribute(n: string): string | null; ownerDocument: { getElementById(id: string): { textContent: string | null } | null } }) =>
      (el.getAttribute('aria-describedby') ?? '')
        .split(' ')
        .filter(Boolean)
        .map((id) => el.ownerDocument.getElementById(id)?.textContent ?? '')
        .join(' | '),
    );
  const shows = async (input: Locator, text: string) => waitFor(async () => (await describedText(input)).includes(text), { what: `"${text}" next to the field` });

  it('tax rates: creates a rate (the schema\'s and the API\'s errors at their fields), edits its name and description, archives it', async () => {
    expect((await api.post('/v1/tax_rates', { code: 'US_CA', name: 'California', percentage: '7.25', tax_type: 'SALES_TAX', country: 'US', region: 'US-CA' })).status).toBe(201);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Tax rates', exact: true }).click();
    await page.getByRole('heading', { name: 'Tax rates' }).waitFor();
    await rowOf('US_CA').waitFor();
    expect(await rowOf('US_CA').textContent()).toContain('7.25 %');
    expect(await rowOf('US_CA').textContent()).toContain('US / US-CA');

    await page.getByRole('button', { name: 'New tax rate' }).click();
    const form = page.getByRole('form', { name: 'Create a tax rate' });
    await form.getByLabel('Code').fill('DE_VAT_19');
    await form.getByLabel('Name').fill('Umsatzsteuer 19 %');
    await form.getByLabel('Percentage').fill('101');
    await form.getByLabel('Country').fill('DE');
    await form.getByLabel('Region').fill('US-CA');
    await form.getByRole('button', { name: 'Create tax rate' }).click();
    // The route's own schema, before anything is sent.
    await shows(form.getByLabel('Percentage'), 'must be');
    await shows(form.getByLabel('Region'), 'must be a subdivision of DE');
    await stack.check(page, '40-tax-rate-invalid');
    // The API's: the code is taken (409, field code).
    await form.getByLabel('Percentage').fill('19');
    await form.getByLabel('Region').fill('');
    await form.getByLabel('Code').fill('US_CA');
    await form.getByRole('button', { name: 'Create tax rate' }).click();
    await shows(form.getByLabel('Code'), 'US_CA');
    expect((await api.get('/v1/tax_rates')).body.items).toHaveLength(1);
    await form.getByLabel('Code').fill('DE_VAT_19');
    await form.getByLabel('Description').fill('Regelsteuersatz');
    await form.getByRole('button', { name: 'Create tax rate' }).dblclick();
    await status('Tax rate DE_VAT_19 created.');
    await rowOf('DE_VAT_19').waitFor();
    const rates = (await api.get('/v1/tax_rates?country=DE')).body.items as Array<{ id: string; code: string; percentage: string; tax_type: string; description: string | null; active: boolean; name: string }>;
    expect(rates.map((r) => [r.code, r.percentage, r.tax_type, r.description, r.active])).toEqual([['DE_VAT_19', '19', 'VAT', 'Regelsteuersatz', true]]);
    await stack.check(page, '41-tax-rates');

    // Edit: an empty name is the schema's error; a new name and no description saves.
    await page.getByRole('button', { name: 'Edit DE_VAT_19' }).click();
    const edit = page.getByRole('form', { name: 'Edit DE_VAT_19' });
    expect(await edit.getByLabel('Name').inputValue()).toBe('Umsatzsteuer 19 %');
    await edit.getByLabel('Name').fill(' ');
    await edit.getByRole('button', { name: 'Save tax rate' }).click();
    await shows(edit.getByLabel('Name'), 'must not be empty');
    await edit.getByLabel('Name').fill('USt 19 %');
    await edit.getByLabel('Description').fill('');
    await stack.check(page, '42-tax-rate-edit');
    await edit.getByRole('button', { name: 'Save tax rate' }).click();
    await status('Tax rate DE_VAT_19 saved.');
    await waitFor(async () => (await rowOf('DE_VAT_19').textContent())?.includes('USt 19 %') ?? false, { what: 'the new name in the row' });
    expect((await api.get(`/v1/tax_rates/${rates[0]!.id}`)).body).toMatchObject({ name: 'USt 19 %', description: null, percentage: '19' });

    // Archive, after a confirm step: archived in the list and through the API; no more actions.
    await page.getByRole('button', { name: 'Archive DE_VAT_19' }).click();
    await page.getByRole('alertdialog').waitFor();
    await stack.check(page, '43-tax-rate-archive');
    await page.getByRole('alertdialog').getByRole('button', { name: 'Archive DE_VAT_19' }).click();
    await status('Tax rate DE_VAT_19 archived.');
    await waitFor(async () => (await rowOf('DE_VAT_19').textContent())?.includes('archived') ?? false, { what: 'the archived row' });
    expect(await rowOf('DE_VAT_19').getByRole('button').count()).toBe(0);
    expect((await api.get(`/v1/tax_rates/${rates[0]!.id}`)).body.active).toBe(false);
    await page.getByLabel('Status').selectOption('true');
    await waitFor(async () => (await page.getByRole('row').filter({ hasText: 'DE_VAT_19' }).count()) === 0, { what: 'the active filter' });
    await rowOf('US_CA').waitFor();
  });

  /** A customer, a subscription of `prices` (amount and extra fields) and its first invoice, finalized. */
  async function taxedInvoice(customer: Record<string, unknown>, prices: Array<[string, Record<string, unknown>]>): Promise<Invoice> {
    const cust = await api.post('/v1/customers', { external_customer_id: `tax-console-${Date.now()}`, ...customer });
    expect(cust.status).toBe(201);
    const plan = await api.post('/v1/plans', { name: `Taxed ${Date.now()}`, prices: prices.map(([amount, extra]) => ({ type: 'FIXED', currency: 'eur', amount, billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE', ...extra })) });
    expect(plan.status).toBe(201);
    // Billing learns the customer from its events: a subscription before that is a 503, retried.
    const sub = await waitFor(async () => {
      const res = await api.post('/v1/subscriptions', { customer_id: cust.body.id, plan_id: plan.body.id });
      if (res.status === 503) return undefined;
      expect(res.status).toBe(201);
      return res.body as { id: string };
    }, { what: 'the subscription' });
    const [draft] = (await api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.items as Invoice[];
    const finalized = await api.post(`/v1/invoices/${draft!.id}/finalize`, {});
    expect(finalized.status).toBe(200);
    return finalized.body as Invoice;
  }

  it('a taxed invoice: its lines\' rates and tax, inclusive amounts marked, the breakdown per rate with 0 %, the totals, its credit notes\' tax; a reverse charge said', async () => {
    const settings = await api.put('/v1/settings/billing', {
      tax: { enabled: true, reverse_charge: { enabled: true, seller_country: 'DE' } },
      invoice_settings: { company_name: 'Seller GmbH', address: '1 Hafenstrasse\n20457 Hamburg', country: 'DE', tax_id: 'DE136695976' },
    });
    expect(settings.status).toBe(200);
    const de = (await api.post('/v1/tax_rates', { code: 'VAT_DE', name: 'USt', percentage: '19', tax_type: 'VAT', country: 'DE' })).body.id as string;
    const zero = (await api.post('/v1/tax_rates', { code: 'ZERO', name: 'Zero', percentage: '0', tax_type: 'VAT' })).body.id as string;
    const invoice = await taxedInvoice({ name: 'Käufer AG', address_country: 'DE', tax_ids: [{ type: 'eu_vat', value: 'DE811907980' }] }, [
      ['10', { tax_rate_ids: [de], display_name: 'Platform' }],
      ['11.90', { tax_rate_ids: [de], tax_behavior: 'inclusive', display_name: 'Support' }],
      ['5', { tax_rate_ids: [zero], display_name: 'Books' }],
    ]);
    expect(invoice).toMatchObject({ total_tax: 380, total: 2880 });
    const note = await api.post('/v1/credit_notes', { invoice_id: invoice.id, reason: 'OTHER', lines: [{ invoice_line_item_id: invoice.line_items[0]!.id, amount: 1000 }] });
    expect(note.body).toMatchObject({ tax_amount: 190, total: 1190 });

    await page.goto(`${stack.base}/console/#/invoices/${invoice.id}`);
    await page.getByRole('heading', { name: `Invoice ${invoice.invoice_number}` }).waitFor();
    const lines = page.getByRole('table', { name: 'Lines' });
    expect(await lines.getByRole('columnheader').allTextContents()).toEqual(['Description', 'Type', 'Quantity', 'Unit', 'Tax', 'Amount', 'Net', 'Credits applied']);
    const cells = async (row: Locator) => (await row.getByRole('cell').allInnerTexts()).map((c) => c.replace(/\s+/g, ' ').trim());
    const rows = lines.getByRole('row');
    expect((await cells(rows.filter({ hasText: 'Platform' })))[4]).toBe('19 % €1.90');
    expect((await cells(rows.filter({ hasText: 'Support' }))).slice(4, 6)).toEqual(['19 % €1.90', '€11.90 incl. tax']);
    expect((await cells(rows.filter({ hasText: 'Books' })))[4]).toBe('0 % €0.00');
    const breakdown = page.getByRole('table', { name: 'Tax breakdown' });
    expect(await cells(breakdown.getByRole('row').filter({ hasText: 'VAT_DE' }))).toEqual(['VAT_DE (DE)', '19 %', '€20.00', '€3.80']);
    expect(await cells(breakdown.getByRole('row').filter({ hasText: 'ZERO' }))).toEqual(['ZERO', '0 %', '€5.00', '€0.00']);
    const totals = (await page.locator('dl.totals').innerText()).replace(/\s+/g, ' ');
    expect(totals).toContain('Subtotal €26.90');
    expect(totals).toContain('Total excluding tax €25.00 Tax €3.80');
    expect(totals).toContain('Total €28.80');
    expect(await page.getByText('eu_vat DE811907980').count()).toBe(1);
    const noteRow = page.getByRole('table', { name: 'Credit notes' }).getByRole('row').filter({ hasText: note.body.credit_note_number });
    expect((await cells(noteRow)).slice(4, 7)).toEqual(['€10.00', '€1.90', '€11.90']);
    await stack.check(page, '44-invoice-taxed');

    const reverse = await taxedInvoice({ name: 'Acheteur SARL', address_country: 'FR', tax_ids: [{ type: 'eu_vat', value: 'FR40303265045' }] }, [['10', { tax_rate_ids: [de], display_name: 'Platform' }]]);
    expect(reverse).toMatchObject({ reverse_charge: true, total_tax: 0 });
    await page.goto(`${stack.base}/console/#/invoices/${reverse.id}`);
    await page.getByRole('heading', { name: `Invoice ${reverse.invoice_number}` }).waitFor();
    await page.getByRole('note').filter({ hasText: 'Reverse charge.' }).waitFor();
    expect((await page.locator('dl.totals').innerText()).replace(/\s+/g, ' ')).toContain('Tax (reverse charge) €0.00');
    expect((await cells(page.getByRole('table', { name: 'Lines' }).getByRole('row').filter({ hasText: 'Platform' })))[4]).toBe('–');
    await stack.check(page, '45-invoice-reverse-charge');
  });
});
