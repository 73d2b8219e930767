import { waitFor } from '@billstream/testing';
import { isoZ, monthStart } from '../../support/clock';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { usagePrice } from './prices';

/**
 * A SUM that fell after a threshold invoice billed it (docs/api/thresholds.md: "A fallen SUM caps
 * its deduction; the rest returns by credit note"; ADR 0046) as a client meets it: through the
 * gateway on the whole stack with real Postgres and Kafka. The plan bills 1.00 per GB stored
 * (SUM of `gb`, FLAT_FEE: it may be billed at a threshold); the threshold is 5.00.
 */
interface Line {
  id: string;
  price_id: string | null;
  line_type: string;
  amount: number;
  net_amount: number;
  credited_amount: number;
  description: string;
}
interface Invoice {
  id: string;
  billing_reason: string;
  status: string;
  subtotal: number;
  amount_due: number;
  amount_remaining: number;
  total_prepaid_credits_applied: number;
  line_items: Line[];
}
interface Note {
  id: string;
  invoice_id: string;
  amount: number;
  reason: string;
  pre_payment_amount: number;
  wallet_amount: number;
  refund_amount: number;
  refund_status: string;
  metadata: Record<string, string>;
  lines: Array<{ invoice_line_item_id: string; amount: number }>;
}

describe('threshold returns of a fallen SUM through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let meterId: string;
  let planId: string;
  let priceId: string;
  let n = 0;

  beforeAll(async () => {
    stack = await startIntegrationStack({
      extra: { env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0', UNBILLED_SWEEP_MS: '0', UNBILLED_DEBOUNCE_MS: '100' } },
    });
    meterId = (await stack.api.post('/v1/meters', { name: 'stored gb', event_name: 'tr_storage', aggregation: { type: 'SUM', field: 'gb' } })).body.id;
    const plan = await stack.api.post('/v1/plans', { name: 'Storage', prices: [usagePrice(meterId, { amount: '1' })] });
    expect(plan.status).toBe(201);
    planId = plan.body.id;
    priceId = plan.body.prices[0].id;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  async function subscriber(wallet?: string) {
    const externalId = `tr-${++n}-${Date.now()}`;
    const customerId = (await stack.api.post('/v1/customers', { external_customer_id: externalId })).body.id as string;
    let walletId: string | undefined;
    if (wallet) {
      const w = await stack.api.post('/v1/wallets', { customer_id: customerId, currency: 'usd', initial_credits_to_load: wallet, config: { allowed_price_types: ['ALL'] } });
      expect(w.status).toBe(201);
      walletId = w.body.id;
    }
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: planId, usage_thresholds: [{ amount: 500 }] });
    expect(sub.status).toBe(201);
    return { id: sub.body.id as string, customerId, externalId, walletId, sum: 0 };
  }
  async function store(c: { externalId: string; sum: number }, gb: number): Promise<void> {
    const event = { event_name: 'tr_storage', external_customer_id: c.externalId, timestamp: new Date().toISOString(), event_id: `${c.externalId}-${++n}`, properties: { gb } };
    c.sum += gb;
    expect((await stack.api.post('/v1/events/bulk', { events: [event] })).status).toBe(202);
    await waitFor(
      async () =>
        Number((await stack.api.post(`/v1/meters/${meterId}/usage`, { external_customer_id: c.externalId, start_time: isoZ(monthStart(-1)), end_time: isoZ(monthStart(2)) })).body.value) === c.sum,
      { timeoutMs: 20_000, what: `SUM ${c.sum} stored` },
    );
  }
  const cron = async () => expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
  const invoices = async (subscriptionId: string): Promise<Invoice[]> => (await stack.api.get(`/v1/invoices?subscription_id=${subscriptionId}&limit=100`)).body.items;
  const notesOf = async (invoiceId: string): Promise<Note[]> => (await stack.api.get(`/v1/credit_notes?invoice_id=${invoiceId}&limit=100`)).body.items;
  const balance = async (walletId: string) => (await stack.api.get(`/v1/wallets/${walletId}/balance`)).body.balance as string;

  it('caps the closing deduction at the usage now and returns the rest once by a credit note on the unpaid threshold invoice', async () => {
    const c = await subscriber();
    await store(c, 8);
    await cron();
    await cron();
    const [threshold] = (await invoices(c.id)).filter((i) => i.billing_reason === 'SUBSCRIPTION_THRESHOLD');
    expect(threshold).toMatchObject({ status: 'finalized', subtotal: 800, amount_due: 800 });

    // 8 GB fell to 3: the period now bills 3.00 of the 8.00 the threshold invoice billed.
    await store(c, -5);
    expect((await stack.api.post(`/v1/subscriptions/${c.id}/cancel`, { cancel_at: 'immediately' })).status).toBe(200);
    await cron();
    await cron();
    const closing = (await invoices(c.id)).find((i) => i.billing_reason === 'SUBSCRIPTION_CANCEL')!;
    expect(closing.line_items.map((l) => [l.line_type, l.price_id, l.amount])).toEqual([
      ['CHARGE', priceId, 300],
      ['THRESHOLD_DEDUCTION', priceId, -300],
    ]);
    expect(closing).toMatchObject({ status: 'paid', subtotal: 0, amount_due: 0 });
    expect(closing.line_items[1]!.description).toMatch(/capped at the usage now: 800 billed/);

    // The 5.00 billed beyond the usage: one note on the threshold invoice, off what is still due.
    const notes = await notesOf(threshold!.id);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ amount: 500, reason: 'OTHER', pre_payment_amount: 500, wallet_amount: 0, refund_amount: 0, metadata: { closing_invoice_id: closing.id, price_id: priceId } });
    expect(notes[0]!.lines).toEqual([{ id: expect.stringMatching(/^cnli_/), invoice_line_item_id: threshold!.line_items[0]!.id, amount: 500, tax_amount: 0, taxes: [] }]);
    const after = (await stack.api.get(`/v1/invoices/${threshold!.id}`)).body as Invoice;
    expect(after).toMatchObject({ amount_due: 300, amount_remaining: 300 });
    expect(after.line_items[0]).toMatchObject({ net_amount: 800, credited_amount: 500 });
    // The period bills 3.00 in all; more runs write nothing more.
    await cron();
    await cron();
    expect(await notesOf(threshold!.id)).toHaveLength(1);
    const all = await invoices(c.id);
    const due = all.reduce((sum, i) => sum + i.amount_due, 0);
    expect(due).toBe(300);
  });

  it('gives money paid from the wallet back to the wallet', async () => {
    const c = await subscriber('100');
    await store(c, 7);
    await cron();
    await cron();
    const [threshold] = (await invoices(c.id)).filter((i) => i.billing_reason === 'SUBSCRIPTION_THRESHOLD');
    expect(threshold).toMatchObject({ status: 'paid', total_prepaid_credits_applied: 700, amount_due: 0 });
    expect(await balance(c.walletId!)).toBe('93');

    // 7 GB fell to 0 at the period's close: everything returns.
    await store(c, -7);
    expect((await stack.api.post(`/v1/subscriptions/${c.id}/cancel`, { cancel_at: 'immediately' })).status).toBe(200);
    await cron();
    const [note, ...more] = await notesOf(threshold!.id);
    expect(more).toEqual([]);
    expect(note).toMatchObject({ amount: 700, pre_payment_amount: 0, wallet_amount: 700, refund_status: 'succeeded' });
    await waitFor(async () => (await balance(c.walletId!)) === '100', { timeoutMs: 10_000, what: 'the wallet credited back' });
  });
});
