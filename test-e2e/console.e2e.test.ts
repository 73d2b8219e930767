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
    await check(page, '03-customer');

    // Its invoice: lines, totals and the PDF through its signed link (no key).
    const [invoice] = (await api.get(`/v1/invoices?customer_id=${customer.body.id}`)).body.items as Array<{ id: string; invoice_number: string }>;
    await page.getByRole('link', { name: invoice!.invoice_number }).click();
    await page.getByRole('heading', { name: `Invoice ${invoice!.invoice_number}` }).waitFor();
    expect(await page.getByRole('table').first().textContent()).toContain('$10.00');
    const pdfHref = await page.getByRole('link', { name: 'PDF' }).getAttribute('href');
    expect(pdfHref).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/hosted\/invoices\//);
    const pdf = await page.request.get(pdfHref!);
    expect([pdf.status(), pdf.headers()['content-type']]).toEqual([200, 'application/pdf']);
    expect((await pdf.body()).subarray(0, 5).toString()).toBe('%PDF-');
    await check(page, '04-invoice');

    await page.getByRole('link', { name: 'Invoices' }).click();
    await page.getByRole('heading', { name: 'Invoices' }).waitFor();
    await page.getByRole('link', { name: invoice!.invoice_number }).waitFor();
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
});
