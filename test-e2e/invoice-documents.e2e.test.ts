import { startProcessStack, type ProcessStack } from './support/stack';

/**
 * Invoice documents on the six-process stack (ADR 0045): the gateway forwards a signed link's
 * call to the billing process over HTTP with no API key and streams the PDF back; a wrong token
 * is billing's 401 in the error envelope. The documents themselves are proven by
 * test-e2e/integration/billing/invoice-documents.int.test.ts.
 */
describe('invoice documents across processes (e2e: six processes, real Postgres and Kafka)', () => {
  let stack: ProcessStack;

  beforeAll(async () => {
    stack = await startProcessStack({ env: { billing: { BILLING_INTERVAL_MS: '0', PUBLIC_BASE_URL: 'https://billing.example.com/' } } });
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('a signed link opens the PDF without a key through the gateway; the same bytes as with a key; a tampered token: 401; the document headers; revoked: 410, a new link opens', async () => {
    const customer = await stack.api.post('/v1/customers', { external_customer_id: `e2e-doc-${Date.now()}`, name: 'Ωμέγα Жанна 山田' });
    expect(customer.status).toBe(201);
    const plan = await stack.api.post('/v1/plans', {
      name: 'E2E documents',
      prices: [{ type: 'FIXED', currency: 'usd', amount: '49', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }],
    });
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: customer.body.id, plan_id: plan.body.id });
    expect(sub.status).toBe(201);
    const draftId = (await stack.api.get(`/v1/invoices?subscription_id=${sub.body.id}`)).body.items[0].id as string;
    const invoice = await stack.api.post(`/v1/invoices/${draftId}/finalize`, {});
    expect(invoice.status).toBe(200);
    const link = new URL(invoice.body.invoice_pdf_url as string);
    expect(link.origin).toBe('https://billing.example.com');

    const byLink = await fetch(`${stack.api.baseUrl}${link.pathname}${link.search}`);
    expect([byLink.status, byLink.headers.get('content-type')]).toEqual([200, 'application/pdf']);
    const linkBytes = Buffer.from(await byLink.arrayBuffer());
    const byKey = await fetch(`${stack.api.baseUrl}/v1/invoices/${draftId}/pdf`, { headers: { authorization: `Bearer ${stack.api.key}` } });
    expect(byKey.status).toBe(200);
    expect(Buffer.from(await byKey.arrayBuffer()).equals(linkBytes)).toBe(true);
    expect(linkBytes.subarray(0, 5).toString()).toBe('%PDF-');

    const tampered = await fetch(`${stack.api.baseUrl}${link.pathname}?token=${'A'.repeat(43)}`);
    expect(tampered.status).toBe(401);
    expect(((await tampered.json()) as { error: { internal_error: string } }).error.internal_error).toBe('permission_denied');
    const page = await fetch(`${stack.api.baseUrl}${new URL(invoice.body.hosted_invoice_url as string).pathname}${link.search}`);
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    expect(await page.text()).toContain(invoice.body.invoice_number as string);

    // The document headers cross the gateway's hop too (ADR 0059): on the documents by link and by key, and on a link's refusal.
    const headersOf = (r: Response) => [r.headers.get('content-security-policy'), r.headers.get('x-content-type-options'), r.headers.get('referrer-policy'), r.headers.get('cache-control')];
    const expected = ["default-src 'none'; style-src 'unsafe-inline'; img-src https:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'", 'nosniff', 'no-referrer', 'private, no-store'];
    for (const r of [byLink, byKey, page, tampered]) expect(headersOf(r)).toEqual(expected);
    // Revoked through the API: the link answers 410, as a page for a browser.
    expect((await stack.api.delete(`/v1/invoices/${draftId}/document_links`)).status).toBe(204);
    const revoked = await fetch(`${stack.api.baseUrl}${link.pathname}${link.search}`, { headers: { accept: 'text/html' } });
    expect([revoked.status, revoked.headers.get('content-type'), headersOf(revoked)]).toEqual([410, 'text/html; charset=utf-8', expected]);
    expect(await revoked.text()).toContain('This link was revoked');
    const fresh = await stack.api.post(`/v1/invoices/${draftId}/document_links`, {});
    expect(fresh.status).toBe(201);
    expect((await fetch(`${stack.api.baseUrl}${new URL(fresh.body.invoice_pdf_url as string).pathname}${new URL(fresh.body.invoice_pdf_url as string).search}`)).status).toBe(200);
  }, 120_000);
});
