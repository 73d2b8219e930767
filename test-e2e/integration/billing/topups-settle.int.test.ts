import { createDb, type Db } from '@billstream/db';
import { waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

/**
 * Issue #47, item 2b (ADR 0056) as a client meets it, through the gateway on real Postgres and
 * Kafka: the credit of an invoiced top-up is billing's. The public settle route refuses it (409
 * `version_conflict`, `details.code` `settled_by_invoice`) and changes nothing; paying the invoice
 * completes it, voiding fails it; a wallet's refusal to settle is a failure for billing, never done.
 */
describe('invoiced top-ups: the public settle route refuses the credit billing owns (issue #47 2b)', () => {
  let stack: IntegrationStack;
  let billing: Db;
  let n = 0;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0' } } });
    billing = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
  });
  afterAll(async () => {
    await billing?.destroy();
    await stack?.stop();
  });

  /** A wallet of a new customer with one invoiced top-up of 30 credits (rate 1: 30 usd), and its finalized invoice. */
  async function invoicedTopup() {
    const customer = await stack.api.post('/v1/customers', { external_customer_id: `settle-owned-${++n}-${Date.now()}` });
    const w = await stack.api.post('/v1/wallets', { customer_id: customer.body.id, currency: 'usd' });
    expect(w.status).toBe(201);
    const txn = await stack.api.post(`/v1/wallets/${w.body.id}/topup`, { credits_to_add: '30', transaction_reason: 'PURCHASED_CREDIT_INVOICED' });
    expect([txn.status, txn.body.transaction_status]).toEqual([201, 'PENDING']);
    const invoice = await waitFor(
      async () => {
        const items = (await stack.api.get(`/v1/invoices?customer_id=${customer.body.id}`)).body.items as Array<{ id: string; status: string }>;
        return items.length === 1 && items[0]!.status === 'finalized' && items[0]!;
      },
      { what: 'the finalized invoice of the top-up' },
    );
    return { walletId: w.body.id as string, txnId: txn.body.id as string, invoice };
  }
  const transaction = async (walletId: string, id: string) =>
    ((await stack.api.get(`/v1/wallets/${walletId}/transactions?limit=1000`)).body.items as Array<{ id: string; transaction_status: string; credits_available: string }>).find((t) => t.id === id)!;
  const balance = async (walletId: string) => (await stack.api.get(`/v1/wallets/${walletId}/balance?include_real_time_balance=true`)).body;
  const settle = (walletId: string, txnId: string, status: string) => stack.api.post(`/v1/wallets/${walletId}/transactions/${txnId}/settle`, { status });
  const refusal = (res: { status: number; body: { error?: { internal_error: string; details?: Record<string, unknown> } } }) => [
    res.status,
    res.body.error?.internal_error,
    res.body.error?.details?.code,
    res.body.error?.details?.transaction_status,
  ];
  const invoiceOf = async (id: string) => (await stack.api.get(`/v1/invoices/${id}`)).body;

  it('as written: settled FAILED through the public route, then the invoice paid: the route refused, the paid invoice gives the 30 credits', async () => {
    const { walletId, txnId, invoice } = await invoicedTopup();
    expect(refusal(await settle(walletId, txnId, 'FAILED'))).toEqual([409, 'version_conflict', 'settled_by_invoice', 'PENDING']);
    expect((await transaction(walletId, txnId)).transaction_status).toBe('PENDING');
    expect(await balance(walletId)).toMatchObject({ credit_balance: '0', real_time_credit_balance: '30' });

    const paid = await stack.api.post('/v1/payments', { invoice_id: invoice.id, amount: 3000, payment_method_type: 'OFFLINE' });
    expect(paid.status).toBe(201);
    expect(await invoiceOf(invoice.id)).toMatchObject({ status: 'paid', amount_paid: 3000, amount_remaining: 0 });
    await waitFor(async () => (await transaction(walletId, txnId)).transaction_status === 'COMPLETED', { what: 'the credit to settle COMPLETED' });
    expect((await transaction(walletId, txnId)).credits_available).toBe('30');
    expect(await balance(walletId)).toMatchObject({ credit_balance: '30' });
    expect((await billing('invoices').where({ id: invoice.id }).first()).settle_state).toBe('done');
    // Settled now: the public route still refuses it (it never settles billing's credit), nothing moves.
    expect(refusal(await settle(walletId, txnId, 'FAILED'))).toEqual([409, 'version_conflict', 'settled_by_invoice', 'COMPLETED']);
    expect(await balance(walletId)).toMatchObject({ credit_balance: '30' });
  });

  it('as written: settled COMPLETED through the public route, then the invoice voided: the route refused, the void fails the credit, no credit kept', async () => {
    const { walletId, txnId, invoice } = await invoicedTopup();
    expect(refusal(await settle(walletId, txnId, 'COMPLETED'))).toEqual([409, 'version_conflict', 'settled_by_invoice', 'PENDING']);
    expect(await balance(walletId)).toMatchObject({ credit_balance: '0', real_time_credit_balance: '30' });

    const voided = await stack.api.post(`/v1/invoices/${invoice.id}/void`, {});
    expect([voided.status, voided.body.status]).toEqual([200, 'voided']);
    await waitFor(async () => (await transaction(walletId, txnId)).transaction_status === 'FAILED', { what: 'the credit to settle FAILED' });
    expect(await balance(walletId)).toMatchObject({ credit_balance: '0', real_time_credit_balance: '0' });
    const txs = (await stack.api.get(`/v1/wallets/${walletId}/transactions?limit=100`)).body.items as Array<{ transaction_status: string }>;
    expect(txs.map((t) => t.transaction_status)).toEqual(['FAILED']);
  });

  it("billing takes the wallet's refusal as a failure: a credit FAILED by a termination, then the invoice paid, stays marked to settle", async () => {
    const { walletId, txnId, invoice } = await invoicedTopup();
    expect((await stack.api.post(`/v1/wallets/${walletId}/terminate`, {})).status).toBe(200);
    expect((await transaction(walletId, txnId)).transaction_status).toBe('FAILED');
    const paid = await stack.api.post('/v1/payments', { invoice_id: invoice.id, amount: 3000, payment_method_type: 'OFFLINE' });
    expect(paid.status).toBe(201);
    expect((await invoiceOf(invoice.id)).status).toBe('paid');
    // The period job retries it: the wallet refuses again (409), billing never records it done.
    expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
    expect((await billing('invoices').where({ id: invoice.id }).first()).settle_state).toBe('pending');
    expect((await transaction(walletId, txnId)).transaction_status).toBe('FAILED');
  });
});
