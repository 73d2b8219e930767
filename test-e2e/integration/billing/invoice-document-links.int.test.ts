import { createHmac } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb, type Db } from '@billstream/db';
import { startIntegrationStack, TEST_ENVIRONMENT, TEST_TENANT, type IntegrationStack } from '../../support/stack';
import { fixedPrice } from './prices';

/**
 * Signed document links that expire and can be revoked, and the headers of every document
 * answer (issue #47 item 4, ADR 0059), as a client meets them through the gateway on real
 * Postgres and Kafka. `npm start`'s embedded default keeps the links' key in DATA_DIR, never in
 * the database: the test reads it there to sign a link that has expired as one given out long ago.
 */
interface Invoice {
  id: string;
  due_date: string;
  hosted_invoice_url: string | null;
  invoice_pdf_url: string | null;
}
const DAY_MS = 86_400_000;

describe('invoice document links: expiry, new links, revocation, document headers (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let billingDb: Db;
  let n = 0;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0', DOCUMENT_LINK_SECRET: '' } } });
    billingDb = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
  }, 120_000);
  afterAll(async () => {
    await billingDb?.destroy();
    await stack?.stop();
  });

  async function finalized(): Promise<Invoice> {
    const customer = await stack.api.post('/v1/customers', { external_customer_id: `links-${++n}-${Date.now()}`, name: `Link Buyer ${n}` });
    const plan = await stack.api.post('/v1/plans', { name: `Links ${n}`, prices: [fixedPrice] });
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: customer.body.id, plan_id: plan.body.id });
    expect([customer.status, plan.status, sub.status]).toEqual([201, 201, 201]);
    const draft = (await stack.api.get(`/v1/invoices?subscription_id=${sub.body.id}`)).body.items[0] as Invoice;
    const res = await stack.api.post(`/v1/invoices/${draft.id}/finalize`, {});
    expect(res.status).toBe(200);
    return res.body as Invoice;
  }

  async function get(url: string, headers: Record<string, string> = {}) {
    const u = new URL(url, stack.embedded.url);
    const res = await fetch(`${stack.embedded.url}${u.pathname}${u.search}`, { headers });
    return { status: res.status, headers: res.headers, text: Buffer.from(await res.arrayBuffer()).toString('latin1') };
  }
  const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;
  const keyFile = () => path.join(os.tmpdir(), `billstream-test-${stack.database.name}`, 'document-link-secret');
  /** A token signed with the stack's key (ADR 0059's format), as billing signs them. */
  function sign(invoiceId: string, generation: number, expiresAt: Date): string {
    const exp = Math.floor(expiresAt.getTime() / 1000);
    const mac = createHmac('sha256', Buffer.from(readFileSync(keyFile(), 'utf8').trim(), 'utf8'))
      .update(`invoice-document:v2\n${invoiceId}\n${TEST_TENANT}\n${TEST_ENVIRONMENT}\n${generation}\n${exp}`)
      .digest('base64url');
    return `${exp}.${generation}.${mac}`;
  }
  const documentHeaders = (h: Headers) => [h.get('content-security-policy')?.includes("frame-ancestors 'none'"), h.get('content-security-policy')?.includes("default-src 'none'"), h.get('x-content-type-options'), h.get('referrer-policy'), h.get('cache-control')];
  const DOCUMENT_HEADERS = [true, true, 'nosniff', 'no-referrer', 'private, no-store'];

  it('the key is a file of DATA_DIR (0600), not a row of the database; a finalized invoice s links last until 30 days after its due date', async () => {
    const tables = await billingDb.raw(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'billing' AND table_name LIKE 'document_link%'`);
    expect(tables.rows).toEqual([]);
    expect(readFileSync(keyFile(), 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(keyFile()).mode & 0o777).toBe(0o600);

    const invoice = await finalized();
    const token = tokenOf(invoice.hosted_invoice_url!);
    const expiresAt = new Date(new Date(invoice.due_date).getTime() + 30 * DAY_MS);
    expect(token).toBe(sign(invoice.id, 0, new Date(Math.ceil(expiresAt.getTime() / 1000) * 1000)));
    expect(tokenOf(invoice.invoice_pdf_url!)).toBe(token);
  }, 120_000);

  it('every document answer sends CSP with frame-ancestors none, nosniff and no-referrer as headers: by key, by link, and a link s refusals', async () => {
    const invoice = await finalized();
    const auth = { authorization: `Bearer ${stack.api.key}` };
    for (const [url, headers, status] of [
      [`/v1/invoices/${invoice.id}/html`, auth, 200],
      [`/v1/invoices/${invoice.id}/pdf`, auth, 200],
      [invoice.hosted_invoice_url!, {}, 200],
      [invoice.invoice_pdf_url!, {}, 200],
      [`/v1/hosted/invoices/${invoice.id}?token=${'A'.repeat(43)}`, {}, 401],
      [`/v1/hosted/invoices/${invoice.id}`, {}, 400],
      [`/v1/hosted/invoices/${invoice.id}?token=${sign(invoice.id, 0, new Date(Date.now() - DAY_MS))}`, {}, 410],
    ] as Array<[string, Record<string, string>, number]>) {
      const res = await get(url, headers);
      expect([url, res.status, ...documentHeaders(res.headers)]).toEqual([url, status, ...DOCUMENT_HEADERS]);
    }
  }, 120_000);

  it('an expired link: 410 in the envelope for an API client, a page that says it expired for a browser; nothing written', async () => {
    const invoice = await finalized();
    const before = await stack.api.get(`/v1/invoices/${invoice.id}`);
    const expired = sign(invoice.id, 0, new Date(Date.now() - 1000));
    const api = await get(`/v1/hosted/invoices/${invoice.id}/pdf?token=${expired}`);
    expect(api.status).toBe(410);
    expect(JSON.parse(api.text)).toMatchObject({ error: { internal_error: 'not_found', details: { reason: 'expired' } } });
    const browser = await get(`/v1/hosted/invoices/${invoice.id}?token=${expired}`, { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
    expect([browser.status, browser.headers.get('content-type')]).toEqual([410, 'text/html; charset=utf-8']);
    expect(browser.text).toContain('This invoice link no longer works');
    expect(browser.text).toMatch(/This link expired on \d{4}-\d{2}-\d{2}: ask the seller for a new one/);
    // A link signed for later still opens: only the expiry refused it.
    expect((await get(`/v1/hosted/invoices/${invoice.id}?token=${sign(invoice.id, 0, new Date(Date.now() + DAY_MS))}`)).status).toBe(200);
    expect((await stack.api.get(`/v1/invoices/${invoice.id}`)).body).toEqual(before.body);
  }, 120_000);

  it('POST document_links: 201 new links until the later of due date and now plus 30 days, set on the invoice; draft 400, unknown or another tenant s 404', async () => {
    const invoice = await finalized();
    const made = await stack.api.post(`/v1/invoices/${invoice.id}/document_links`, {});
    expect(made.status).toBe(201);
    expect(Object.keys(made.body).sort()).toEqual(['expires_at', 'hosted_invoice_url', 'invoice_pdf_url']);
    const expected = Math.max(new Date(invoice.due_date).getTime(), Date.now()) + 30 * DAY_MS;
    expect(Math.abs(new Date(made.body.expires_at).getTime() - expected)).toBeLessThan(60_000);
    expect(tokenOf(made.body.hosted_invoice_url)).toBe(sign(invoice.id, 0, new Date(made.body.expires_at)));
    const after = (await stack.api.get(`/v1/invoices/${invoice.id}`)).body as Invoice;
    expect([after.hosted_invoice_url, after.invoice_pdf_url]).toEqual([made.body.hosted_invoice_url, made.body.invoice_pdf_url]);
    expect((await get(made.body.invoice_pdf_url)).status).toBe(200);
    // The finalization's link is not revoked by a new one.
    expect((await get(invoice.hosted_invoice_url!)).status).toBe(200);

    const customer = await stack.api.post('/v1/customers', { external_customer_id: `links-draft-${Date.now()}` });
    const plan = await stack.api.post('/v1/plans', { name: `Links draft ${++n}`, prices: [fixedPrice] });
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: customer.body.id, plan_id: plan.body.id });
    const draft = (await stack.api.get(`/v1/invoices?subscription_id=${sub.body.id}`)).body.items[0] as Invoice;
    const refused = await stack.api.post(`/v1/invoices/${draft.id}/document_links`, {});
    expect([refused.status, refused.body.error.details.field]).toEqual([400, 'status']);
    expect((await stack.api.post('/v1/invoices/inv_nope/document_links', {})).status).toBe(404);
    const other = stack.api.withKey(await stack.keyFor('tenant-b', 'production'));
    expect((await other.post(`/v1/invoices/${invoice.id}/document_links`, {})).status).toBe(404);
    expect((await other.delete(`/v1/invoices/${invoice.id}/document_links`)).status).toBe(404);
    expect((await stack.api.post(`/v1/invoices/${invoice.id}/document_links`, { expires_at: 'never' })).status).toBe(400);
  }, 120_000);

  it('DELETE document_links: 204; every earlier link of that invoice answers 410 revoked, others still open; a new link opens; the mailer gets a valid one', async () => {
    const invoice = await finalized();
    const neighbour = await finalized();
    const made = (await stack.api.post(`/v1/invoices/${invoice.id}/document_links`, {})).body as { hosted_invoice_url: string; invoice_pdf_url: string };
    const revoked = await stack.api.delete(`/v1/invoices/${invoice.id}/document_links`);
    expect(revoked.status).toBe(204);
    for (const url of [invoice.hosted_invoice_url!, invoice.invoice_pdf_url!, made.hosted_invoice_url, made.invoice_pdf_url]) {
      const res = await get(url);
      expect([res.status, JSON.parse(res.text).error.details.reason]).toEqual([410, 'revoked']);
    }
    const page = await get(invoice.hosted_invoice_url!, { accept: 'text/html' });
    expect([page.status, page.text.includes('This link was revoked')]).toEqual([410, true]);
    expect((await get(neighbour.hosted_invoice_url!)).status).toBe(200);
    const shown = (await stack.api.get(`/v1/invoices/${invoice.id}`)).body as Invoice;
    expect([shown.hosted_invoice_url, shown.invoice_pdf_url]).toEqual([null, null]);

    // The mailer is sent links of the new generation, not the revoked ones.
    const sent = await stack.api.post(`/v1/invoices/${invoice.id}/communications/trigger`, {});
    expect(sent.status).toBe(202);
    const event = (await billingDb('outbox').where({ message_key: invoice.id }).select('value'))
      .map((r: { value: string }) => JSON.parse(r.value) as { id: string; payload: { communication?: { links: { hosted_invoice_url: string } } } })
      .find((e) => e.id === sent.body.event_id)!;
    expect(tokenOf(event.payload.communication!.links.hosted_invoice_url)).toMatch(/^\d+\.1\./);
    expect((await get(event.payload.communication!.links.hosted_invoice_url)).status).toBe(200);

    const again = await stack.api.post(`/v1/invoices/${invoice.id}/document_links`, {});
    expect(tokenOf(again.body.hosted_invoice_url)).toMatch(/^\d+\.1\./);
    expect((await get(again.body.hosted_invoice_url)).status).toBe(200);
    expect((await get(made.hosted_invoice_url)).status).toBe(410);
    expect((await stack.api.delete('/v1/invoices/inv_nope/document_links')).status).toBe(404);
  }, 120_000);
});
