import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor, type ApiClient } from '@billstream/testing';
import type { Locator, Page } from 'playwright-core';
import { startConsoleStack, type ConsoleStack } from './console/harness';

/**
 * The support actions of the console (issue #33, ADR 0050 "The forms") as a person makes
 * them, on the embedded default and Debian's chromium (./console/harness.ts), in the issue's
 * journey: the key, a customer created, usage sent through the API and seen in the customer's
 * chart, the period billed, the invoice and its PDF, a credit note, the webhook's delivery. Each form
 * validates with the route's zod schema, shows the API's message next to the field it names,
 * and sends once however often it is clicked. What a client system does (usage, the period
 * job) goes through the API; every outcome is checked through the API too.
 */
jest.setTimeout(600_000);

interface Invoice {
  id: string;
  invoice_number: string;
  subscription_id: string;
  status: string;
  amount_remaining: number;
}

describe('the support actions of the console, in a real browser', () => {
  let stack: ConsoleStack;
  let base: string;
  let api: ApiClient;
  // The client system's webhook receiver (the embedded default may send to loopback over http).
  const hooks: string[] = [];
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      hooks.push(body);
      res.writeHead(200).end();
    });
  });

  beforeAll(async () => {
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    process.env.WEBHOOK_ALLOW_INSECURE = 'true';
    // The duplicate external id's 409 is the one failed request the journey makes on purpose.
    stack = await startConsoleStack([/status of 409/]);
    ({ base, api } = stack);
  });
  afterAll(async () => {
    await stack?.stop();
    await new Promise((r) => receiver.close(r));
  });

  const rowOf = (page: Page, text: string): Locator => page.getByRole('row').filter({ hasText: text }).first();
  const status = (page: Page, text: string) => page.getByRole('status').filter({ hasText: text }).waitFor();
  /** The message an input shows: the text of what its aria-describedby names. */
  const describedText = (input: Locator) =>
    input.evaluate((el: { getAttribute(n: string): string | null; ownerDocument: { getElementById(id: string): { textContent: string | null } | null } }) =>
      (el.getAttribute('aria-describedby') ?? '')
        .split(' ')
        .filter(Boolean)
        .map((id) => el.ownerDocument.getElementById(id)?.textContent ?? '')
        .join(' | '),
    );

  it('creates a customer, tops up its wallet, credits, pays and voids invoices, changes a plan and applies a coupon', async () => {
    // What the client system set up: a meter, two plans, a support add-on and a coupon.
    const meter = await api.post('/v1/meters', { name: 'API calls', event_name: 'actions_call', aggregation: { type: 'COUNT' } });
    expect(meter.status).toBe(201);
    const fixed = (amount: string) => ({ type: 'FIXED', currency: 'usd', amount, billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' });
    const usage = { type: 'USAGE', currency: 'usd', amount: '0.5', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', meter_id: meter.body.id };
    const starter = (await api.post('/v1/plans', { name: 'Starter', prices: [fixed('10'), usage] })).body;
    const pro = (await api.post('/v1/plans', { name: 'Pro', prices: [fixed('30'), usage] })).body;
    const support = (await api.post('/v1/plans', { name: 'Support', prices: [fixed('5')] })).body;
    const coupon = await api.post('/v1/coupons', { name: 'Launch offer', code: 'LAUNCH20', type: 'PERCENTAGE', percent_off: '20', duration: 'FOREVER' });
    expect(coupon.status).toBe(201);
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const endpoint = (await api.post('/v1/webhook-endpoints', { url: hookUrl, events: ['customer.created'] })).body as { id: string };

    const page = await stack.newPage();
    // Every write the browser sends, with its idempotency key: one per action, double clicks included.
    const posts: Array<[string, string | undefined]> = [];
    // The reads that are POSTs (a meter's usage for the customer's chart, the events query) are not actions.
    const READS = /^\/v1\/(meters\/[^/]+\/usage|events\/query)$/;
    page.on('request', (r) => {
      const pathname = new URL(r.url()).pathname;
      if (r.method() === 'POST' && !READS.test(pathname)) posts.push([pathname, r.headers()['idempotency-key']]);
    });
    await page.goto(`${base}/console/`);
    await page.getByLabel('API key').fill(stack.key);
    await page.getByRole('button', { name: 'Open the console' }).click();
    await page.getByRole('heading', { name: 'Customers' }).waitFor();

    // A new customer: the schema's message next to the bad email (nothing sent), then created.
    await page.getByRole('button', { name: 'New customer' }).click();
    const form = page.getByRole('form', { name: 'New customer' });
    await form.getByLabel('External id').fill('acme-actions');
    await form.getByLabel('Name').fill('Acme Actions');
    await form.getByLabel('Email').fill('not-an-email');
    await form.getByRole('button', { name: 'Create customer' }).click();
    await waitFor(async () => (await describedText(form.getByLabel('Email'))) === 'must be a valid email address', { what: "the schema's message next to Email" });
    await stack.check(page, '10-new-customer-invalid');
    expect((await api.get('/v1/customers?external_id=acme-actions')).body.items).toEqual([]);
    await form.getByLabel('Email').fill('billing@acme-actions.test');
    await form.getByRole('button', { name: 'Create customer' }).dblclick();
    await status(page, 'Customer acme-actions created.');
    await page.getByRole('link', { name: 'acme-actions' }).first().waitFor();
    await stack.check(page, '11-customer-created');
    const customers = (await api.get('/v1/customers?external_id=acme-actions')).body.items as Array<{ id: string; email: string }>;
    expect(customers.map((c) => c.email)).toEqual(['billing@acme-actions.test']);
    const customerId = customers[0]!.id;

    // The same external id again: the API's 409 message next to the field it names.
    await page.getByRole('button', { name: 'New customer' }).click();
    await form.getByLabel('External id').fill('acme-actions');
    await form.getByRole('button', { name: 'Create customer' }).click();
    await waitFor(async () => (await describedText(form.getByLabel('External id'))).includes('A customer with external id acme-actions already exists'), {
      what: "the API's message next to External id",
    });
    await form.getByRole('button', { name: 'Cancel' }).click();

    // The client system: a wallet, two subscriptions and 6 calls.
    const wallet = (await api.post('/v1/wallets', { customer_id: customerId, currency: 'usd' })).body;
    const subStarter = (await api.post('/v1/subscriptions', { customer_id: customerId, plan_id: starter.id })).body;
    const subSupport = (await api.post('/v1/subscriptions', { customer_id: customerId, plan_id: support.id })).body;
    const at = new Date().toISOString();
    const events = Array.from({ length: 6 }, (_, i) => ({ event_name: 'actions_call', external_customer_id: 'acme-actions', event_id: `actions-${i}`, timestamp: at }));
    expect((await api.post('/v1/events/bulk', { events })).status).toBe(202);
    await waitFor(async () => (await api.get(`/v1/subscriptions/${subStarter.id}/usage`)).body.amount === 300, { timeoutMs: 20_000, what: 'the 6 calls stored' });

    // Top up the wallet from its row, with a double click: one top-up of 4 credits.
    await page.getByRole('link', { name: 'Open acme-actions' }).click();
    await page.getByRole('heading', { name: 'Acme Actions' }).waitFor();
    await page.getByRole('row').filter({ hasText: subStarter.id }).filter({ hasText: meter.body.id }).first().waitFor();
    // The 6 calls in the customer's usage chart: their day's figure in its table of figures (the
    // day they were sent, so that a run across midnight UTC still finds it).
    const today = at.slice(0, 10);
    await page.getByText(/^The figures of “Usage per day/).first().click();
    const chartRow = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: today }) });
    await chartRow.first().waitFor();
    expect(await chartRow.first().textContent()).toBe(`${today}6`);
    await rowOf(page, wallet.id).getByRole('button', { name: 'Top up' }).click();
    const topUp = page.getByRole('form', { name: `Top up wallet ${wallet.id}` });
    await topUp.getByLabel('Credits to add').fill('4');
    await stack.check(page, '12-top-up');
    await topUp.getByRole('button', { name: 'Add credits' }).dblclick();
    await status(page, `Wallet ${wallet.id} topped up.`);
    const balance = (await api.get(`/v1/wallets/${wallet.id}/balance`)).body;
    expect(Number(balance.balance)).toBe(4);
    // In the currency's format (issue #47 item 6): 4 credits of a USD wallet are $4.00.
    await waitFor(async () => (await rowOf(page, wallet.id).textContent())?.includes('$4.00') ?? false, { what: 'the new balance in the wallet row' });

    // The period job bills both subscriptions.
    expect((await api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
    const invoices = (await api.get(`/v1/invoices?customer_id=${customerId}`)).body.items as Invoice[];
    const billed = invoices.find((i) => i.subscription_id === subStarter.id)!;
    const other = invoices.find((i) => i.subscription_id === subSupport.id)!;
    expect([billed.status, other.status]).toEqual(['finalized', 'finalized']);

    // The invoice: a credit note of 1.00, double clicked: exactly one, shown on the invoice.
    await page.reload();
    await page.getByRole('link', { name: billed.invoice_number }).click();
    await page.getByRole('heading', { name: `Invoice ${billed.invoice_number}` }).waitFor();
    await page.getByRole('button', { name: 'Issue a credit note' }).click();
    const note = page.getByRole('form', { name: 'Issue a credit note' });
    await note.getByLabel('Amount').fill('1.00');
    await note.getByLabel('Reason').selectOption('PRODUCT_UNSATISFACTORY');
    await note.getByLabel('Memo').fill('Outage on the 3rd');
    await stack.check(page, '13-credit-note');
    await note.getByRole('button', { name: 'Issue credit note' }).dblclick();
    await status(page, 'Credit note issued.');
    const notes = (await api.get(`/v1/credit_notes?invoice_id=${billed.id}`)).body.items as Array<{ credit_note_number: string; amount: number; reason: string }>;
    expect(notes.map((n) => [n.amount, n.reason])).toEqual([[100, 'PRODUCT_UNSATISFACTORY']]);
    await page.getByRole('cell', { name: notes[0]!.credit_note_number }).waitFor();
    await stack.check(page, '14-invoice-credited');
    // Its PDF, through the invoice's signed link (no key).
    const pdf = await page.request.get((await page.getByRole('link', { name: 'PDF' }).getAttribute('href'))!);
    expect([pdf.status(), pdf.headers()['content-type'], (await pdf.body()).subarray(0, 5).toString()]).toEqual([200, 'application/pdf', '%PDF-']);

    // A payment of what remains (the form's default): the invoice is paid.
    const remaining = (await api.get(`/v1/invoices/${billed.id}`)).body.amount_remaining as number;
    expect(remaining).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Record a payment' }).click();
    const payment = page.getByRole('form', { name: 'Record a payment' });
    expect(await payment.getByLabel('Amount').inputValue()).toBe((remaining / 100).toFixed(2));
    await payment.getByLabel('Reference').fill('wire 2026-11-28');
    await stack.check(page, '15-payment');
    await payment.getByRole('button', { name: 'Record payment' }).dblclick();
    await status(page, 'Payment recorded.');
    const payments = (await api.get(`/v1/payments?invoice_id=${billed.id}`)).body.items as Array<{ amount: number; reference: string }>;
    expect(payments.map((p) => [p.amount, p.reference])).toEqual([[remaining, 'wire 2026-11-28']]);
    expect((await api.get(`/v1/invoices/${billed.id}`)).body.status).toBe('paid');
    await page.getByText('paid, payment').waitFor();
    // Its actions are the invoice's available_actions (ADR 0062): a paid invoice takes credit notes only.
    expect((await api.get(`/v1/invoices/${billed.id}`)).body.available_actions).toEqual(['credit']);
    expect(await page.locator('.actions').getByRole('button').allTextContents()).toEqual(['Issue a credit note']);
    // The invoice page lists it, once.
    const paymentRows = page.getByRole('table', { name: 'Payments' }).getByRole('row').filter({ hasText: 'wire 2026-11-28' });
    await paymentRows.first().waitFor();
    expect(await paymentRows.count()).toBe(1);
    expect(await paymentRows.textContent()).toContain('succeeded');

    // Another invoice voided, after its confirm step.
    // The invoice names its customer (issue #47 item 6).
    await page.getByRole('link', { name: 'Acme Actions', exact: true }).first().click();
    await page.getByRole('link', { name: other.invoice_number }).click();
    await page.getByRole('heading', { name: `Invoice ${other.invoice_number}` }).waitFor();
    await page.getByRole('button', { name: 'Void invoice' }).click();
    await page.getByRole('heading', { name: `Void invoice ${other.invoice_number}?` }).waitFor();
    await stack.check(page, '16-void-confirm');
    expect((await api.get(`/v1/invoices/${other.id}`)).body.status).toBe('finalized');
    await page.getByRole('button', { name: `Void invoice ${other.invoice_number}` }).click();
    await status(page, 'Invoice voided.');
    expect((await api.get(`/v1/invoices/${other.id}`)).body.status).toBe('voided');
    await page.getByText('voided, payment').waitFor();
    expect(await page.locator('.actions').getByRole('button').count()).toBe(0);

    // The Starter subscription moves to Pro: the preview first, then the change.
    // The invoice names its customer (issue #47 item 6).
    await page.getByRole('link', { name: 'Acme Actions', exact: true }).first().click();
    await rowOf(page, subStarter.id).getByRole('button', { name: 'Change plan' }).click();
    const change = page.getByRole('form', { name: `Change the plan of ${subStarter.id}` });
    await change.getByLabel('New plan').selectOption(pro.id);
    await change.getByRole('button', { name: 'Preview the change' }).click();
    await change.getByRole('region', { name: 'Preview of the change' }).waitFor();
    expect(await change.getByRole('region', { name: 'Preview of the change' }).textContent()).toContain(`on plan ${pro.id}`);
    expect((await api.get(`/v1/subscriptions/${subStarter.id}`)).body.plan_id).toBe(starter.id);
    await stack.check(page, '17-plan-preview');
    await change.getByRole('button', { name: 'Confirm the change' }).dblclick();
    await status(page, `The plan of ${subStarter.id} changed.`);
    expect((await api.get(`/v1/subscriptions/${subStarter.id}`)).body.plan_id).toBe(pro.id);
    // The new plan by its name, a link to it (issue #47 item 6).
    await waitFor(async () => (await rowOf(page, subStarter.id).getByRole('link', { name: 'Pro', exact: true }).getAttribute('href').catch(() => null)) === `#/plans/${pro.id}`, {
      what: 'the new plan in the subscription row',
    });
    const updates = ((await api.get(`/v1/invoices?subscription_id=${subStarter.id}`)).body.items as Array<{ billing_reason: string }>).filter((i) => i.billing_reason === 'SUBSCRIPTION_UPDATE');
    expect(updates).toHaveLength(1);

    // A coupon by its code on the same subscription.
    await rowOf(page, subStarter.id).getByRole('button', { name: 'Apply coupon' }).click();
    const apply = page.getByRole('form', { name: `Apply a coupon to ${subStarter.id}` });
    await apply.getByLabel('Coupon code').fill('LAUNCH20');
    await apply.getByRole('button', { name: 'Apply coupon' }).dblclick();
    await status(page, `Coupon applied to ${subStarter.id}.`);
    const discounts = (await api.get(`/v1/subscriptions/${subStarter.id}/discounts`)).body.items as Array<{ coupon_id: string; status: string }>;
    expect(discounts.map((d) => [d.coupon_id, d.status])).toEqual([[coupon.body.id, 'active']]);
    await waitFor(async () => (await rowOf(page, subStarter.id).textContent())?.includes(coupon.body.id) ?? false, { what: 'the coupon in the subscription row' });
    await stack.check(page, '18-customer-after-actions');

    // The webhook of the customer the console created: its delivery, succeeded, on the endpoint's page.
    await waitFor(() => hooks.some((h) => h.includes('acme-actions')), { timeoutMs: 30_000, what: 'the customer.created webhook received' });
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('link', { name: hookUrl }).click();
    await page.getByRole('heading', { name: `Webhook endpoint ${hookUrl}` }).waitFor();
    const delivered = (await api.get(`/v1/webhook-endpoints/${endpoint.id}/deliveries`)).body.deliveries as Array<{ event_id: string; status: string }>;
    expect(delivered.map((d) => d.status)).toEqual(['succeeded']);
    await rowOf(page, delivered[0]!.event_id).getByRole('cell', { name: 'succeeded' }).waitFor();
    await stack.check(page, '19-webhook-delivered');

    const key = expect.stringMatching(/^console-[0-9a-f]{32}$/);
    expect(posts).toEqual([
      ['/v1/customers', key],
      ['/v1/customers', key],
      [`/v1/wallets/${wallet.id}/topup`, key],
      ['/v1/credit_notes', key],
      ['/v1/payments', key],
      [`/v1/invoices/${other.id}/void`, key],
      [`/v1/subscriptions/${subStarter.id}/change/preview`, undefined],
      [`/v1/subscriptions/${subStarter.id}/change`, key],
      [`/v1/subscriptions/${subStarter.id}/discounts`, key],
    ]);
    // A form's key is its own: each of the eight forms sent a different one.
    expect(new Set(posts.map(([, k]) => k).filter(Boolean)).size).toBe(8);
    expect(stack.problems).toEqual([]);
  });
});
