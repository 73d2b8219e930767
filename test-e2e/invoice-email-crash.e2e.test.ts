import { createDb, type Db } from '@billstream/db';
import { freePort, waitFor } from '@billstream/testing';
import { startProcessStack, type ProcessStack } from './support/stack';
import { TestSmtpServer } from './support/smtp';

/**
 * The invoice email across a crash (ADR 0067, ADR 0017) on the services as real processes,
 * real Postgres, Kafka and an SMTP server this test starts on 127.0.0.1: billing SIGKILLs itself
 * at `email.after-accepted` (the server holds the message, billing has not recorded it). After
 * the restart and the lease, the message goes once more with the same Message-ID, subject and
 * PDF, and the one communication ends `sent` after 2 attempts: nothing lost, the copy recognisable.
 */
const POINT = 'email.after-accepted';
const FROM = 'billing@crash.example';

describe('invoice email exactly once per Message-ID across a crash (e2e: real processes, Postgres, Kafka, SMTP)', () => {
  let stack: ProcessStack;
  let smtp: TestSmtpServer;
  let billingDb: Db;
  let env: Record<string, string>;

  beforeAll(async () => {
    smtp = new TestSmtpServer(await freePort());
    await smtp.start();
    env = { SMTP_URL: smtp.url, BILLING_EMAIL_POLL_MS: '200', BILLING_INTERVAL_MS: '0' };
    stack = await startProcessStack({ env: { billing: env } });
    billingDb = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
  }, 180_000);
  afterAll(async () => {
    await billingDb?.destroy();
    await stack?.stop();
    await smtp?.stop();
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
