import { createDb, type Db } from '@billstream/db';
import { waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

/**
 * Invoiced top-ups on the whole stack (docs/api/billing.md#invoiced-top-ups): the wallet publishes a
 * PENDING PURCHASED_CREDIT_INVOICED credit on wallet-events (Kafka), billing invoices it, and
 * paying or voiding that invoice settles the credit. The period job is off: nothing but the
 * consumer and the calls of the test act.
 */
describe('invoiced top-ups through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let billing: Db;
  let wallets: Db;
  let n = 0;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0' } } });
    billing = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    wallets = createDb({ databaseUrl: stack.database.url, schema: 'wallet', poolMax: 2 });
  });
  afterAll(async () => {
    await billing?.destroy();
    await wallets?.destroy();
    await stack?.stop();
  });

  /** A wallet of a new customer (one customer per scenario: its invoices are the scenario's). */
  async function newWallet(body: Record<string, unknown> = {}) {
    const customer = await stack.api.post('/v1/customers', { external_customer_id: `topups-${++n}` });
    const res = await stack.api.post('/v1/wallets', { customer_id: customer.body.id, currency: 'usd', ...body });
    expect(res.status).toBe(201);
    return res.body as { id: string; customer_id: string };
  }

  async function invoicedTopup(walletId: string, credits: string) {
    const res = await stack.api.post(`/v1/wallets/${walletId}/topup`, { credits_to_add: credits, transaction_reason: 'PURCHASED_CREDIT_INVOICED' });
    expect([res.status, res.body.transaction_status]).toEqual([201, 'PENDING']);
    return res.body as { id: string };
  }

  const invoicesOf = async (customerId: string) => (await stack.api.get(`/v1/invoices?customer_id=${customerId}`)).body.items;

  /**
   * Waits for the customer's `count` invoices (the consumer's work), finalized, and answers them,
   * newest first. Each is a draft for the moment between its insert and its finalization.
   */
  const awaitInvoices = (customerId: string, count = 1) =>
    waitFor(
      async () => {
        const items = await invoicesOf(customerId);
        return items.length >= count && items.every((i: { status: string }) => i.status !== 'draft') && items;
      },
      { what: `${count} finalized invoice(s) of ${customerId}` },
    );

  const transaction = async (walletId: string, id: string) => {
    const list = await stack.api.get(`/v1/wallets/${walletId}/transactions?limit=1000`);
    return list.body.items.find((t: { id: string }) => t.id === id);
  };
  const balance = async (walletId: string) => (await stack.api.get(`/v1/wallets/${walletId}/balance?include_real_time_balance=true`)).body;
  const pay = (invoiceId: string, amount: number, extra: Record<string, unknown> = {}) =>
    stack.api.post('/v1/payments', { invoice_id: invoiceId, amount, payment_method_type: 'OFFLINE', ...extra });

  it('makes one finalized CREDIT_PURCHASE invoice; paid in two OFFLINE parts, the credit is COMPLETED only after the second', async () => {
    const w = await newWallet();
    const txn = await invoicedTopup(w.id, '50');
    const [invoice] = await awaitInvoices(w.customer_id);
    expect(invoice).toMatchObject({
      billing_reason: 'CREDIT_PURCHASE',
      subscription_id: null,
      customer_id: w.customer_id,
      status: 'finalized',
      payment_status: 'pending',
      currency: 'usd',
      invoice_number: expect.stringMatching(/^INV-\d{6}-\d{5}$/),
      subtotal: 5000,
      total_prepaid_credits_applied: 0,
      total: 5000,
      amount_due: 5000,
      amount_remaining: 5000,
      due_date: invoice.finalized_at,
    });
    expect(invoice.line_items).toEqual([
      expect.objectContaining({ price_id: null, price_type: 'FIXED', description: 'Purchase of 50 credits', quantity: '50', unit_amount: '1', amount: 5000, prepaid_credits_applied: 0 }),
    ]);
    expect(await billing('invoices').where({ source_key: `topup:${txn.id}` })).toHaveLength(1);

    const first = await pay(invoice.id, 2000, { reference: 'wire-1' });
    expect([first.status, first.body.payment_status]).toEqual([201, 'succeeded']);
    expect((await stack.api.get(`/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'finalized', payment_status: 'partially_paid', amount_remaining: 3000 });
    expect((await transaction(w.id, txn.id)).transaction_status).toBe('PENDING');
    expect(await balance(w.id)).toMatchObject({ credit_balance: '0', real_time_credit_balance: '50' });

    const second = await pay(invoice.id, 3000, { reference: 'wire-2' });
    expect(second.status).toBe(201);
    expect((await stack.api.get(`/v1/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', payment_status: 'succeeded', amount_paid: 5000, amount_remaining: 0 });
    await waitFor(async () => (await transaction(w.id, txn.id)).transaction_status === 'COMPLETED', { what: 'the credit to settle COMPLETED' });
    expect(await balance(w.id)).toMatchObject({ credit_balance: '50', real_time_credit_balance: '50' });
    expect(await invoicesOf(w.customer_id)).toHaveLength(1);
  });

  it('prices the credits at topup_conversion_rate, rounded once half up in the wallet currency (0.333 usd, jpy)', async () => {
    const usd = await newWallet({ topup_conversion_rate: '0.333' });
    await invoicedTopup(usd.id, '15');
    const [inUsd] = await awaitInvoices(usd.customer_id);
    // 15 x 0.333 = 4.995 usd -> 500 cents.
    expect([inUsd.currency, inUsd.subtotal, inUsd.amount_due, inUsd.line_items[0].unit_amount, inUsd.line_items[0].quantity]).toEqual(['usd', 500, 500, '0.333', '15']);

    const jpy = await newWallet({ currency: 'JPY', topup_conversion_rate: '0.333' });
    await invoicedTopup(jpy.id, '50');
    const [inJpy] = await awaitInvoices(jpy.customer_id);
    // 50 x 0.333 = 16.65 yen -> 17 (jpy has no minor unit).
    expect([inJpy.currency, inJpy.subtotal, inJpy.amount_due, inJpy.status]).toEqual(['jpy', 17, 17, 'finalized']);
    const paid = await pay(inJpy.id, 17);
    expect(paid.status).toBe(201);
    expect((await balance(jpy.id)).credit_balance).toBe('50');
  });

  it('voided: the credit settles FAILED and the balance never grows; a CREDITS payment of it is refused (400)', async () => {
    const w = await newWallet({ initial_credits_to_load: '10' });
    const txn = await invoicedTopup(w.id, '40');
    const [invoice] = await awaitInvoices(w.customer_id);

    const byCredits = await stack.api.post('/v1/payments', { invoice_id: invoice.id, amount: 100, payment_method_type: 'CREDITS', wallet_id: w.id });
    expect([byCredits.status, byCredits.body.error?.internal_error, byCredits.body.error?.details?.field]).toEqual([400, 'validation_error', 'payment_method_type']);
    expect((await stack.api.get(`/v1/payments?invoice_id=${invoice.id}`)).body.items).toEqual([]);
    expect(await balance(w.id)).toMatchObject({ credit_balance: '10', real_time_credit_balance: '50' });

    const voided = await stack.api.post(`/v1/invoices/${invoice.id}/void`);
    expect([voided.status, voided.body.status]).toEqual([200, 'voided']);
    await waitFor(async () => (await transaction(w.id, txn.id)).transaction_status === 'FAILED', { what: 'the credit to settle FAILED' });
    expect(await balance(w.id)).toMatchObject({ credit_balance: '10', real_time_credit_balance: '10' });
    expect((await pay(invoice.id, 100)).status).toBe(400);
    expect((await stack.api.get(`/v1/wallets/${w.id}/transactions?transaction_reason=CREDIT_NOTE`)).body.items).toEqual([]);
  });

  it('an auto top-up with invoicing: true makes one invoice for its credits', async () => {
    const w = await newWallet({
      initial_credits_to_load: '10',
      topup_conversion_rate: '2',
      auto_topup: { enabled: true, threshold: '5', amount: '20', invoicing: true },
    });
    const debit = await stack.api.post(`/v1/wallets/${w.id}/debit`, { credits: '6' });
    expect(debit.status).toBe(201);
    const pending = (await stack.api.get(`/v1/wallets/${w.id}/transactions?transaction_reason=PURCHASED_CREDIT_INVOICED`)).body.items;
    expect(pending).toEqual([expect.objectContaining({ transaction_status: 'PENDING', credit_amount: '20' })]);
    const [invoice] = await awaitInvoices(w.customer_id);
    expect(invoice).toMatchObject({ billing_reason: 'CREDIT_PURCHASE', status: 'finalized', subtotal: 4000 });
    expect(invoice.line_items[0]).toMatchObject({ quantity: '20', unit_amount: '2', description: 'Purchase of 20 credits' });
    expect((await pay(invoice.id, 4000)).status).toBe(201);
    await waitFor(async () => (await transaction(w.id, pending[0].id)).transaction_status === 'COMPLETED', { what: 'the auto top-up to settle' });
    expect((await balance(w.id)).credit_balance).toBe('24');
  });

  it('the same wallet event delivered twice makes one invoice', async () => {
    const w = await newWallet();
    const txn = await invoicedTopup(w.id, '7');
    await awaitInvoices(w.customer_id);
    // The wallet's relay publishes the event again, as after a crash between publish and mark.
    const row = await waitFor(async () => {
      const rows = await wallets('outbox').whereNotNull('published_at').where({ topic: 'wallet-events' }).whereRaw(`value::jsonb -> 'payload' -> 'transaction' ->> 'id' = ?`, [txn.id]);
      return rows[0];
    });
    await wallets('outbox').insert({ id: `${row.id}-again`, topic: row.topic, message_key: row.message_key, value: row.value, headers: row.headers });
    // A later top-up of the same wallet comes after the copy on its partition: once it is invoiced, the copy was handled.
    const later = await invoicedTopup(w.id, '8');
    await awaitInvoices(w.customer_id, 2);
    await waitFor(async () => (await wallets('outbox').where({ id: `${row.id}-again` }).whereNotNull('published_at')).length === 1, { what: 'the copy to be relayed' });
    expect(await invoicesOf(w.customer_id)).toHaveLength(2);
    expect(await billing('invoices').where({ source_key: `topup:${txn.id}` })).toHaveLength(1);
    expect(await billing('invoices').where({ source_key: `topup:${later.id}` })).toHaveLength(1);
  });

  it('an event whose credit is no longer PENDING when billing reads it (settled since) makes no invoice', async () => {
    const w = await newWallet();
    // A credit that was settled since its event: the wallet's COMPLETED direct top-up, its event
    // published again as it was when it was pending and invoiced (an old event of the topic's history).
    const settled = await stack.api.post(`/v1/wallets/${w.id}/topup`, { credits_to_add: '5' });
    expect(settled.body.transaction_status).toBe('COMPLETED');
    const row = await waitFor(async () => {
      const rows = await wallets('outbox').whereNotNull('published_at').whereRaw(`value::jsonb -> 'payload' -> 'transaction' ->> 'id' = ?`, [settled.body.id]);
      return rows[0];
    });
    const event = JSON.parse(row.value);
    event.id = `${event.id}-old`;
    Object.assign(event.payload.transaction, { transaction_status: 'PENDING', transaction_reason: 'PURCHASED_CREDIT_INVOICED' });
    await wallets('outbox').insert({ id: event.id, topic: row.topic, message_key: row.message_key, value: JSON.stringify(event), headers: { ...row.headers, 'message-id': event.id } });
    const later = await invoicedTopup(w.id, '8');
    const [only] = await awaitInvoices(w.customer_id);
    expect(only.subtotal).toBe(800);
    expect((await wallets('outbox').where({ id: event.id }).whereNotNull('published_at')).length).toBe(1);
    expect(await billing('invoices').where({ source_key: `topup:${settled.body.id}` })).toHaveLength(0);
    expect(await invoicesOf(w.customer_id)).toHaveLength(1);
    expect(await billing('invoices').where({ source_key: `topup:${later.id}` })).toHaveLength(1);
  });
});
