import { createDb, type Db } from '@billstream/db';
import { waitFor } from '@billstream/testing';
import { startProcessStack, type ProcessStack } from './support/stack';

/**
 * A credit note's wallet credit exactly once across processes (ADR 0041) on six real processes,
 * every call through the gateway: billing SIGKILLed at `credit-notes.after-credit` (the wallet
 * committed the credit, billing has not recorded it; ADR 0017), and the wallet service down
 * when the note is issued. Either way the note is written with `refund_status: pending` and the
 * period job lands its credit once: one wallet transaction, keyed `credit_note:{id}`.
 */
const NO_JOB = { BILLING_INTERVAL_MS: '0' };
const POINT = 'credit-notes.after-credit';

interface Note {
  id: string;
  refund_status: string;
  wallet_transaction_id: string | null;
}

describe('credit note wallet credits exactly once across crashes and outages (e2e: real processes, Postgres and Kafka)', () => {
  let stack: ProcessStack;
  let walletDb: Db;
  let planId: string;
  let n = 0;

  beforeAll(async () => {
    stack = await startProcessStack({ env: { billing: { ...NO_JOB, BILLING_CLAIM_LEASE_MS: '2000' } } });
    walletDb = createDb({ databaseUrl: stack.database.url, schema: 'wallet', poolMax: 2 });
    const plan = await stack.api.post('/v1/plans', {
      name: 'Noted',
      prices: [{ type: 'FIXED', currency: 'usd', amount: '10', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }],
    });
    expect(plan.status).toBe(201);
    planId = plan.body.id;
  }, 180_000);
  afterAll(async () => {
    await walletDb?.destroy();
    await stack?.stop();
  }, 120_000);

  beforeEach(async () => {
    if (!stack.running('wallet')) await stack.restart('wallet');
    if (!stack.running('billing')) await stack.restart('billing', NO_JOB);
  }, 60_000);

  /** A customer with a finalized invoice of 10 usd paid OFFLINE: a note of it refunded WALLET credits the PRE_PAID wallet. */
  async function paidInvoice(): Promise<{ customerId: string; invoiceId: string }> {
    const customerId = (await stack.api.post('/v1/customers', { external_customer_id: `notes-e2e-${++n}-${Date.now()}` })).body.id as string;
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: planId });
    expect(sub.status).toBe(201);
    const invoiceId = (await stack.api.get(`/v1/invoices?subscription_id=${sub.body.id}`)).body.items[0].id as string;
    expect((await stack.api.post(`/v1/invoices/${invoiceId}/finalize`, {})).status).toBe(200);
    expect((await stack.api.post('/v1/payments', { invoice_id: invoiceId, amount: 1000, payment_method_type: 'OFFLINE' })).status).toBe(201);
    return { customerId, invoiceId };
  }
  const notesOf = async (invoiceId: string): Promise<Note[]> => (await stack.api.get(`/v1/credit_notes?invoice_id=${invoiceId}`)).body.items;
  /** Every credit note credit the wallet service holds for the customer, read from its schema. */
  const noteCredits = (customerId: string) =>
    walletDb('transactions as t')
      .join('wallets as w', 'w.id', 't.wallet_id')
      .where({ 'w.customer_id': customerId, 't.transaction_reason': 'CREDIT_NOTE' })
      .select<Array<{ id: string; credit_amount: string; idempotency_key: string }>>('t.id', 't.credit_amount', 't.idempotency_key');
  const cronUntilSucceeded = (invoiceId: string) =>
    waitFor(
      async () => {
        expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
        const notes = await notesOf(invoiceId);
        return notes.length === 1 && notes[0]!.refund_status === 'succeeded' && notes;
      },
      { timeoutMs: 20_000, intervalMs: 300, what: `the period job to credit the note of ${invoiceId}` },
    );

  it(`billing killed at ${POINT}: the retry lands on the same wallet credit, once`, async () => {
    const { customerId, invoiceId } = await paidInvoice();
    await stack.restart('billing', { ...NO_JOB, BILLSTREAM_FAILPOINTS: POINT });
    const res = await stack.api.post('/v1/credit_notes', { invoice_id: invoiceId, reason: 'DUPLICATE', amount: 400, refund: 'WALLET', idempotency_key: `kill-${invoiceId}` });
    expect(res.status).toBeGreaterThanOrEqual(500);
    await waitFor(() => !stack.running('billing'), { timeoutMs: 10_000, what: `billing to kill itself at ${POINT}` });
    expect(stack.logs('billing')).toContain(`failpoint ${POINT}: SIGKILL`);

    // The wallet committed its credit; billing committed the note, pending.
    const [credited] = await noteCredits(customerId);
    expect(credited).toMatchObject({ credit_amount: '4' });
    await stack.restart('billing', NO_JOB);
    const [pending] = await notesOf(invoiceId);
    expect(pending).toMatchObject({ refund_status: 'pending', wallet_transaction_id: null });
    expect(credited!.idempotency_key).toBe(`credit_note:${pending!.id}`);

    const [done] = await cronUntilSucceeded(invoiceId);
    expect(done).toMatchObject({ id: pending!.id, wallet_transaction_id: credited!.id });
    // The client's retry with the same key answers the same note and credits nothing more.
    const again = await stack.api.post('/v1/credit_notes', { invoice_id: invoiceId, reason: 'DUPLICATE', amount: 400, refund: 'WALLET', idempotency_key: `kill-${invoiceId}` });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ id: pending!.id, refund_status: 'succeeded' });
    await stack.api.post('/v1/cron/bill-subscriptions', {});
    expect(await noteCredits(customerId)).toEqual([credited]);
    const wallets = (await stack.api.get(`/v1/customers/${customerId}/wallets`)).body.items;
    expect(wallets.map((w: { credit_balance: string }) => w.credit_balance)).toEqual(['4']);
  }, 120_000);

  it('the wallet service down at issue: the note is issued pending, the job credits it once the wallet is back', async () => {
    const { customerId, invoiceId } = await paidInvoice();
    await stack.kill('wallet');
    const res = await stack.api.post('/v1/credit_notes', { invoice_id: invoiceId, reason: 'DUPLICATE', amount: 250, refund: 'WALLET' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ refund_amount: 250, refund_status: 'pending', wallet_transaction_id: null });
    expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
    expect((await notesOf(invoiceId)).map((x) => x.refund_status)).toEqual(['pending']);

    await stack.restart('wallet');
    const [done] = await cronUntilSucceeded(invoiceId);
    const credits = await noteCredits(customerId);
    expect(credits).toHaveLength(1);
    expect(credits[0]).toMatchObject({ credit_amount: '2.5', idempotency_key: `credit_note:${res.body.id}` });
    expect(done!.wallet_transaction_id).toBe(credits[0]!.id);
  }, 120_000);
});
