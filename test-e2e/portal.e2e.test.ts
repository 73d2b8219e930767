import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { waitFor, type ApiClient } from '@billstream/testing';
import { startConsoleStack, type ConsoleStack } from './console/harness';

/**
 * The customer portal (ADR 0069, docs/portal.md) in Debian's chromium on the embedded default
 * (./console/harness.ts): a client opens a portal session through the API, its customer opens
 * the URL and sees the invoice, the usage chart and the real-time balance. Every page is checked
 * with axe-core and its screenshot written (CONSOLE_SCREENSHOTS=docs/portal refreshes the
 * committed ones); a CSP violation or any console error fails the journey. Last, the portal in
 * an iframe of a page served over https on 127.0.0.1: it renders where the tenant's
 * `portal.frame_ancestors` allowed that origin when the session was opened, and is refused elsewhere.
 */
jest.setTimeout(600_000);

describe('the customer portal in a real browser, on the embedded default', () => {
  let stack: ConsoleStack;
  let api: ApiClient;
  let page: Page;
  const run = `${Date.now()}`;
  let invoiceNumber: string;
  let url: string;
  let customerId: string;

  beforeAll(async () => {
    // The framing journey's refusals are the browser's console errors it looks for.
    stack = await startConsoleStack([/^Framing '[^']*' violates the following Content Security Policy directive: "frame-ancestors /]);
    api = stack.api;
    expect((await api.put('/v1/settings/billing', { invoice_settings: { company_name: 'Acme Cloud', address: '1 Market St, Springfield', accent_color: '#0b6e4f' } })).status).toBe(200);
    const meter = await api.post('/v1/meters', { name: 'API calls', event_name: `portal_call_${run}`, aggregation: { type: 'COUNT' } });
    const storage = await api.post('/v1/meters', { name: 'Storage writes', event_name: `portal_write_${run}`, aggregation: { type: 'COUNT' } });
    const usage = (meterId: string, amount: string) => ({ type: 'USAGE', currency: 'usd', amount, billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', meter_id: meterId });
    const plan = await api.post('/v1/plans', {
      name: 'Growth',
      prices: [{ type: 'FIXED', currency: 'usd', amount: '49', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }, usage(meter.body.id, '0.5'), usage(storage.body.id, '0.1')],
    });
    const external = `portal-buyer-${run}`;
    const customer = await api.post('/v1/customers', { external_customer_id: external, name: 'Globex Corporation', email: 'billing@globex.example' });
    customerId = customer.body.id;
    const sub = await api.post('/v1/subscriptions', { customer_id: customer.body.id, plan_id: plan.body.id });
    expect([meter.status, storage.status, plan.status, customer.status, sub.status]).toEqual([201, 201, 201, 201, 201]);
    const draft = (await api.get(`/v1/invoices?subscription_id=${sub.body.id}`)).body.items[0];
    const finalized = await api.post(`/v1/invoices/${draft.id}/finalize`, {});
    expect(finalized.status).toBe(200);
    invoiceNumber = finalized.body.invoice_number;
    // The wallet after the invoice: its 100 credits are all there, less the usage in real time.
    const wallet = await api.post('/v1/wallets', { customer_id: customer.body.id, currency: 'usd', initial_credits_to_load: '100', config: { allowed_price_types: ['ALL'] } });
    expect([wallet.status, wallet.body.error]).toEqual([201, undefined]);
    const events = (name: string, count: number) => Array.from({ length: count }, (_, i) => ({ event_name: name, external_customer_id: external, timestamp: new Date().toISOString(), event_id: `${name}-${i}` }));
    expect((await api.post('/v1/events/bulk', { events: [...events(`portal_call_${run}`, 12), ...events(`portal_write_${run}`, 5)] })).status).toBe(202);
    // 12 calls at 0.5 and 5 writes at 0.1: 6.50 usd unbilled, taken off the real-time balance of 100.
    await waitFor(async () => (await api.get(`/v1/wallets/${wallet.body.id}/balance?include_real_time_balance=true`)).body.real_time_balance === '93.5', { timeoutMs: 60_000, what: 'the real-time balance at 100 - 6.5' });
    // A live hold of 2.5 credits on the wallet (issue #51): shown on the wallets page.
    const hold = await api.post('/v1/reservations', { customer_id: customer.body.id, currency: 'usd', credits: '2.5', expires_in: 3600, idempotency_key: `portal-hold-${run}` });
    expect([hold.status, hold.body.error]).toEqual([201, undefined]);
    const session = await api.post(`/v1/customers/${customer.body.id}/portal_sessions`, { expires_in: 900, return_url: 'https://globex.example/account' });
    expect(session.status).toBe(201);
    url = session.body.url;
    page = await stack.newPage();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('opens on the invoices: the invoice with its hosted page and PDF links; the token leaves the address', async () => {
    await page.goto(url);
    await page.getByRole('heading', { name: 'Invoices' }).waitFor();
    const row = page.getByRole('row', { name: new RegExp(invoiceNumber) });
    await row.waitFor();
    expect(await row.textContent()).toContain('$49.00');
    expect(await page.getByRole('link', { name: `View invoice ${invoiceNumber}` }).getAttribute('href')).toContain('/v1/hosted/invoices/');
    expect(await page.getByRole('link', { name: `PDF of invoice ${invoiceNumber}` }).getAttribute('href')).toContain('/pdf?token=');
    expect(page.url()).not.toContain('bsp_');
    expect(await page.locator('.brand').textContent()).toBe('Acme Cloud');
    // The seller's accent colour, set through the CSSOM (no inline style in the markup).
    expect(await page.evaluate('getComputedStyle(document.documentElement).getPropertyValue("--accent")')).toBe('#0b6e4f');
    await stack.check(page, '01-invoices');
  });

  it('shows the subscription with its plan and upcoming invoice', async () => {
    await page.getByRole('link', { name: 'Subscriptions' }).click();
    const row = page.getByRole('row', { name: /Growth/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('active');
    await stack.check(page, '02-subscriptions');
  });

  it('draws the usage chart per meter with the same numbers as text', async () => {
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByTestId('usage-chart').waitFor();
    expect(await page.locator('[data-testid=usage-chart] rect').count()).toBe(2);
    expect(await page.getByRole('row', { name: /API calls/ }).textContent()).toContain('12');
    expect(await page.getByRole('row', { name: /Storage writes/ }).textContent()).toContain('5');
    expect(await page.getByText('So far this period: $6.50.').count()).toBe(1);
    await stack.check(page, '03-usage');
  });

  it('shows the wallet with its real-time balance, its live hold and its ledger', async () => {
    await page.getByRole('link', { name: 'Wallets' }).click();
    await page.getByTestId('real-time-balance').waitFor();
    expect(await page.getByTestId('real-time-balance').textContent()).toBe('$93.50');
    await page.getByRole('table', { name: 'Credits on hold' }).waitFor();
    expect(await page.getByTestId('hold-credits').allTextContents()).toEqual(['2.5']);
    await page.getByRole('button', { name: /Show ledger/ }).click();
    await page.getByRole('table', { name: /Ledger of/ }).waitFor();
    await stack.check(page, '04-wallets');
  });

  it('shows the entitlements page, and no console error or CSP violation happened', async () => {
    await page.getByRole('link', { name: 'Entitlements' }).click();
    await page.getByRole('heading', { name: 'Entitlements' }).waitFor();
    await page.getByText(/No entitlements|What your plans include/).first().waitFor();
    await stack.check(page, '05-entitlements');
    expect(stack.problems).toEqual([]);
    // The whole stack's output so far holds no portal token.
    expect(stack.output()).not.toMatch(/bsp_[A-Za-z0-9_-]{20,}/);
  });

  describe('inside an iframe of the client\'s site', () => {
    let dir: string;
    const servers: Server[] = [];
    let allowed: string;
    let elsewhere: string;
    let framed: string;
    /** An https server on 127.0.0.1 whose page frames the portal at `?src=`; its origin. */
    const host = async (): Promise<string> => {
      const server = createServer({ key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) }, (req, res) => {
        const src = new URL(req.url ?? '/', 'https://127.0.0.1').searchParams.get('src') ?? '';
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end(`<!doctype html><html lang="en"><title>Client site</title><h1>Your account</h1><iframe title="Billing portal" width="1200" height="800" src="${src.replace(/"/g, '&quot;')}"></iframe></html>`);
      });
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    };
    beforeAll(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'billstream-portal-frame-'));
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
      [allowed, elsewhere] = [await host(), await host()];
      const settings = await api.put('/v1/settings/billing', { portal: { frame_ancestors: [allowed] } });
      expect([settings.status, settings.body.portal]).toEqual([200, { frame_ancestors: [allowed] }]);
      // Opened after the setting: the session's snapshot allows that origin.
      const session = await api.post(`/v1/customers/${customerId}/portal_sessions`, { expires_in: 900 });
      expect([session.status, new URL(session.body.url).pathname]).toEqual([201, `/portal/s/${session.body.id}`]);
      framed = session.body.url;
    });
    afterAll(async () => {
      await api?.put('/v1/settings/billing', { portal: { frame_ancestors: [] } });
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const frame = async (origin: string, src: string) => {
      const parent = await stack.newPage({ ignoreHTTPSErrors: true });
      // What the browser says of a refused frame: its request blocked by the answer's policy, and why.
      const blocked: string[] = [];
      parent.on('requestfailed', (r) => r.url().startsWith(src.split('#')[0]!) && blocked.push(`${r.failure()?.errorText}`));
      parent.on('console', (m) => /frame-ancestors/.test(m.text()) && blocked.push(m.text()));
      await parent.goto(`${origin}/?src=${encodeURIComponent(src)}`);
      await parent.getByRole('heading', { name: 'Your account' }).waitFor();
      return { parent, blocked, portal: parent.frameLocator('iframe[title="Billing portal"]') };
    };

    it('renders from an allowed origin: the invoices inside the frame', async () => {
      const { parent, portal, blocked } = await frame(allowed, framed);
      await portal.getByRole('heading', { name: 'Invoices' }).waitFor();
      await portal.getByRole('row', { name: new RegExp(invoiceNumber) }).waitFor();
      expect(blocked).toEqual([]);
      await parent.close();
    });

    it('is refused from another origin, and a session opened before the setting is framed nowhere', async () => {
      for (const [origin, src] of [[elsewhere, framed], [allowed, url]] as const) {
        const { parent, blocked, portal } = await frame(origin, src);
        await waitFor(() => blocked.length >= 2 || undefined, { timeoutMs: 30_000, what: `the frame of ${origin} refused` });
        expect(blocked).toContain('net::ERR_BLOCKED_BY_RESPONSE');
        expect(blocked.find((b) => b.startsWith('Framing'))).toContain(origin === elsewhere ? `"frame-ancestors ${allowed}"` : `"frame-ancestors 'none'"`);
        expect(await portal.getByRole('heading', { name: 'Invoices' }).count()).toBe(0);
        await parent.close();
      }
      expect(stack.problems).toEqual([]);
    });
  });
});
