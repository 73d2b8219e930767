import { waitFor, type ApiClient } from '@billstream/testing';
import { startConsoleStack, type ConsoleStack } from './console/harness';

/**
 * The console (issue #33, ADR 0050) as a person meets it, on the embedded default and Debian's
 * chromium (./console/harness.ts). Data is made through the API, as a client system would; the
 * console only reads it.
 */
// What page.evaluate's callbacks use in the browser (the tests compile without the DOM library).
declare const window: Record<string, unknown>;
declare const document: { cookie: string };
declare const localStorage: Record<string, string>;
declare const sessionStorage: Record<string, string>;

jest.setTimeout(600_000);

describe('the console in a real browser, on the embedded default', () => {
  let stack: ConsoleStack;
  let base: string;
  let key: string;
  let api: ApiClient;

  beforeAll(async () => {
    // The wrong key's 401 is the one failed request the journey makes on purpose.
    stack = await startConsoleStack([/status of 401/]);
    ({ base, key, api } = stack);
    expect(stack.output()).toContain(`console:  ${base}/console/`);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const newPage = () => stack.newPage();
  const check = (page: Parameters<ConsoleStack['check']>[0], name: string) => stack.check(page, name);

  it('serves the page with a strict Content-Security-Policy and no inline script', async () => {
    const res = await fetch(`${base}/console/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect((await fetch(`${base}/console`, { redirect: 'manual' })).status).toBe(308);
    const missing = await fetch(`${base}/console/assets/none.js`);
    expect(missing.status).toBe(404);
  });

  it('a support person enters the key, finds a customer, sees its wallet, usage and invoice, and opens the PDF', async () => {
    // What a client system made: a plan of 10.00 a month plus 0.50 a call, a customer whose name
    // is markup (rendered as text), a wallet, a subscription and 6 calls.
    const meter = await api.post('/v1/meters', { name: 'API calls', event_name: 'console_call', aggregation: { type: 'COUNT' } });
    expect(meter.status).toBe(201);
    const fixed = { type: 'FIXED', currency: 'usd', amount: '10', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' };
    const usage = { type: 'USAGE', currency: 'usd', amount: '0.5', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', meter_id: meter.body.id };
    const plan = await api.post('/v1/plans', { name: 'Starter', prices: [fixed, usage] });
    expect(plan.status).toBe(201);
    const customer = await api.post('/v1/customers', { external_customer_id: 'acme-console', name: 'Acme <img src=x onerror="window.__owned=1">', email: 'billing@acme.test' });
    expect(customer.status).toBe(201);
    for (let i = 0; i < 3; i++) expect((await api.post('/v1/customers', { external_customer_id: `other-${i}`, name: `Other ${i}` })).status).toBe(201);
    const wallet = await api.post('/v1/wallets', { customer_id: customer.body.id, currency: 'usd', initial_credits_to_load: '50' });
    expect(wallet.status).toBe(201);
    const sub = await api.post('/v1/subscriptions', { customer_id: customer.body.id, plan_id: plan.body.id });
    expect(sub.status).toBe(201);
    const events = Array.from({ length: 6 }, (_, i) => ({ event_name: 'console_call', external_customer_id: 'acme-console', event_id: `console-${i}`, timestamp: new Date().toISOString() }));
    expect((await api.post('/v1/events/bulk', { events })).status).toBe(202);
    await waitFor(async () => (await api.get(`/v1/subscriptions/${sub.body.id}/usage`)).body.amount === 300, { timeoutMs: 20_000, what: 'the 6 calls stored' });
    expect((await api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);

    const page = await newPage();
    await page.goto(`${base}/console/`);
    await page.getByLabel('API key').waitFor();
    await check(page, '01-key');
    // A wrong key: the API's message next to the form, nothing kept.
    await page.getByLabel('API key').fill('bsk_wrong_key_000000000000000000');
    await page.getByRole('button', { name: 'Open the console' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/API key/i);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Open the console' }).click();

    // Customers: the server's page, found by external id.
    await page.getByRole('heading', { name: 'Customers' }).waitFor();
    await page.getByRole('link', { name: 'acme-console' }).waitFor();
    expect(await page.getByText('1–4 of 4').count()).toBe(1);
    await check(page, '02-customers');
    await page.getByLabel('Value').fill('other-1');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('1–1 of 1').waitFor();
    expect(await page.locator('tbody tr').count()).toBe(1);
    await page.getByLabel('Value').fill('acme-console');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'acme-console' }).click();

    // The customer: markup in its name is text; the wallet's real-time balance; this period's usage.
    await page.getByRole('heading', { name: /Acme <img/ }).waitFor();
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __owned?: number }).__owned)).toBeUndefined();
    await page.getByRole('cell', { name: wallet.body.id }).waitFor();
    const walletRow = page.getByRole('row').filter({ hasText: wallet.body.id });
    expect(await walletRow.textContent()).toContain('$3.00');
    const usageRow = page.getByRole('row').filter({ hasText: sub.body.id }).filter({ hasText: meter.body.id });
    await usageRow.first().waitFor();
    expect(await usageRow.first().textContent()).toMatch(/6\$3\.00$/);
    // Names, not ids (issue #47 item 6): the subscription's plan by its name, a link to the plan; money in the currency's format.
    const subRow = page.getByRole('row').filter({ hasText: sub.body.id }).filter({ hasText: 'Change plan' });
    await subRow.getByRole('link', { name: 'Starter' }).waitFor();
    expect(await subRow.getByRole('link', { name: 'Starter' }).getAttribute('href')).toBe(`#/plans/${plan.body.id}`);
    expect(await subRow.textContent()).not.toContain(plan.body.id);
    expect(await walletRow.textContent()).toContain('$50.00');
    await check(page, '03-customer');

    // Its invoice: lines, totals and the PDF through its signed link (no key).
    const [invoice] = (await api.get(`/v1/invoices?customer_id=${customer.body.id}`)).body.items as Array<{ id: string; invoice_number: string }>;
    await page.getByRole('link', { name: invoice!.invoice_number }).click();
    await page.getByRole('heading', { name: `Invoice ${invoice!.invoice_number}` }).waitFor();
    expect(await page.getByRole('table').first().textContent()).toContain('$10.00');
    // The customer by its name (markup as text), not its id.
    await page.locator('.facts').getByRole('link', { name: /^Acme <img/ }).waitFor();
    expect(await page.locator('.facts').first().textContent()).not.toContain(customer.body.id);
    const pdfHref = await page.getByRole('link', { name: 'PDF' }).getAttribute('href');
    expect(pdfHref).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/hosted\/invoices\//);
    const pdf = await page.request.get(pdfHref!);
    expect([pdf.status(), pdf.headers()['content-type']]).toEqual([200, 'application/pdf']);
    expect((await pdf.body()).subarray(0, 5).toString()).toBe('%PDF-');
    await check(page, '04-invoice');

    await page.getByRole('link', { name: 'Invoices' }).click();
    await page.getByRole('heading', { name: 'Invoices' }).waitFor();
    await page.getByRole('link', { name: invoice!.invoice_number }).waitFor();
    const invoiceRow = page.getByRole('row').filter({ hasText: invoice!.invoice_number });
    await invoiceRow.getByRole('link', { name: /^Acme <img/ }).waitFor();
    expect(await invoiceRow.textContent()).not.toContain(customer.body.id);
    await check(page, '05-invoices');

    // The key: in this tab's session storage only, never in a URL, local storage or a cookie.
    expect(page.url()).not.toContain(key);
    expect(await page.evaluate(() => [Object.keys(localStorage).length, document.cookie])).toEqual([0, '']);
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([key]);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => Object.keys(sessionStorage).length)).toBe(0);
    expect(stack.problems).toEqual([]);
  });

  it('shows names where a person looks for them and numbers as a person reads them: grouped quantities, money in the currency s format', async () => {
    // A usage plan of 0.001 a token with a threshold: the invoice it makes mid-period has a line of 1,234,567.5 tokens.
    const meter = await api.post('/v1/meters', { name: 'Tokens', event_name: 'console_tokens', aggregation: { type: 'SUM', field: 'tokens' } });
    expect(meter.status).toBe(201);
    const plan = await api.post('/v1/plans', { name: 'Scale tokens', prices: [{ type: 'USAGE', currency: 'usd', amount: '0.001', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', meter_id: meter.body.id }] });
    expect(plan.status).toBe(201);
    const customer = await api.post('/v1/customers', { external_customer_id: 'globex-console', name: 'Globex Ltd' });
    const sub = await api.post('/v1/subscriptions', { customer_id: customer.body.id, plan_id: plan.body.id, usage_thresholds: [{ amount: 100_000 }] });
    expect([customer.status, sub.status]).toEqual([201, 201]);
    const event = { event_name: 'console_tokens', external_customer_id: 'globex-console', event_id: 'console-tokens-1', timestamp: new Date().toISOString(), properties: { tokens: 1234567.5 } };
    expect((await api.post('/v1/events/bulk', { events: [event] })).status).toBe(202);
    const invoice = await waitFor(
      async () => {
        await api.post('/v1/cron/bill-subscriptions', {});
        const items = (await api.get(`/v1/invoices?subscription_id=${sub.body.id}`)).body.items as Array<{ id: string; invoice_number: string | null; billing_reason: string; total: number }>;
        return items.find((i) => i.billing_reason === 'SUBSCRIPTION_THRESHOLD' && i.invoice_number);
      },
      { timeoutMs: 30_000, what: 'the threshold invoice' },
    );
    expect(invoice.total).toBe(123_457);
    const note = await api.post('/v1/credit_notes', { invoice_id: invoice.id, reason: 'OTHER', amount: 123_400 });
    expect(note.status).toBe(201);

    const page = await newPage();
    await page.goto(`${base}/console/`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Open the console' }).click();
    await page.getByRole('heading', { name: 'Customers' }).waitFor();
    await page.goto(`${base}/console/#/customers/${customer.body.id}`);
    await page.getByRole('heading', { name: 'Globex Ltd' }).waitFor();
    const subRow = page.getByRole('row').filter({ hasText: sub.body.id }).filter({ hasText: 'Change plan' });
    await subRow.getByRole('link', { name: 'Scale tokens' }).waitFor();
    const usageRow = page.getByRole('row').filter({ hasText: sub.body.id }).filter({ hasText: meter.body.id });
    await usageRow.first().waitFor();
    expect(await usageRow.first().textContent()).toMatch(/Globex Ltd.*1,234,567\.5/);
    await check(page, '32-customer-names');

    await page.getByRole('link', { name: invoice.invoice_number! }).click();
    await page.getByRole('heading', { name: `Invoice ${invoice.invoice_number}` }).waitFor();
    await page.locator('.facts').getByRole('link', { name: 'Globex Ltd' }).waitFor();
    const line = page.getByRole('table').first().getByRole('row').nth(1);
    expect(await line.getByRole('cell').allTextContents()).toEqual(expect.arrayContaining(['1,234,567.5', '$0.001', '$1,234.57']));
    const noteRow = page.getByRole('table', { name: 'Credit notes' }).getByRole('row').filter({ hasText: note.body.credit_note_number });
    await noteRow.getByRole('link', { name: 'Globex Ltd' }).waitFor();
    expect(await noteRow.textContent()).toContain('$1,234.00');
    expect(await page.locator('.totals').textContent()).toContain('$1,234.57');
    await check(page, '33-invoice-names');

    await page.getByRole('link', { name: 'Invoices' }).click();
    const invoiceRow = page.getByRole('row').filter({ hasText: invoice.invoice_number! });
    await invoiceRow.getByRole('link', { name: 'Globex Ltd' }).waitFor();
    expect(await invoiceRow.textContent()).toContain('$1,234.57');
    expect(stack.problems).toEqual([]);
  });
});
