import { createDb, type Db } from '@billstream/db';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { fixedPrice } from './prices';

/**
 * The payment lifecycle and dunning (docs/api/billing.md#processor-payments, docs/api/billing.md#billing-settings-and-dunning, ADR 0044) as a client meets them:
 * through the gateway, on the whole stack with real Postgres and Kafka. PROVIDER payments are
 * pending until the client's processor integration settles them; dunning is tested with
 * backdated due dates (written in billing's schema), never by waiting.
 */
const DAY = 86_400_000;

interface Payment {
  id: string;
  payment_method_type: string;
  payment_status: string;
  provider: string | null;
  provider_reference: string | null;
  failure_reason: string | null;
  attempt: number | null;
  amount: number;
  idempotency_key: string | null;
}

describe('payment lifecycle and dunning through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let billingDb: Db;
  let planId: string;
  let n = 0;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0' } } });
    billingDb = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    planId = (await stack.api.post('/v1/plans', { name: 'Collected', prices: [fixedPrice] })).body.id;
  });
  afterAll(async () => {
    await billingDb?.destroy();
    await stack?.stop();
  });

  /** A finalized invoice of 49.00 (4900), nothing paid. */
  async function openInvoice(): Promise<string> {
    const customerId = (await stack.api.post('/v1/customers', { external_customer_id: `collect-${++n}-${Date.now()}` })).body.id;
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: planId });
    expect(sub.status).toBe(201);
    const invoiceId = (await stack.api.get(`/v1/invoices?subscription_id=${sub.body.id}`)).body.items[0].id as string;
    expect((await stack.api.post(`/v1/invoices/${invoiceId}/finalize`, {})).status).toBe(200);
    return invoiceId;
  }
  const pay = (invoiceId: string, body: Record<string, unknown>) => stack.api.post('/v1/payments', { invoice_id: invoiceId, ...body });
  const provider = (invoiceId: string, amount: number, key: string) => pay(invoiceId, { amount, payment_method_type: 'PROVIDER', provider: 'stripe', idempotency_key: key });
  const invoice = async (id: string) => (await stack.api.get(`/v1/invoices/${id}`)).body as { status: string; amount_paid: number; amount_remaining: number; payment_status: string };
  const errorOf = (res: { status: number; body: { error?: { internal_error: string; details?: { field?: string } } } }) => [res.status, res.body.error?.internal_error, res.body.error?.details?.field];
  const eventsOf = async (invoiceId: string) =>
    (await billingDb('outbox').where({ message_key: invoiceId }).orderBy('seq').select('value')).map((r: { value: string }) => (JSON.parse(r.value) as { type: string }).type);
  const cron = async () => expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
  const paymentsOf = async (invoiceId: string): Promise<Payment[]> => (await stack.api.get(`/v1/payments?invoice_id=${invoiceId}&limit=100`)).body.items;

  it('a PROVIDER payment is pending until its processor settles it; paid plus pending never exceeds what is due; repeats change nothing', async () => {
    const invoiceId = await openInvoice();
    expect(errorOf(await pay(invoiceId, { amount: 4900, payment_method_type: 'PROVIDER', provider: 'stripe' }))).toEqual([400, 'validation_error', 'idempotency_key']);
    expect(errorOf(await pay(invoiceId, { amount: 4900, payment_method_type: 'PROVIDER', idempotency_key: 'x' }))).toEqual([400, 'validation_error', 'provider']);
    expect(errorOf(await pay(invoiceId, { amount: 4900, payment_method_type: 'OFFLINE', provider: 'stripe' }))).toEqual([400, 'validation_error', 'provider']);

    const created = await provider(invoiceId, 4000, `p1-${invoiceId}`);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ payment_status: 'pending', payment_method_type: 'PROVIDER', provider: 'stripe', provider_reference: null, attempt: null });
    expect(await invoice(invoiceId)).toMatchObject({ status: 'finalized', amount_paid: 0, amount_remaining: 4900 });
    // 4000 pending: 900 is all another payment may take.
    expect(errorOf(await pay(invoiceId, { amount: 901, payment_method_type: 'OFFLINE' }))).toEqual([400, 'validation_error', 'amount']);
    expect(errorOf(await provider(invoiceId, 901, `p2-${invoiceId}`))).toEqual([400, 'validation_error', 'amount']);
    // The same key again: the same payment.
    expect((await provider(invoiceId, 4000, `p1-${invoiceId}`)).body.id).toBe(created.body.id);

    const succeeded = await stack.api.post(`/v1/payments/${created.body.id}/succeed`, { provider_reference: 'pi_123' });
    expect(succeeded.status).toBe(200);
    expect(succeeded.body).toMatchObject({ payment_status: 'succeeded', provider_reference: 'pi_123' });
    expect(await invoice(invoiceId)).toMatchObject({ status: 'finalized', amount_paid: 4000, amount_remaining: 900, payment_status: 'partially_paid' });
    // A duplicate callback: 200, unchanged; another outcome or reference: 400 payment_status.
    const again = await stack.api.post(`/v1/payments/${created.body.id}/succeed`, { provider_reference: 'pi_123' });
    expect([again.status, again.body.updated_at]).toEqual([200, succeeded.body.updated_at]);
    expect(errorOf(await stack.api.post(`/v1/payments/${created.body.id}/succeed`, { provider_reference: 'pi_999' }))).toEqual([400, 'validation_error', 'payment_status']);
    expect(errorOf(await stack.api.post(`/v1/payments/${created.body.id}/fail`, { failure_reason: 'card_declined' }))).toEqual([400, 'validation_error', 'payment_status']);
    expect(await invoice(invoiceId)).toMatchObject({ amount_paid: 4000 });

    // A failed payment frees what it reserved, and stays as failed.
    const second = await provider(invoiceId, 900, `p3-${invoiceId}`);
    const failed = await stack.api.post(`/v1/payments/${second.body.id}/fail`, { failure_reason: 'card_declined', provider_reference: 'pi_124' });
    expect(failed.body).toMatchObject({ payment_status: 'failed', failure_reason: 'card_declined', provider_reference: 'pi_124' });
    expect((await stack.api.post(`/v1/payments/${second.body.id}/fail`, { failure_reason: 'card_declined' })).status).toBe(200);
    const third = await provider(invoiceId, 900, `p4-${invoiceId}`);
    expect((await stack.api.post(`/v1/payments/${third.body.id}/succeed`, { provider_reference: 'pi_125' })).status).toBe(200);
    expect(await invoice(invoiceId)).toMatchObject({ status: 'paid', amount_paid: 4900, amount_remaining: 0, payment_status: 'succeeded' });
    expect((await paymentsOf(invoiceId)).map((p) => p.payment_status)).toEqual(['succeeded', 'failed', 'succeeded']);

    // Every event of the spec, in order, through the outbox.
    const payments = (await eventsOf(invoiceId)).filter((t) => t.startsWith('payment.') || t === 'invoice.update.payment');
    expect(payments).toEqual([
      'payment.created', 'payment.pending', 'payment.updated', 'payment.success', 'invoice.update.payment',
      'payment.created', 'payment.pending', 'payment.updated', 'payment.failed',
      'payment.created', 'payment.pending', 'payment.updated', 'payment.success', 'invoice.update.payment',
    ]);
    // An unknown payment: 404; an OFFLINE one is not a processor's: 400.
    expect((await stack.api.post('/v1/payments/pay_unknown/succeed', { provider_reference: 'x' })).status).toBe(404);
    const other = await openInvoice();
    const offline = await pay(other, { amount: 100, payment_method_type: 'OFFLINE' });
    expect(errorOf(await stack.api.post(`/v1/payments/${offline.body.id}/succeed`, { provider_reference: 'x' }))).toEqual([400, 'validation_error', 'payment_method_type']);
    expect((await eventsOf(other)).filter((t) => t.startsWith('payment.'))).toEqual(['payment.created', 'payment.success']);
  });

  it('settling is payments:settle (ADR 0058): invoices:write cannot say a processor payment succeeded or failed, a key with only payments:settle can', async () => {
    const invoiceId = await openInvoice();
    const created = await provider(invoiceId, 4900, `settle-${invoiceId}`);
    expect(created.status).toBe(201);
    const recorder = stack.api.withKey(await stack.keyFor('tenant-a', 'production', ['invoices:read', 'invoices:write']));
    const processor = stack.api.withKey(await stack.keyFor('tenant-a', 'production', ['payments:settle']));
    const denied = (res: { status: number; body: { error?: { internal_error: string; details?: { permission?: string } } } }) => [
      res.status,
      res.body.error?.internal_error,
      res.body.error?.details?.permission,
    ];
    expect(denied(await recorder.post(`/v1/payments/${created.body.id}/succeed`, { provider_reference: 'pi_forged' }))).toEqual([403, 'permission_denied', 'payments:settle']);
    expect(denied(await recorder.post(`/v1/payments/${created.body.id}/fail`, { failure_reason: 'forged' }))).toEqual([403, 'permission_denied', 'payments:settle']);
    // Nothing changed: still pending, nothing paid.
    expect((await paymentsOf(invoiceId)).map((p) => [p.id, p.payment_status])).toEqual([[created.body.id, 'pending']]);
    expect(await invoice(invoiceId)).toMatchObject({ amount_paid: 0, amount_remaining: 4900 });
    // The recorder still records payments of its own (invoices:write); the processor's key reads and records nothing else.
    expect((await recorder.get(`/v1/payments?invoice_id=${invoiceId}`)).status).toBe(200);
    expect(denied(await processor.get(`/v1/payments?invoice_id=${invoiceId}`))).toEqual([403, 'permission_denied', 'invoices:read']);
    expect(denied(await processor.post('/v1/payments', { invoice_id: invoiceId, amount: 1, payment_method_type: 'OFFLINE' }))).toEqual([403, 'permission_denied', 'invoices:write']);

    const settled = await processor.post(`/v1/payments/${created.body.id}/succeed`, { provider_reference: 'pi_real' });
    expect(settled.status).toBe(200);
    expect(settled.body).toMatchObject({ payment_status: 'succeeded', provider_reference: 'pi_real' });
    expect(await invoice(invoiceId)).toMatchObject({ status: 'paid', amount_paid: 4900, amount_remaining: 0 });

    const second = await openInvoice();
    const other = await provider(second, 4900, `settle-fail-${second}`);
    const failed = await processor.post(`/v1/payments/${other.body.id}/fail`, { failure_reason: 'card_declined' });
    expect([failed.status, failed.body.payment_status]).toEqual([200, 'failed']);
  });

  it('two concurrent full payments: one is taken, the other refused', async () => {
    const invoiceId = await openInvoice();
    const both = await Promise.all([provider(invoiceId, 4900, `a-${invoiceId}`), provider(invoiceId, 4900, `b-${invoiceId}`), pay(invoiceId, { amount: 4900, payment_method_type: 'OFFLINE' })]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 400, 400]);
  });

  it('dunning retries an overdue invoice as PENDING PROVIDER payments, once per attempt, on its schedule', async () => {
    expect((await stack.api.get('/v1/settings/billing')).body).toMatchObject({ dunning: { enabled: false, retry_schedule_days: [1, 3, 7], max_attempts: 3, provider: null }, version: 0 });
    expect(errorOf(await stack.api.call('PUT', '/v1/settings/billing', { dunning: { retry_schedule_days: [3, 1] } }))).toEqual([400, 'validation_error', 'dunning.retry_schedule_days']);
    expect(errorOf(await stack.api.call('PUT', '/v1/settings/billing', { invoice_settings: { company_name: 'Acme', address: 'x', logo_url: 'http://x' } }))).toEqual([400, 'validation_error', 'invoice_settings.logo_url']);
    const put = await stack.api.call('PUT', '/v1/settings/billing', { dunning: { enabled: true, retry_schedule_days: [1, 3], max_attempts: 5, provider: 'adyen' } });
    expect(put.status).toBe(200);
    // PUT merges: max_attempts changes, the rest stays.
    const merged = await stack.api.call('PUT', '/v1/settings/billing', { dunning: { max_attempts: 2 } });
    expect(merged.body).toMatchObject({ dunning: { enabled: true, retry_schedule_days: [1, 3], max_attempts: 2, provider: 'adyen' }, version: 2 });

    const invoiceId = await openInvoice();
    const backdate = (days: number) => billingDb('invoices').where({ id: invoiceId }).update({ due_date: new Date(Date.now() - days * DAY) });
    // Due 12 hours ago: overdue, but the first attempt is at due + 1 day.
    await backdate(0.5);
    await cron();
    expect(await paymentsOf(invoiceId)).toEqual([]);
    // Due 2 days ago: attempt 1, once, though two runs race.
    await backdate(2);
    await Promise.all([cron(), cron()]);
    await cron();
    const [first] = await paymentsOf(invoiceId);
    expect(await paymentsOf(invoiceId)).toHaveLength(1);
    expect(first).toMatchObject({ payment_status: 'pending', provider: 'adyen', attempt: 1, amount: 4900, idempotency_key: `dunning:${invoiceId}:1` });
    expect((await eventsOf(invoiceId)).filter((t) => t === 'invoice.payment.overdue')).toHaveLength(1);

    // It fails; attempt 2 waits for due + 3 days, then comes once.
    expect((await stack.api.post(`/v1/payments/${first!.id}/fail`, { failure_reason: 'insufficient_funds' })).status).toBe(200);
    await cron();
    expect(await paymentsOf(invoiceId)).toHaveLength(1);
    await backdate(4);
    await cron();
    await cron();
    const attempts = await paymentsOf(invoiceId);
    expect(attempts.map((p) => [p.attempt, p.payment_status])).toEqual([[1, 'failed'], [2, 'pending']]);
    // It fails too: max_attempts (2) reached, no third.
    expect((await stack.api.post(`/v1/payments/${attempts[1]!.id}/fail`, { failure_reason: 'insufficient_funds' })).status).toBe(200);
    await backdate(30);
    await cron();
    expect(await paymentsOf(invoiceId)).toHaveLength(2);
    // A paid invoice is never retried.
    const paid = await openInvoice();
    expect((await pay(paid, { amount: 4900, payment_method_type: 'OFFLINE' })).status).toBe(201);
    await billingDb('invoices').where({ id: paid }).update({ due_date: new Date(Date.now() - 10 * DAY) });
    await cron();
    expect((await paymentsOf(paid)).map((p) => p.payment_method_type)).toEqual(['OFFLINE']);
    await stack.api.call('PUT', '/v1/settings/billing', { dunning: { enabled: false } });
  });

  it('email settings (ADR 0067): off by default, plain addresses, enabled needs from; a failed PUT writes nothing', async () => {
    const before = (await stack.api.get('/v1/settings/billing')).body;
    expect(before.email).toEqual({ enabled: false, from: null, reply_to: null, bcc: null });
    expect(errorOf(await stack.api.call('PUT', '/v1/settings/billing', { email: { from: 'not an address' } }))).toEqual([400, 'validation_error', 'email.from']);
    expect(errorOf(await stack.api.call('PUT', '/v1/settings/billing', { email: { reply_to: 'a@b' } }))).toEqual([400, 'validation_error', 'email.reply_to']);
    expect(errorOf(await stack.api.call('PUT', '/v1/settings/billing', { email: { bcc: ['x@example.com'] } }))).toEqual([400, 'validation_error', 'email.bcc']);
    expect(errorOf(await stack.api.call('PUT', '/v1/settings/billing', { email: { enabled: true } }))).toEqual([400, 'validation_error', 'email.from']);
    expect(errorOf(await stack.api.call('PUT', '/v1/settings/billing', { email: { sender: 'x@example.com' } }))[0]).toBe(400);
    expect((await stack.api.get('/v1/settings/billing')).body).toEqual(before);
    const on = await stack.api.call('PUT', '/v1/settings/billing', { email: { enabled: true, from: 'billing@example.com', bcc: 'archive@example.com' } });
    expect(on.status).toBe(200);
    expect(on.body.email).toEqual({ enabled: true, from: 'billing@example.com', reply_to: null, bcc: 'archive@example.com' });
    // Merged: the stored from satisfies enabled; null clears bcc; dunning is untouched.
    const merged = await stack.api.call('PUT', '/v1/settings/billing', { email: { reply_to: 'help@example.com', bcc: null } });
    expect(merged.body).toMatchObject({ email: { enabled: true, from: 'billing@example.com', reply_to: 'help@example.com', bcc: null }, dunning: before.dunning });
    expect((await stack.api.call('PUT', '/v1/settings/billing', { email: { enabled: false } })).body.email.enabled).toBe(false);
  });

  it("dunning retries with the invoice's last PROVIDER payment's processor, and with the setting's only when the invoice had none", async () => {
    const put = await stack.api.call('PUT', '/v1/settings/billing', { dunning: { enabled: true, retry_schedule_days: [1, 3], max_attempts: 3, provider: null } });
    expect(put.status).toBe(200);
    expect(put.body.dunning).toEqual({ enabled: true, retry_schedule_days: [1, 3], max_attempts: 3, provider: null });

    // A: stripe failed, then checkout failed, then 5.00 OFFLINE: its last PROVIDER payment is checkout's; 44.00 remains.
    const a = await openInvoice();
    const viaStripe = await pay(a, { amount: 1000, payment_method_type: 'PROVIDER', provider: 'stripe', idempotency_key: `s-${a}` });
    expect((await stack.api.post(`/v1/payments/${viaStripe.body.id}/fail`, { failure_reason: 'card_declined' })).status).toBe(200);
    const viaCheckout = await pay(a, { amount: 1000, payment_method_type: 'PROVIDER', provider: 'checkout', idempotency_key: `c-${a}` });
    expect((await stack.api.post(`/v1/payments/${viaCheckout.body.id}/fail`, { failure_reason: 'expired_card', provider_reference: 'ck_1' })).status).toBe(200);
    expect((await pay(a, { amount: 500, payment_method_type: 'OFFLINE', reference: 'cash' })).status).toBe(201);
    // B: no payment at all; C: 9.00 paid through stripe, 40.00 remains.
    const b = await openInvoice();
    const c = await openInvoice();
    const viaStripeC = await pay(c, { amount: 900, payment_method_type: 'PROVIDER', provider: 'stripe', idempotency_key: `s-${c}` });
    expect((await stack.api.post(`/v1/payments/${viaStripeC.body.id}/succeed`, { provider_reference: 'pi_c' })).status).toBe(200);
    const dueDaysAgo = (days: number) => billingDb('invoices').whereIn('id', [a, b, c]).update({ due_date: new Date(Date.now() - days * DAY) });

    // Due 2 days ago: attempt 1 for A with checkout (44.00) and for C with stripe (40.00); none for B (no processor known).
    await dueDaysAgo(2);
    await cron();
    await cron();
    const dunned = async (id: string) => (await paymentsOf(id)).filter((p) => p.attempt !== null).map((p) => [p.attempt, p.payment_method_type, p.provider, p.amount, p.payment_status, p.idempotency_key]);
    expect(await dunned(a)).toEqual([[1, 'PROVIDER', 'checkout', 4400, 'pending', `dunning:${a}:1`]]);
    expect(await dunned(c)).toEqual([[1, 'PROVIDER', 'stripe', 4000, 'pending', `dunning:${c}:1`]]);
    expect(await paymentsOf(b)).toEqual([]);
    expect((await paymentsOf(a)).map((p) => [p.payment_method_type, p.provider, p.amount, p.payment_status])).toEqual([
      ['PROVIDER', 'stripe', 1000, 'failed'],
      ['PROVIDER', 'checkout', 1000, 'failed'],
      ['OFFLINE', null, 500, 'succeeded'],
      ['PROVIDER', 'checkout', 4400, 'pending'],
    ]);

    // The setting names adyen: B (no PROVIDER payment) gets it; A's attempt 2 stays with its last processor, checkout.
    expect((await stack.api.call('PUT', '/v1/settings/billing', { dunning: { provider: 'adyen' } })).status).toBe(200);
    const [attemptA] = (await paymentsOf(a)).filter((p) => p.attempt === 1);
    expect((await stack.api.post(`/v1/payments/${attemptA!.id}/fail`, { failure_reason: 'insufficient_funds' })).status).toBe(200);
    await dueDaysAgo(4);
    await cron();
    await cron();
    expect(await dunned(a)).toEqual([
      [1, 'PROVIDER', 'checkout', 4400, 'failed', `dunning:${a}:1`],
      [2, 'PROVIDER', 'checkout', 4400, 'pending', `dunning:${a}:2`],
    ]);
    expect(await dunned(b)).toEqual([[1, 'PROVIDER', 'adyen', 4900, 'pending', `dunning:${b}:1`]]);
    expect(await dunned(c)).toEqual([[1, 'PROVIDER', 'stripe', 4000, 'pending', `dunning:${c}:1`]]);
    await stack.api.call('PUT', '/v1/settings/billing', { dunning: { enabled: false } });
  });
});
