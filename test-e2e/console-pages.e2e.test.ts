import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { waitFor, type ApiClient } from '@billstream/testing';
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
  // A local webhook receiver: the embedded default may send to loopback over http, and plans no
  // retry within the journey, so a second attempt is the console's resend.
  const hooks: Buffer[] = [];
  let hookAnswer = 500;
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hooks.push(Buffer.concat(chunks));
      res.writeHead(hookAnswer).end();
    });
  });

  beforeAll(async () => {
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    process.env.WEBHOOK_ALLOW_INSECURE = 'true';
    process.env.WEBHOOK_RETRY_SCHEDULE = '1h';
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
    await new Promise((r) => receiver.close(r));
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

  it("webhooks: endpoints, an endpoint's deliveries and an event's attempts; a resend adds an attempt", async () => {
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const ep = await api.post('/v1/webhook-endpoints', { url: hookUrl, events: ['customer.created'], description: 'ERP sync' });
    expect(ep.status).toBe(201);
    expect((await api.post('/v1/customers', { external_customer_id: 'hooked', name: 'Hooked' })).status).toBe(201);
    const first = await waitFor(async () => (await api.get(`/v1/webhook-endpoints/${ep.body.id}/deliveries`)).body.deliveries[0], { timeoutMs: 30_000, what: 'the failed first attempt' });
    expect([first.attempt, first.status, hooks.length]).toEqual([1, 'failed', 1]);

    await nav('Webhooks').click();
    await page.getByRole('heading', { name: 'Webhook endpoints' }).waitFor();
    await check('24-webhooks');
    await page.getByRole('link', { name: hookUrl }).click();
    await page.getByRole('heading', { name: `Webhook endpoint ${hookUrl}` }).waitFor();
    await page.getByRole('cell', { name: first.event_id, exact: true }).waitFor();
    await check('25-webhook-deliveries');

    hookAnswer = 200;
    await page.getByRole('button', { name: `Resend ${first.event_id} (attempt 1)` }).first().click();
    await page.getByText(`Resent ${first.event_id}: attempt 2 succeeded (HTTP 200).`).waitFor();
    const attempts = page.getByRole('region', { name: `Attempts of ${first.event_id}` });
    await attempts.getByRole('cell', { name: 'succeeded' }).waitFor();
    expect(await attempts.locator('tbody tr').count()).toBe(2);
    await check('26-webhook-attempts');
    expect(hooks).toHaveLength(2);
    expect(hooks[1]!.equals(hooks[0]!)).toBe(true);
    const listed = await api.get(`/v1/webhook-endpoints/${ep.body.id}/deliveries?event_id=${first.event_id}`);
    expect(listed.body.deliveries.map((d: { attempt: number }) => d.attempt)).toEqual([2, 1]);
  });

  it("meters and events: a meter and a customer's usage chart, the events query, and a live tail that shows an event sent after it started", async () => {
    const meter = await api.post('/v1/meters', { name: 'Tail calls', event_name: 'tail_call', aggregation: { type: 'COUNT' } });
    expect(meter.status).toBe(201);
    const usage = { type: 'USAGE', currency: 'usd', amount: '0.5', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', meter_id: meter.body.id, display_name: 'Tail calls' };
    const plan = await api.post('/v1/plans', { name: 'Tail plan', prices: [usage] });
    const customer = await api.post('/v1/customers', { external_customer_id: 'tailer', name: 'Tailer' });
    const feature = await api.post('/v1/features', { name: 'Tail calls', lookup_key: 'tail_calls', type: 'METERED', meter_id: meter.body.id });
    expect(feature.status).toBe(201);
    expect((await api.post('/v1/entitlements', { plan_id: plan.body.id, feature_id: feature.body.id, usage_limit: '100', usage_reset_period: 'BILLING_PERIOD' })).status).toBe(201);
    expect((await api.post('/v1/subscriptions', { customer_id: customer.body.id, plan_id: plan.body.id })).status).toBe(201);
    const wallet = await api.post('/v1/wallets', { customer_id: customer.body.id, currency: 'usd', initial_credits_to_load: '25' });
    expect(wallet.status).toBe(201);
    const events = Array.from({ length: 3 }, (_, i) => ({ event_name: 'tail_call', external_customer_id: 'tailer', event_id: `tail-${i}`, timestamp: new Date().toISOString(), properties: { note: '<i>x</i>' } }));
    expect((await api.post('/v1/events/bulk', { events })).status).toBe(202);
    await waitFor(async () => (await api.post('/v1/events/query', { event_name: 'tail_call' })).body.total_count === 3, { timeoutMs: 20_000, what: 'the 3 events stored' });

    await nav('Meters').click();
    await page.getByRole('heading', { name: 'Meters' }).waitFor();
    await check('27-meters');
    await page.getByRole('link', { name: 'Tail calls' }).click();
    await page.getByRole('heading', { name: 'Tail calls' }).waitFor();
    await page.getByLabel('Customer external id').fill('tailer');
    await page.getByRole('button', { name: 'Show usage' }).click();
    const figure = page.getByRole('figure');
    await figure.locator('canvas').first().waitFor();
    const today = new Date().toISOString().slice(0, 10);
    expect(await figure.locator('tbody tr').filter({ hasText: today }).textContent()).toBe(`${today}3`);
    await check('28-meter');

    await nav('Events').click();
    await page.getByRole('heading', { name: 'Events', exact: true }).waitFor();
    await page.getByLabel('Event name').fill('tail_call');
    await page.getByRole('button', { name: 'Query' }).click();
    await page.getByText('1–3 of 3').waitFor();
    expect(await page.locator('i').count()).toBe(0);
    await page.getByRole('button', { name: 'Start the tail' }).click();
    const tail = page.getByTestId('tail');
    await tail.getByRole('cell', { name: 'tail-0' }).waitFor();
    const late = { event_name: 'tail_call', external_customer_id: 'tailer', event_id: 'tail-late', timestamp: new Date().toISOString() };
    expect((await api.post('/v1/events', late)).status).toBe(202);
    await tail.getByRole('cell', { name: 'tail-late' }).waitFor({ timeout: 20_000 });
    expect(await tail.locator('tbody tr').first().textContent()).toContain('tail-late');
    await check('29-events');
    await page.getByRole('button', { name: 'Stop the tail' }).click();

    await page.goto(`${stack.base}/console/#/customers/${customer.body.id}`);
    await page.getByRole('heading', { name: 'Tailer' }).waitFor();
    const usageFigure = page.getByRole('figure');
    await usageFigure.locator('canvas').first().waitFor();
    // The tail showed the late call: it is stored, and the chart counts it with the 3 others.
    expect(await usageFigure.locator('tbody tr').filter({ hasText: today }).textContent()).toBe(`${today}4`);
    // Its wallet's ledger (server-paged) and its entitlements with the usage so far.
    const ledger = page.getByRole('table', { name: 'Wallet ledger' });
    await ledger.getByRole('cell', { name: '+25' }).waitFor();
    expect(await ledger.locator('tbody tr').count()).toBe(1);
    const entitlement = page.getByRole('table', { name: 'Entitlements' }).getByRole('row').filter({ hasText: 'tail_calls' });
    await entitlement.waitFor();
    expect(await entitlement.getByRole('cell').nth(3).textContent()).toBe('4 / 100');
    await check('30-customer');
  });

  it('overview: events per hour, invoiced and collected per day, and the failing webhooks, as the API counts them', async () => {
    const plan = await api.post('/v1/plans', { name: 'Overview plan', prices: [{ type: 'FIXED', currency: 'usd', amount: '40', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }] });
    const customer = await api.post('/v1/customers', { external_customer_id: 'overview', name: 'Overview' });
    expect((await api.post('/v1/subscriptions', { customer_id: customer.body.id, plan_id: plan.body.id })).status).toBe(201);
    const [invoice] = (await api.get(`/v1/invoices?customer_id=${customer.body.id}`)).body.items;
    if (invoice.status === 'draft') expect((await api.post(`/v1/invoices/${invoice.id}/finalize`, {})).status).toBe(200);
    const paid = await api.post('/v1/payments', { invoice_id: invoice.id, amount: 1500, payment_method_type: 'OFFLINE' });
    expect(paid.status).toBe(201);
    const day = new Date().toISOString().slice(0, 10);
    const expected = (await api.get(`/v1/reports/billing_daily?start_date=${day}&end_date=${day}`)).body.days.find((d: { currency: string }) => d.currency === 'usd');
    expect(expected.collected).toBeGreaterThanOrEqual(1500);
    const hour = new Date().toISOString().slice(0, 13);
    const hourCount = (await api.get('/v1/reports/events_hourly?hours=1')).body.hours.find((h: { hour: string }) => h.hour === `${hour}:00:00.000Z`)?.events;
    expect(hourCount).toBeGreaterThanOrEqual(4);

    await nav('Overview').click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const events = page.getByRole('figure').filter({ hasText: 'Events per hour' });
    await events.locator('canvas').first().waitFor();
    expect(await events.locator('tbody tr').filter({ hasText: hour.replace('T', ' ') }).textContent()).toBe(`${hour.replace('T', ' ')}:00${hourCount}`);
    const usd = page.getByRole('figure').filter({ hasText: 'Invoiced and collected per day, USD' });
    await usd.locator('canvas').first().waitFor();
    const money = (minor: number) => `$${(minor / 100).toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}`;
    expect(await usd.locator('tbody tr').filter({ hasText: day }).textContent()).toBe(`${day}${money(expected.invoiced)}${money(expected.collected)}`);
    const failing = page.getByRole('table').filter({ hasText: 'failed delivery attempts in the last 24 hours' });
    await failing.waitFor();
    expect(await failing.getByRole('row').filter({ hasText: '/hook' }).getByRole('cell').nth(1).textContent()).toBe('1');
    await check('31-overview');
  });

  it("a customer's wallet: its live holds (id, credits held, expiry, metadata, created), credits held and available; a hold ended leaves at the next load", async () => {
    const customer = await api.post('/v1/customers', { external_customer_id: 'holds-console', name: 'Holds' });
    const wallet = await api.post('/v1/wallets', { customer_id: customer.body.id, currency: 'usd', initial_credits_to_load: '100' });
    expect(wallet.status).toBe(201);
    const reserve = (credits: string, key: string, metadata: Record<string, string>) =>
      api.post('/v1/reservations', { customer_id: customer.body.id, currency: 'usd', credits, expires_in: 600, idempotency_key: key, metadata });
    const llm = await reserve('30', 'holds-console-1', { request: 'llm-call-1' });
    const job = await reserve('12.5', 'holds-console-2', { job: 'render-7' });
    const gone = await reserve('5', 'holds-console-3', {});
    expect([llm.status, job.status, gone.status]).toEqual([201, 201, 201]);
    expect((await api.post(`/v1/reservations/${gone.body.id}/release`, {})).status).toBe(200);

    await page.goto(`${stack.base}/console/#/customers/${customer.body.id}`);
    await page.getByRole('heading', { name: 'Holds', exact: true }).waitFor();
    const holds = page.getByRole('region', { name: 'Live holds' });
    await holds.getByRole('cell', { name: llm.body.id }).waitFor();
    const cells = async (id: string) => holds.getByRole('row').filter({ hasText: id }).getByRole('cell').allTextContents();
    const row = await cells(llm.body.id);
    expect(row.slice(0, 3)).toEqual([llm.body.id, wallet.body.id, '30']);
    expect(row[4]).toBe('request: llm-call-1');
    expect(await holds.getByRole('row').filter({ hasText: llm.body.id }).getByRole('cell').nth(3).getAttribute('title')).toBe(llm.body.expires_at);
    expect((await cells(job.body.id)).slice(2, 5)).toEqual(['12.5', expect.any(String), 'job: render-7']);
    // Live holds only, newest first: the released one is not listed.
    expect(await holds.locator('tbody tr').count()).toBe(2);
    expect(await holds.locator('tbody tr').first().textContent()).toContain(job.body.id);
    const walletRow = page.getByRole('row').filter({ hasText: wallet.body.id }).filter({ hasText: 'Top up' });
    // The wallets table loads on its own: wait for its row before reading it.
    await walletRow.waitFor();
    const walletCells = await walletRow.getByRole('cell').allTextContents();
    expect(walletCells.slice(5, 7)).toEqual(['42.5', '57.5']);
    await check('34-customer-holds');

    // The commit of one (20 of its 30 spent) ends it: the next load shows one hold, 12.5 held and 67.5 available.
    expect((await api.post(`/v1/reservations/${llm.body.id}/commit`, { credits: '20' })).status).toBe(200);
    await page.reload();
    await holds.getByRole('cell', { name: job.body.id }).waitFor();
    expect(await holds.locator('tbody tr').count()).toBe(1);
    await walletRow.waitFor();
    expect((await walletRow.getByRole('cell').allTextContents()).slice(5, 7)).toEqual(['12.5', '67.5']);
  });

  const check = (name: string) => stack.check(page, name);
});

// What page.evaluate's callbacks use in the browser (the tests compile without the DOM library).
declare const sessionStorage: Record<string, string>;
declare const localStorage: Record<string, string>;
