import type { Db } from '@billstream/db';
import type { IntegrationStack } from '../../support/stack';
import { fixedPrice } from './prices';

/** What the two credit note suites share: the shapes they read and the calls they make (credit-notes*.int.test.ts). */
export interface Line {
  id: string;
  amount: number;
  net_amount: number;
  credited_amount: number;
}
export interface Invoice {
  id: string;
  status: string;
  customer_id: string;
  amount_due: number;
  amount_paid: number;
  amount_remaining: number;
  total: number;
  total_prepaid_credits_applied: number;
  pre_payment_credit_notes_amount: number;
  post_payment_credit_notes_amount: number;
  line_items: Line[];
}
export interface Note {
  id: string;
  credit_note_number: string;
  invoice_id: string;
  customer_id: string;
  amount: number;
  status: string;
  origin: string;
  refund: string;
  pre_payment_amount: number;
  wallet_amount: number;
  refund_amount: number;
  refund_status: string;
  wallet_transaction_id: string | null;
  lines: Array<{ id: string; invoice_line_item_id: string; amount: number }>;
}

const price = (amount: string) => ({ ...fixedPrice, amount });
export const NUMBER = /^CN-\d{6}-\d{5}$/;

/** Helpers on a running stack; `n` numbers the customers of one suite. */
export function creditNoteHelpers(stack: IntegrationStack, billingDb: Db, walletDb: Db) {
  let n = 0;
  async function customer(): Promise<string> {
    const res = await stack.api.post('/v1/customers', { external_customer_id: `notes-${++n}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}` });
    expect(res.status).toBe(201);
    return res.body.id;
  }
  async function prepaid(customerId: string, credits: string): Promise<string> {
    const res = await stack.api.post('/v1/wallets', { customer_id: customerId, currency: 'usd', initial_credits_to_load: credits, config: { allowed_price_types: ['ALL'] } });
    expect(res.status).toBe(201);
    return res.body.id;
  }
  const getInvoice = async (id: string): Promise<Invoice> => (await stack.api.get(`/v1/invoices/${id}`)).body;
  /** A draft of the given FIXED amounts (one line each), optionally finalized (wallets of the customer pay what they can). */
  async function invoice(amounts: string[], opts: { customerId?: string; finalize?: boolean } = {}): Promise<Invoice> {
    const cust = opts.customerId ?? (await customer());
    const planRes = await stack.api.post('/v1/plans', { name: 'Notes', prices: amounts.map(price) });
    expect(planRes.status).toBe(201);
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: cust, plan_id: planRes.body.id, start_date: new Date().toISOString() });
    expect(sub.status).toBe(201);
    const list = await stack.api.get(`/v1/invoices?subscription_id=${sub.body.id}`);
    const draft = list.body.items[0] as Invoice;
    if (opts.finalize === false) return draft;
    const fin = await stack.api.post(`/v1/invoices/${draft.id}/finalize`, {});
    expect(fin.status).toBe(200);
    return fin.body;
  }
  const note = (body: Record<string, unknown>) => stack.api.post('/v1/credit_notes', { reason: 'PRODUCT_UNSATISFACTORY', ...body });
  const notesOf = async (invoiceId: string): Promise<Note[]> => (await stack.api.get(`/v1/credit_notes?invoice_id=${invoiceId}&limit=100`)).body.items;
  const balance = async (walletId: string) => (await stack.api.get(`/v1/wallets/${walletId}/balance`)).body.credit_balance as string;
  const creditNoteTxns = async (walletId: string) => walletDb('transactions').where({ wallet_id: walletId, transaction_reason: 'CREDIT_NOTE' });
  const prepaidWallets = async (customerId: string) =>
    ((await stack.api.get(`/v1/customers/${customerId}/wallets`)).body.items as Array<{ id: string; wallet_type: string; config: { allowed_price_types: string[] } }>).filter((w) => w.wallet_type === 'PRE_PAID');
  /** The invoice's money and the notes written: what a failed call must leave as it was. */
  const snapshot = async (invoiceId: string) => ({ invoice: await getInvoice(invoiceId), notes: await notesOf(invoiceId) });
  const eventsOf = async (invoiceId: string) =>
    (await billingDb('outbox').where({ message_key: invoiceId }).orderBy('id')).map((e: { value: string }) => JSON.parse(e.value) as { type: string; payload: Record<string, any> });
  return { customer, prepaid, getInvoice, invoice, note, notesOf, balance, creditNoteTxns, prepaidWallets, snapshot, eventsOf };
}
