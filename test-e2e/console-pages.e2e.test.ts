import type { Page } from 'playwright-core';
import type { ApiClient } from '@billstream/testing';
import { startConsoleStack, type ConsoleStack } from './console/harness';

/**
 * The console's read pages of issue #33 beyond customers and invoices (plans and the tier
 * editor, API keys, ...), in Debian's chromium on the embedded default (./console/harness.ts).
 * Data is made through the API; every page is checked with axe-core and its screenshot written
 * (20-... onward; CONSOLE_SCREENSHOTS=docs/console refreshes the committed ones).
 */
jest.setTimeout(600_000);

describe('the console read pages in a real browser, on the embedded default', () => {
  let stack: ConsoleStack;
  let api: ApiClient;
  let page: Page;

  beforeAll(async () => {
    stack = await startConsoleStack();
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

  const nav = (name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true });

  it('plans: the server pages the list; a plan shows its prices and previews a tiered price for a typed quantity', async () => {
    const meter = await api.post('/v1/meters', { name: 'Calls', event_name: 'pages_call', aggregation: { type: 'COUNT' } });
    expect(meter.status).toBe(201);
    const tiers = [
      { up_to: '100', unit_amount: '0.10' },
      { up_to: '1000', unit_amount: '0.05', flat_amount: '2' },
      { up_to: null, unit_amount: '0.01', flat_amount: '10' },
    ];
    const tiered = { type: 'USAGE', currency: 'usd', billing_model: 'TIERED', tier_mode: 'SLAB', tiers, billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', meter_id: meter.body.id, display_name: 'Calls' };
    const fixed = { type: 'FIXED', currency: 'usd', amount: '20', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' };
    const plan = await api.post('/v1/plans', { name: 'Growth <b>tiered</b>', lookup_key: 'growth', prices: [fixed, tiered] });
    expect(plan.status).toBe(201);
    for (let i = 0; i < 26; i++) expect((await api.post('/v1/plans', { name: `Plan ${String(i).padStart(2, '0')}` })).status).toBe(201);

    await nav('Plans').click();
    await page.getByRole('heading', { name: 'Plans' }).waitFor();
    await page.getByText('1–25 of 27').waitFor();
    expect(await page.locator('tbody tr').count()).toBe(25);
    await check('20-plans');
    await page.getByRole('link', { name: 'Growth <b>tiered</b>' }).click();
    await page.getByRole('heading', { name: 'Growth <b>tiered</b>' }).waitFor();
    expect(await page.locator('b').count()).toBe(0);
    expect(await page.getByRole('row').filter({ hasText: 'Calls' }).first().textContent()).toContain('slab, 3 tiers, USD');

    // 2500 calls, slab: 100 x 0.10 + (900 x 0.05 + 2) + (1500 x 0.01 + 10) = 82.00
    await page.getByLabel('Quantity').fill('2500');
    await page.getByText('Total for 2500: $82.00').waitFor();
    // An edit of a tier changes the preview only (nothing saved): volume at tier 3 = 2500 x 0.01 + 10.
    await page.getByLabel('Tier mode').selectOption('VOLUME');
    await page.getByText('Total for 2500: $35.00').waitFor();
    await page.getByLabel('Tier 3 unit amount').fill('0.02');
    await page.getByText('Total for 2500: $60.00').waitFor();
    await check('21-plan');
    const stored = await api.get(`/v1/plans/${plan.body.id}`);
    expect(stored.body.prices.find((p: { type: string }) => p.type === 'USAGE').tiers[2].unit_amount).toBe('0.01');
  });

  it('API keys: a new key is shown once and works; a revoked key answers 401', async () => {
    await nav('API keys').click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByLabel('Name').fill('reporting');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('new-key').textContent())!;
    expect(secret).toMatch(/^bsk_/);
    await page.getByRole('cell', { name: 'reporting', exact: true }).waitFor();
    await check('22-api-keys-created');
    expect((await api.withKey(secret).get('/v1/customers?limit=1')).status).toBe(200);
    // Once: "Done" forgets it, and neither the list, the URL nor the tab's storage has it.
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByTestId('new-key').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    expect(page.url()).not.toContain(secret);
    expect(await page.evaluate(() => JSON.stringify(sessionStorage) + JSON.stringify(localStorage))).not.toContain(secret);

    await page.getByRole('button', { name: 'Revoke reporting' }).click();
    await page.getByRole('alertdialog').waitFor();
    await check('23-api-keys-revoke');
    await page.getByRole('alertdialog').getByRole('button', { name: 'Revoke reporting' }).click();
    await page.getByRole('alertdialog').waitFor({ state: 'detached' });
    await page.getByRole('row').filter({ hasText: 'reporting' }).getByRole('button').waitFor({ state: 'detached' });
    expect((await api.withKey(secret).get('/v1/customers?limit=1')).status).toBe(401);
    expect((await api.get('/v1/customers?limit=1')).status).toBe(200);
  });

  const check = (name: string) => stack.check(page, name);
});

// What page.evaluate's callbacks use in the browser (the tests compile without the DOM library).
declare const sessionStorage: Record<string, string>;
declare const localStorage: Record<string, string>;
