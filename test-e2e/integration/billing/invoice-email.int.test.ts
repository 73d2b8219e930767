import { Writable } from 'node:stream';
import { chromium } from 'playwright-core';
import winston from 'winston';
import { createBillingService, type BillingServiceHandle } from '@billstream/billing';
import { InProcessBus } from '@billstream/bus';
import { createDb, type Db } from '@billstream/db';
import { createLogger } from '@billstream/logger';
import { freePort, testLogger, waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { TestSmtpServer } from '../../support/smtp';
import { fixedPrice } from './prices';

/**
 * Invoice email over SMTP (ADR 0067, docs/api/invoice-documents.md) as a client meets it: through
 * the gateway on real Postgres and Kafka, to a real SMTP server this test starts on 127.0.0.1,
 * each message read back (mailparser). A second billing instance's sender runs against the same
 * database beside the stack's: one message per (invoice, trigger) still.
 */
const MAX_ATTEMPTS = 5;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SELLER = 'Acme Tools';
const FROM = 'billing@acme.example';

interface Communication {
  id: string;
  invoice_id: string;
  channel: string;
  trigger: 'finalization' | 'communication';
  event_id: string | null;
  status: 'pending' | 'sent' | 'failed';
  recipient: string | null;
  attempts: number;
  last_response: string | null;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
}

describe('invoice email over SMTP through the gateway (real Postgres, Kafka and SMTP server)', () => {
  let stack: IntegrationStack;
  let smtp: TestSmtpServer;
  let billingDb: Db;
  let second: BillingServiceHandle;
  let secondDb: Db;
  let n = 0;
  const logLines: string[] = [];

  beforeAll(async () => {
    smtp = new TestSmtpServer(await freePort());
    await smtp.start();
    const emailEnv = { SMTP_URL: smtp.url, BILLING_EMAIL_RETRY_BASE_MS: '300', BILLING_EMAIL_MAX_ATTEMPTS: String(MAX_ATTEMPTS) };
    // Every line the stack logs, at http level too: the portal link of a message must be in none.
    const logger = createLogger({ service: 'stack', level: 'debug' });
    logger.clear();
    logger.add(new winston.transports.Stream({ stream: new Writable({ write(chunk, _enc, done) { logLines.push(chunk.toString()); done(); } }) }));
    stack = await startIntegrationStack({ extra: { logger, env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0', BILLING_EMAIL_POLL_MS: '100', ...emailEnv } } });
    billingDb = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    // A second billing instance on the same database: only its sender's rounds are run, by the test.
    secondDb = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    const nowhere = 'http://127.0.0.1:9';
    second = createBillingService(
      { db: secondDb, bus: new InProcessBus(), logger: testLogger('billing-2') },
      { internalToken: 'second-instance', customerServiceUrl: nowhere, ingestionServiceUrl: nowhere, walletServiceUrl: nowhere, env: { ...emailEnv, BILLING_EMAIL_POLL_MS: '0', BILLING_INTERVAL_MS: '0' } },
    );
    const seller = await stack.api.put('/v1/settings/billing', { invoice_settings: { company_name: SELLER, address: '1 Harbour Road\n20457 Hamburg' } });
    expect(seller.status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await second?.stop();
    await secondDb?.destroy();
    await billingDb?.destroy();
    await stack?.stop();
    await smtp?.stop();
  });

  async function emailSettings(email: Record<string, unknown>): Promise<void> {
    const res = await stack.api.put('/v1/settings/billing', { email });
    expect(res.status).toBe(200);
  }

  /** A customer billing's projection knows with its email, a plan of one FIXED 49 usd price, the subscription's draft. */
  async function draft(): Promise<{ id: string; email: string }> {
    const email = `payer${++n}@example.com`;
    const created = await stack.api.post('/v1/customers', { external_customer_id: `mail-${n}-${Date.now()}`, name: `Payer ${n}`, email });
    expect(created.status).toBe(201);
    await waitFor(async () => (await billingDb('customers').where({ id: created.body.id }).first())?.email === email, { what: 'the customer projection', timeoutMs: 30_000 });
    const plan = await stack.api.post('/v1/plans', { name: `Email ${n}`, prices: [fixedPrice] });
    expect(plan.status).toBe(201);
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: created.body.id, plan_id: plan.body.id });
    expect(sub.status).toBe(201);
    const invoices = await stack.api.get(`/v1/invoices?subscription_id=${sub.body.id}`);
    return { id: invoices.body.items[0].id as string, email };
  }

  async function finalize(id: string): Promise<{ id: string; invoice_number: string; hosted_invoice_url: string }> {
    const res = await stack.api.post(`/v1/invoices/${id}/finalize`, {});
    expect(res.status).toBe(200);
    return res.body;
  }

  async function trigger(id: string, key?: string): Promise<string> {
    const res = await stack.api.post(`/v1/invoices/${id}/communications/trigger`, key ? { idempotency_key: key } : {});
    expect(res.status).toBe(202);
    return res.body.event_id as string;
  }

  async function communications(id: string): Promise<Communication[]> {
    const res = await stack.api.get(`/v1/invoices/${id}/communications`);
    expect(res.status).toBe(200);
    return res.body.items as Communication[];
  }

  const messagesOf = (invoiceId: string) => smtp.received.filter((r) => r.mail.headers.get('x-billstream-invoice') === invoiceId);

  async function sentAll(id: string, count: number): Promise<Communication[]> {
    return waitFor(async () => {
      const list = await communications(id);
      return list.length === count && list.every((c) => c.status === 'sent') && list;
    }, { what: `${count} sent communications of ${id}`, timeoutMs: 20_000 });
  }

  async function pdfOf(id: string): Promise<Buffer> {
    const res = await fetch(`${stack.embedded.url}/v1/invoices/${id}/pdf`, { headers: { authorization: `Bearer ${stack.api.key}` } });
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  }

  it('email off (the default): a finalization and a trigger record nothing and send nothing; the event is still written', async () => {
    const d = await draft();
    await finalize(d.id);
    expect(await trigger(d.id)).toMatch(/^evt_/);
    await new Promise((r) => setTimeout(r, 500));
    expect(await communications(d.id)).toEqual([]);
    expect(messagesOf(d.id)).toHaveLength(0);
  });

  it('the finalization sends one email: recipient, bcc, reply-to, subject with number and amount, both bodies with the hosted link and a portal link (a signed entry exchanged for a one-hour session, no token), the PDF the API serves attached, a Message-ID of the communication', async () => {
    await emailSettings({ enabled: true, from: FROM, reply_to: 'help@acme.example', bcc: 'archive@acme.example' });
    const d = await draft();
    const invoice = await finalize(d.id);
    const [sent] = await sentAll(d.id, 1);
    expect(sent).toMatchObject({ invoice_id: d.id, channel: 'email', trigger: 'finalization', event_id: null, status: 'sent', recipient: d.email, attempts: 1, next_attempt_at: null });
    expect(sent!.last_response).toMatch(/^250 /);
    expect(sent!.id).toMatch(/^icomm_/);

    const [message, ...more] = messagesOf(d.id);
    expect(more).toHaveLength(0);
    expect(message!.rcptTo.sort()).toEqual(['archive@acme.example', d.email].sort());
    const mail = message!.mail;
    expect(mail.messageId).toBe(`<${sent!.id}@acme.example>`);
    expect((mail.to as { text: string }).text).toBe(d.email);
    expect(mail.from!.text).toBe(FROM);
    expect(mail.replyTo!.text).toBe('help@acme.example');
    expect(mail.subject).toBe(`Invoice ${invoice.invoice_number}: 49.00 USD from ${SELLER}`);
    for (const body of [mail.text!, mail.html as string]) {
      expect(body).toContain(invoice.hosted_invoice_url);
      expect(body).toContain(invoice.invoice_number);
      expect(body).toContain('49.00 USD');
      expect(body).toContain(`Payer ${n}`);
    }
    expect(mail.text).toContain('Amount due: 49.00 USD');
    // The portal link: a signed entry (no portal token in the mailbox) the gateway exchanges for a one-hour session.
    const portalLink = /(http\S+\/portal\/#email=([A-Za-z0-9_.-]+))/.exec(mail.text!);
    expect(portalLink).not.toBeNull();
    expect(mail.html as string).toContain(portalLink![1]);
    expect(`${mail.text}${mail.html as string}`).not.toMatch(/bsp_/);
    const exchange = (link: string) => fetch(`${stack.embedded.url}/v1/portal/email_sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ link }) });
    const opened = await exchange(portalLink![2]!);
    expect(opened.status).toBe(201);
    const { token, expires_at } = (await opened.json()) as { token: string; expires_at: string };
    expect(token).toMatch(/^bsp_/);
    expect(Date.parse(expires_at) - Date.now()).toBeLessThanOrEqual(3600_000);
    const session = await fetch(`${stack.embedded.url}/v1/portal/session`, { headers: { authorization: `Bearer ${token}` } });
    expect(session.status).toBe(200);
    expect(((await session.json()) as { customer: { email: string } }).customer.email).toBe(d.email);
    const portalInvoice = await fetch(`${stack.embedded.url}/v1/portal/invoices/${d.id}`, { headers: { authorization: `Bearer ${token}` } });
    expect(portalInvoice.status).toBe(200);
    // A link changed by one character, or none: 401 / 400 in the envelope, no session.
    const tampered = portalLink![2]!.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    const refused = await exchange(tampered);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { success: boolean }).success).toBe(false);
    expect((await exchange('')).status).toBe(400);
    // Neither the link nor the session's token in any log line of the stack (the exchange's request line included).
    expect(logLines.some((l) => l.includes('/v1/portal/email_sessions'))).toBe(true);
    const all = logLines.join('\n');
    expect(all).not.toContain(portalLink![2]!.split('.')[1]!);
    expect(all).not.toContain(token.slice(4));
    expect(mail.attachments).toHaveLength(1);
    const attachment = mail.attachments[0]!;
    expect(attachment.contentType).toBe('application/pdf');
    expect(attachment.filename).toBe(`invoice-${invoice.invoice_number}.pdf`);
    expect(Buffer.compare(attachment.content, await pdfOf(d.id))).toBe(0);
  });

  it('each new trigger sends one more email, a repeated idempotency key none, never two per (invoice, trigger) with two senders', async () => {
    const d = await draft();
    await finalize(d.id);
    await sentAll(d.id, 1);
    // The second instance's sender runs rounds without pause meanwhile, beside the stack's.
    let racing = true;
    const race = (async () => {
      while (racing) await second.emails.runOnce();
    })();
    const first = await trigger(d.id, 'send-again');
    expect(await trigger(d.id, 'send-again')).toBe(first);
    const burst = await Promise.all([trigger(d.id), trigger(d.id), trigger(d.id), trigger(d.id)]);
    const list = await sentAll(d.id, 6);
    racing = false;
    await race;
    expect(list.filter((c) => c.trigger === 'communication').map((c) => c.event_id).sort()).toEqual([first, ...burst].sort());
    expect(list.every((c) => c.attempts === 1)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    const ids = messagesOf(d.id).map((m) => m.mail.messageId);
    expect(ids).toHaveLength(6);
    expect(new Set(ids)).toEqual(new Set(list.map((c) => `<${c.id}@acme.example>`)));
    // Each trigger's `invoice.communication.triggered` is still published (billing's outbox, relayed to Kafka).
    const events = [first, ...burst];
    await waitFor(async () => (await billingDb('outbox').whereIn('id', events).whereNotNull('published_at')).length === events.length, { what: 'the triggers\' events published' });
  });

  it.each([
    ['the recipient (RCPT TO)', 'refuse-rcpt' as const, 451, '4.3.0 Mailbox busy, try later'],
    ['the message (after DATA)', 'refuse-data' as const, 554, '5.7.1 Message rejected for now'],
  ])('the server refusing %s twice then accepting: retried with backoff, sent on the third attempt', async (_what, kind, code, text) => {
    const d = await draft();
    smtp.mode = { kind, code, text, times: 2 };
    await finalize(d.id);
    const pending = await waitFor(async () => {
      const [c] = await communications(d.id);
      return c && c.status === 'pending' && c.attempts >= 1 && c.last_response !== null && c;
    }, { what: 'a refused attempt recorded' });
    expect(pending.last_response).toBe(`${code} ${text}`);
    expect(pending.next_attempt_at).not.toBeNull();
    const [sent] = await sentAll(d.id, 1);
    expect(sent!.attempts).toBe(3);
    expect(sent!.last_response).toMatch(/^250 /);
    expect(messagesOf(d.id)).toHaveLength(1);
  });

  it('the server down, then up: nothing lost, the email sent once after the outage', async () => {
    const d = await draft();
    await finalize(d.id);
    await sentAll(d.id, 1);
    await smtp.stop();
    const eventId = await trigger(d.id);
    // Two failed attempts recorded: the second's answer, not its claim (a claim leases the row for minutes, a failure waits the backoff).
    const failedTwice = (c: Communication) => c.event_id === eventId && c.attempts >= 2 && c.next_attempt_at !== null && Date.parse(c.next_attempt_at) - Date.parse(c.updated_at) < 60_000;
    const down = await waitFor(async () => (await communications(d.id)).find(failedTwice), { what: 'two failed attempts while the server is down' });
    expect(down.status).toBe('pending');
    expect(down.last_response).toMatch(/ECONNREFUSED/);
    await smtp.start();
    const list = await sentAll(d.id, 2);
    expect(list.find((c) => c.event_id === eventId)!.attempts).toBeGreaterThanOrEqual(3);
    expect(messagesOf(d.id)).toHaveLength(2);
  });

  it(`a server that always refuses: failed after ${MAX_ATTEMPTS} attempts, with its last answer`, async () => {
    const d = await draft();
    smtp.mode = { kind: 'refuse-rcpt', code: 550, text: '5.1.1 No such mailbox' };
    try {
      await finalize(d.id);
      const failed = await waitFor(async () => {
        const [c] = await communications(d.id);
        return c?.status === 'failed' && c;
      }, { what: 'the communication failed', timeoutMs: 30_000 });
      expect(failed).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, last_response: '550 5.1.1 No such mailbox', next_attempt_at: null, sent_at: null });
    } finally {
      smtp.mode = { kind: 'accept' };
    }
    expect(messagesOf(d.id)).toHaveLength(0);
  });

  it('another tenant cannot list the communications (404), a key without invoices:read is refused', async () => {
    const d = await draft();
    const other = await stack.keyFor('tenant-other', 'production');
    const res = await fetch(`${stack.embedded.url}/v1/invoices/${d.id}/communications`, { headers: { authorization: `Bearer ${other}` } });
    expect(res.status).toBe(404);
    const narrow = await stack.keyFor('tenant-a', 'production', ['customers:read']);
    const refused = await fetch(`${stack.embedded.url}/v1/invoices/${d.id}/communications`, { headers: { authorization: `Bearer ${narrow}` } });
    expect(refused.status).toBe(403);
  });

  it("the console's invoice page shows each delivery: trigger, recipient, status, attempts, the server's last answer; the email's portal link opens the portal on the invoice (headless Chromium)", async () => {
    const d = await draft();
    smtp.mode = { kind: 'refuse-rcpt', code: 451, text: '4.3.0 Mailbox busy, try later', times: 1 };
    const invoice = await finalize(d.id);
    await sentAll(d.id, 1);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
    try {
      const page = await browser.newPage();
      await page.goto(`${stack.embedded.url}/console/`);
      await page.getByLabel('API key').fill(stack.api.key!);
      await page.getByRole('button', { name: 'Open the console' }).click();
      await page.getByRole('heading', { name: 'Customers' }).waitFor();
      await page.goto(`${stack.embedded.url}/console/#/invoices/${d.id}`);
      await page.getByRole('heading', { name: `Invoice ${invoice.invoice_number}` }).waitFor();
      const row = page.getByRole('table', { name: 'Email deliveries' }).getByRole('row').filter({ hasText: d.email });
      await row.waitFor();
      const cells = await row.getByRole('cell').allTextContents();
      expect(cells.slice(1, 5)).toEqual(['finalization', d.email, 'sent', '2']);
      expect(cells[5]).toMatch(/^250 /);
      // The customer opens the email's portal link: the page exchanges it for a session and shows
      // the invoice; the link is out of the address at once.
      const link = new URL(/(http\S+\/portal\/#email=[A-Za-z0-9_.-]+)/.exec(messagesOf(d.id)[0]!.mail.text!)![1]!);
      const portal = await browser.newPage();
      await portal.goto(`${stack.embedded.url}/portal/${link.hash}`);
      await portal.getByRole('row', { name: new RegExp(invoice.invoice_number) }).waitFor();
      expect(portal.url()).not.toContain('email=');
    } finally {
      await browser.close();
    }
  });
});
