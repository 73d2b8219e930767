import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { createDb, type Db } from '@billstream/db';
import { waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { fixedPrice } from './prices';

/**
 * Invoice documents and communication (docs/api/invoice-documents.md, ADR 0045) as a client meets them:
 * through the gateway, on the whole stack with real Postgres and Kafka. The PDF is read back with
 * poppler's `pdftotext`, the HTML opened in headless Chromium (Debian's `chromium`, driven by
 * playwright-core). Both binaries are required: .ci/run installs them; missing, the tests fail.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** docs/images/invoice-sample.png with UPDATE_SCREENSHOT=1 (Debian's fonts-droid-fallback gives Chromium its CJK glyphs); else a temporary file. */
const SCREENSHOT = process.env.UPDATE_SCREENSHOT === '1' ? path.resolve(__dirname, '../../../docs/images/invoice-sample.png') : path.join(os.tmpdir(), `billstream-invoice-sample-${process.pid}.png`);
const NAMES = { latin: 'Jürgen Müller', cyrillic: 'Жанна Иванова', greek: 'Ωμέγα Παπαδόπουλος', cjk: '山田太郎 王小明' };
const BUYER = `${NAMES.latin} ${NAMES.cyrillic}`;

function requireBinaries(): void {
  try {
    execFileSync('pdftotext', ['-v'], { stdio: 'ignore' });
  } catch {
    throw new Error('pdftotext is missing: install Debian package poppler-utils (apt-get install -y poppler-utils); .ci/run does');
  }
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: install Debian package chromium (apt-get install -y chromium) or set CHROMIUM_PATH; .ci/run does`);
}

interface Invoice {
  id: string;
  status: string;
  invoice_number: string;
  currency: string;
  finalized_at: string;
  due_date: string;
  period_start: string;
  period_end: string;
  hosted_invoice_url: string | null;
  invoice_pdf_url: string | null;
  line_items: Array<{ description: string; quantity: string }>;
  amount_due: number;
}

describe('invoice documents through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let billingDb: Db;
  let browser: Browser;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'billstream-documents-'));
  let n = 0;
  /** The email of the last customer made. */
  let email = '';

  beforeAll(async () => {
    requireBinaries();
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0' } } });
    billingDb = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
    const seller = await stack.api.put('/v1/settings/billing', {
      invoice_settings: { company_name: `Acme ${NAMES.greek} 株式会社`, address: '1 Harbour Road\n20457 Hamburg\nGermany', tax_id: 'DE123456789', footer: 'Thank you for your business.' },
    });
    expect(seller.status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await billingDb?.destroy();
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
    if (process.env.UPDATE_SCREENSHOT !== '1') rmSync(SCREENSHOT, { force: true });
  });

  /** A customer whose name and address billing's projection knows (from customer-events). */
  async function customer(name: string): Promise<string> {
    email = `buyer${++n}@example.com`;
    const created = await stack.api.post('/v1/customers', {
      external_customer_id: `doc-${n}-${Date.now()}`,
      name,
      email,
      address_line1: `${NAMES.cjk} 1-2-3`,
      address_city: 'Tokyo',
      address_postal_code: '100-0001',
      address_country: 'JP',
    });
    expect(created.status).toBe(201);
    await waitFor(async () => (await billingDb('customers').where({ id: created.body.id }).first())?.name === name, { what: 'the customer projection', timeoutMs: 30_000 });
    return created.body.id as string;
  }

  /** A plan of one FIXED price, a subscription, its draft. */
  async function draft(customerId: string, price: Record<string, unknown> = fixedPrice): Promise<Invoice> {
    const plan = await stack.api.post('/v1/plans', { name: `Documents ${++n}`, prices: [price] });
    expect(plan.status).toBe(201);
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: plan.body.id });
    expect(sub.status).toBe(201);
    return (await stack.api.get(`/v1/invoices?subscription_id=${sub.body.id}`)).body.items[0] as Invoice;
  }

  async function finalize(id: string): Promise<Invoice> {
    const res = await stack.api.post(`/v1/invoices/${id}/finalize`, {});
    expect(res.status).toBe(200);
    return res.body as Invoice;
  }

  /** A raw GET: with the test's key unless `key` is null. */
  async function fetchRaw(pathAndQuery: string, key: string | null = stack.api.key ?? null) {
    const res = await fetch(`${stack.embedded.url}${pathAndQuery}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
    return { status: res.status, type: res.headers.get('content-type') ?? '', bytes: Buffer.from(await res.arrayBuffer()) };
  }
  const linkPath = (url: string) => {
    const u = new URL(url);
    return `${u.pathname}${u.search}`;
  };
  function pdfText(bytes: Buffer): string {
    const file = path.join(dir, `doc-${++n}.pdf`);
    writeFileSync(file, bytes);
    return execFileSync('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-'], { encoding: 'utf8' });
  }
  const errorOf = (r: { status: number; bytes: Buffer }) => [r.status, (JSON.parse(r.bytes.toString('utf8')) as { error: { internal_error: string } }).error.internal_error];

  it('the PDF is issued at finalization: every number, both parties in Latin, Cyrillic, Greek and CJK, the same bytes on every request, after a credit note, a payment, and by its signed link', async () => {
    const customerId = await customer(`${BUYER} ${NAMES.greek} ${NAMES.cjk}`);
    const d = await draft(customerId);
    expect(d.status).toBe('draft');
    expect(d.hosted_invoice_url).toBeNull();
    expect(errorOf(await fetchRaw(`/v1/invoices/${d.id}/pdf`))).toEqual([400, 'validation_error']);
    expect(errorOf(await fetchRaw(`/v1/invoices/${d.id}/html`))).toEqual([400, 'validation_error']);

    const invoice = await finalize(d.id);
    // The token: its expiry (unix seconds), the link generation (0), the HMAC (ADR 0059).
    expect(invoice.hosted_invoice_url).toMatch(new RegExp(`/v1/hosted/invoices/${invoice.id}\\?token=\\d+\\.0\\.[A-Za-z0-9_-]{43}$`));
    expect(invoice.invoice_pdf_url).toMatch(new RegExp(`/v1/hosted/invoices/${invoice.id}/pdf\\?token=\\d+\\.0\\.[A-Za-z0-9_-]{43}$`));

    const first = await fetchRaw(`/v1/invoices/${invoice.id}/pdf`);
    expect(first.status).toBe(200);
    expect(first.type).toBe('application/pdf');
    expect(first.bytes.subarray(0, 5).toString()).toBe('%PDF-');
    const text = pdfText(first.bytes);
    for (const expected of [
      `Acme ${NAMES.greek} 株式会社`,
      '1 Harbour Road',
      '20457 Hamburg',
      'Tax ID: DE123456789',
      `${BUYER} ${NAMES.greek} ${NAMES.cjk}`,
      `${NAMES.cjk} 1-2-3`,
      '100-0001 Tokyo',
      email,
      invoice.invoice_number,
      invoice.finalized_at.slice(0, 10),
      invoice.due_date.slice(0, 10),
      `${invoice.period_start.slice(0, 10)} – ${invoice.period_end.slice(0, 10)}`,
      invoice.line_items[0]!.description,
      'Thank you for your business.',
    ]) {
      expect(text).toContain(expected);
    }
    // One line of 49 usd: quantity 1, unit amount 49.00, amount 49.00; nothing paid at finalization.
    expect(text).toMatch(/\b1\s+49\.00 USD\s+49\.00 USD/);
    for (const [label, amount] of [
      ['Subtotal', '49.00 USD'],
      ['Total', '49.00 USD'],
      ['Amount due', '49.00 USD'],
      ['Amount paid', '0.00 USD'],
      ['Amount remaining', '49.00 USD'],
    ]) {
      expect(text).toMatch(new RegExp(`${label}\\s+${amount.replace('.', '\\.')}`));
    }
    // Fonts embedded (subsets): the PDF needs none installed where it is read.
    expect(execFileSync('pdffonts', [path.join(dir, `doc-${n}.pdf`)], { encoding: 'utf8' })).toMatch(/NotoSans-Regular[\s\S]*yes/);

    // Byte-identical: again, by the signed link without a key, after a credit note and a payment in full.
    expect((await fetchRaw(`/v1/invoices/${invoice.id}/pdf`)).bytes.equals(first.bytes)).toBe(true);
    const byLink = await fetchRaw(linkPath(invoice.invoice_pdf_url!), null);
    expect([byLink.status, byLink.type]).toEqual([200, 'application/pdf']);
    expect(byLink.bytes.equals(first.bytes)).toBe(true);
    const note = await stack.api.post('/v1/credit_notes', { invoice_id: invoice.id, reason: 'ORDER_CHANGE', amount: 900 });
    expect(note.status).toBe(201);
    const paid = await stack.api.post('/v1/payments', { invoice_id: invoice.id, amount: 4000, payment_method_type: 'OFFLINE', reference: 'wire <b>42</b>' });
    expect(paid.status).toBe(201);
    expect((await stack.api.get(`/v1/invoices/${invoice.id}`)).body.status).toBe('paid');
    expect((await fetchRaw(`/v1/invoices/${invoice.id}/pdf`)).bytes.equals(first.bytes)).toBe(true);

    // The HTML is live: PAID, the payment, the credit note, the new totals; every text escaped.
    const html = await fetchRaw(linkPath(invoice.hosted_invoice_url!), null);
    expect([html.status, html.type]).toEqual([200, 'text/html; charset=utf-8']);
    const page = html.bytes.toString('utf8');
    for (const expected of ['PAID', note.body.credit_note_number, 'wire &lt;b&gt;42&lt;/b&gt;', '-9.00 USD', '40.00 USD', `${BUYER} ${NAMES.greek} ${NAMES.cjk}`]) expect(page).toContain(expected);
    expect(page).not.toContain('<b>42');
    expect(page).not.toMatch(/<script|<link|src="http:/i);
    expect((await fetchRaw(`/v1/invoices/${invoice.id}/html`)).bytes.toString('utf8')).toBe(page);

    // The sample screenshot of docs/, as Chromium renders the page.
    const tab = await browser.newPage({ viewport: { width: 900, height: 1100 } });
    await tab.goto(`${stack.embedded.url}${linkPath(invoice.hosted_invoice_url!)}`);
    const shown = await tab.locator('main').innerText();
    expect(shown).toContain(NAMES.cjk);
    expect(shown).toContain(NAMES.cyrillic);
    expect(shown).toMatch(/Amount remaining\s+0\.00 USD/);
    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await tab.screenshot({ path: SCREENSHOT, fullPage: true });
    await tab.close();
  }, 120_000);

  it('voided: the frozen PDF stays, the HTML says VOID; amounts in the currency minor digits (jpy 0, kwd 3)', async () => {
    const customerId = await customer('Kuwait Trading Co.');
    const kwd = await finalize((await draft(customerId, { ...fixedPrice, currency: 'kwd', amount: '12.345' })).id);
    const kwdPdf = await fetchRaw(`/v1/invoices/${kwd.id}/pdf`);
    const kwdText = pdfText(kwdPdf.bytes);
    expect(kwdText).toMatch(/Subtotal\s+12\.345 KWD/);
    expect(kwdText).toMatch(/Amount remaining\s+12\.345 KWD/);
    expect((await stack.api.post(`/v1/invoices/${kwd.id}/void`, {})).status).toBe(200);
    expect((await fetchRaw(`/v1/invoices/${kwd.id}/pdf`)).bytes.equals(kwdPdf.bytes)).toBe(true);
    expect((await fetchRaw(`/v1/invoices/${kwd.id}/html`)).bytes.toString('utf8')).toMatch(/class="stamp VOID">VOID</);

    const jpy = await finalize((await draft(customerId, { ...fixedPrice, currency: 'jpy', amount: '4900' })).id);
    const jpyText = pdfText((await fetchRaw(`/v1/invoices/${jpy.id}/pdf`)).bytes);
    expect(jpyText).toMatch(/Total\s+4,900 JPY/);
    expect(jpyText).not.toContain('4,900.');
  }, 120_000);

  it('customer text is escaped in the HTML: a name like <script>alert(1)</script> is shown, never run', async () => {
    const customerId = await customer('<script>alert(1)</script>');
    const invoice = await finalize((await draft(customerId)).id);
    const page = (await fetchRaw(`/v1/invoices/${invoice.id}/html`)).bytes.toString('utf8');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).not.toContain('<script>');
    const tab = await browser.newPage();
    let dialogs = 0;
    tab.on('dialog', (dialog) => {
      dialogs++;
      void dialog.dismiss();
    });
    await tab.goto(`${stack.embedded.url}${linkPath(invoice.hosted_invoice_url!)}`);
    expect(await tab.locator('script').count()).toBe(0);
    expect(await tab.locator('main').innerText()).toContain('<script>alert(1)</script>');
    expect(dialogs).toBe(0);
    await tab.close();
    expect(pdfText((await fetchRaw(`/v1/invoices/${invoice.id}/pdf`)).bytes)).toContain('<script>alert(1)</script>');
  }, 120_000);

  it('a signed link opens only its own invoice: a tampered token, another invoice s token, none: an error in the envelope, never the document', async () => {
    const customerId = await customer('Link Tester');
    const a = await finalize((await draft(customerId)).id);
    const b = await finalize((await draft(customerId)).id);
    const tokenOf = (i: Invoice) => new URL(i.invoice_pdf_url!).searchParams.get('token')!;
    const tampered = tokenOf(a).slice(0, -1) + (tokenOf(a).endsWith('A') ? 'B' : 'A');
    for (const p of [`/v1/hosted/invoices/${a.id}/pdf?token=${tampered}`, `/v1/hosted/invoices/${a.id}?token=${tampered}`, `/v1/hosted/invoices/${a.id}/pdf?token=${tokenOf(b)}`, `/v1/hosted/invoices/nope/pdf?token=${tokenOf(a)}`]) {
      const res = await fetchRaw(p, null);
      expect(errorOf(res)).toEqual([401, 'permission_denied']);
      expect(res.type).toMatch(/^application\/json/);
    }
    expect(errorOf(await fetchRaw(`/v1/hosted/invoices/${a.id}/pdf`, null))[0]).toBe(400);
    expect((await fetchRaw(`/v1/hosted/invoices/${b.id}/pdf?token=${tokenOf(b)}`, null)).status).toBe(200);
    // The API's own document routes still need a key; another tenant's key does not find the invoice.
    expect((await fetchRaw(`/v1/invoices/${a.id}/pdf`, null)).status).toBe(401);
    const other = await stack.keyFor('tenant-b', 'production');
    expect(errorOf(await fetchRaw(`/v1/invoices/${a.id}/pdf`, other))).toEqual([404, 'not_found']);
  }, 120_000);

  it('communication trigger: 202 {event_id}; one outbox event with the links and recipient; the same key answers the same event; drafts and voided: 400', async () => {
    const customerId = await customer('Mail Recipient');
    const d = await draft(customerId);
    const trigger = (id: string, body: Record<string, unknown> = {}) => stack.api.post(`/v1/invoices/${id}/communications/trigger`, body);
    expect((await trigger(d.id)).status).toBe(400);
    const invoice = await finalize(d.id);
    const sent = await trigger(invoice.id, { idempotency_key: 'send-1' });
    expect(sent.status).toBe(202);
    expect(sent.body.event_id).toMatch(/^evt_/);
    expect((await trigger(invoice.id, { idempotency_key: 'send-1' })).body).toEqual({ event_id: sent.body.event_id });
    const events = (await billingDb('outbox').where({ message_key: invoice.id }).orderBy('seq').select('value'))
      .map((r: { value: string }) => JSON.parse(r.value) as { id: string; type: string; payload: Record<string, any> })
      .filter((e) => e.type === 'invoice.communication.triggered');
    expect(events.map((e) => e.id)).toEqual([sent.body.event_id]);
    expect(events[0]!.payload.invoice).toMatchObject({ id: invoice.id, hosted_invoice_url: invoice.hosted_invoice_url });
    expect(events[0]!.payload.communication).toEqual({
      links: { hosted_invoice_url: invoice.hosted_invoice_url, invoice_pdf_url: invoice.invoice_pdf_url },
      recipient_email: email,
    });
    // Without a key each call is a new event.
    const again = await trigger(invoice.id);
    expect(again.status).toBe(202);
    expect(again.body.event_id).not.toBe(sent.body.event_id);
    expect((await stack.api.post(`/v1/invoices/${invoice.id}/void`, {})).status).toBe(200);
    const voided = await trigger(invoice.id, { idempotency_key: 'send-2' });
    expect([voided.status, voided.body.error?.details?.field]).toEqual([400, 'status']);
  }, 120_000);
});
