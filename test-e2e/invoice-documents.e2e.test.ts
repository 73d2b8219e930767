import { createDb, type Db } from '@billstream/db';
import { freePort, waitFor } from '@billstream/testing';
import { startProcessStack, type ProcessStack } from './support/stack';
import { TestSmtpServer } from './support/smtp';

/**
 * Invoice documents on the six-process stack (ADR 0045): the gateway forwards a signed link's
 * call to the billing process over HTTP with no API key and streams the PDF back; a wrong token
 * is billing's 401 in the error envelope. The documents themselves are proven by
 * test-e2e/integration/billing/invoice-documents.int.test.ts.
 *
 * The invoice email across a crash (ADR 0067, ADR 0017), on the same stack and an SMTP server this
 * test starts on 127.0.0.1: billing SIGKILLs itself at `email.after-accepted` (the server holds
 * the message, billing has not recorded it). After the restart and the lease, the message goes
 * once more with the same Message-ID, subject and PDF, and the one communication ends `sent` after
 * 2 attempts: nothing lost, the copy recognisable.
 */
const POINT = 'email.after-accepted';
const FROM = 'billing@crash.example';

describe('invoice documents and email across processes (e2e: six processes, real Postgres, Kafka and SMTP)', () => {
  let stack: ProcessStack;
  let smtp: TestSmtpServer;
  let billingDb: Db;

  beforeAll(async () => {
    smtp = new TestSmtpServer(await freePort());
    await smtp.start();
    stack = await startProcessStack({
      env: { billing: { BILLING_INTERVAL_MS: '0', PUBLIC_BASE_URL: 'https://billing.example.com/', SMTP_URL: smtp.url, BILLING_EMAIL_POLL_MS: '200' } },
    });
    billingDb = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
  }, 180_000);
  afterAll(async () => {
    await billingDb?.destroy();
    await stack?.stop();
    await smtp?.stop();
  }, 120_000);

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

  it(`billing killed at ${POINT}: the message again after the restart, the same Message-ID, subject and PDF; one communication, sent, 2 attempts`, async () => {
    expect((await stack.api.put('/v1/settings/billing', { email: { enabled: true, from: FROM } })).status).toBe(200);
    const email = `crash-${Date.now()}@example.com`;
    const customer = await stack.api.post('/v1/customers', { external_customer_id: `crash-${Date.now()}`, name: 'Crash Payer', email });
    expect(customer.status).toBe(201);
    await waitFor(async () => (await billingDb('customers').where({ id: customer.body.id }).first())?.email === email, { what: 'the customer projection', timeoutMs: 30_000 });
    const plan = await stack.api.post('/v1/plans', { name: 'Crash', prices: [{ type: 'FIXED', currency: 'usd', amount: '49', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }] });
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: customer.body.id, plan_id: plan.body.id });
    expect([plan.status, sub.status]).toEqual([201, 201]);
    const invoiceId = (await stack.api.get(`/v1/invoices?subscription_id=${sub.body.id}`)).body.items[0].id as string;
    await stack.restart('billing', { BILLSTREAM_FAILPOINTS: POINT });
    expect((await stack.api.post(`/v1/invoices/${invoiceId}/finalize`, {})).status).toBe(200);

    // The server accepts the message, then billing kills itself before recording it.
    await waitFor(() => !stack.running('billing'), { timeoutMs: 20_000, what: `billing to kill itself at ${POINT}` });
    expect(stack.logs('billing')).toContain(`failpoint ${POINT}: SIGKILL`);
    const ofInvoice = () => smtp.received.filter((r) => r.mail.headers.get('x-billstream-invoice') === invoiceId);
    expect(ofInvoice()).toHaveLength(1);
    const [row] = await billingDb('invoice_emails').where({ invoice_id: invoiceId });
    expect([row.status, row.attempts]).toEqual(['pending', 1]);

    // Restarted without the failpoint; the lease (5 minutes) is made to have run out.
    await stack.restart('billing');
    await billingDb('invoice_emails').where({ id: row.id }).update({ next_attempt_at: billingDb.raw("now() - interval '1 second'") });
    const sent = await waitFor(async () => {
      const res = await stack.api.get(`/v1/invoices/${invoiceId}/communications`);
      if (res.status !== 200) throw new Error(`communications: ${res.status} ${res.text}`);
      const list = res.body.items as Array<{ id: string; status: string; attempts: number }>;
      return list.length === 1 && list[0]!.status === 'sent' && list;
    }, { timeoutMs: 30_000, what: 'the email sent after the restart' });
    expect(sent[0]).toMatchObject({ id: row.id, status: 'sent', attempts: 2 });
    await new Promise((r) => setTimeout(r, 500));
    const [first, second, ...more] = ofInvoice();
    expect(more).toHaveLength(0);
    expect(first!.mail.messageId).toBe(`<${row.id}@crash.example>`);
    expect(second!.mail.messageId).toBe(first!.mail.messageId);
    expect(second!.mail.subject).toBe(first!.mail.subject);
    expect(second!.rcptTo).toEqual([email]);
    expect(Buffer.compare(second!.mail.attachments[0]!.content, first!.mail.attachments[0]!.content)).toBe(0);
  }, 180_000);
});
