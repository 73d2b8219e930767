import { createDb, type Db } from '@billstream/db';
import { waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { creditNoteHelpers, NUMBER, type Note } from './credit-notes-support';

/**
 * The invoice void's credit note (docs/api/credit-notes.md, ADR 0041) through the gateway, on the
 * whole stack with real Postgres and Kafka: one INVOICE_VOID note for what is still creditable,
 * its wallet part the void's existing refund (never two refunds).
 */
describe('credit notes of an invoice void through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let billingDb: Db;
  let walletDb: Db;
  let h: ReturnType<typeof creditNoteHelpers>;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0' } } });
    billingDb = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    walletDb = createDb({ databaseUrl: stack.database.url, schema: 'wallet', poolMax: 2 });
    h = creditNoteHelpers(stack, billingDb, walletDb);
  });
  afterAll(async () => {
    await billingDb?.destroy();
    await walletDb?.destroy();
    await stack?.stop();
  });
  const customer = () => h.customer();
  const prepaid = (c: string, credits: string) => h.prepaid(c, credits);
  const getInvoice = (id: string) => h.getInvoice(id);
  const invoice = (amounts: string[], opts: { customerId?: string; finalize?: boolean } = {}) => h.invoice(amounts, opts);
  const note = (body: Record<string, unknown>) => h.note(body);
  const notesOf = (id: string): Promise<Note[]> => h.notesOf(id);
  const balance = (w: string) => h.balance(w);
  const creditNoteTxns = (w: string) => h.creditNoteTxns(w);

  describe('an invoice void', () => {
    const eventsOf = (id: string) => h.eventsOf(id);

    it('issues one INVOICE_VOID note for the rest after earlier notes: what was due to 0, money paid OFFLINE (still recorded)', async () => {
      const inv = await invoice(['49']);
      const first = await note({ invoice_id: inv.id, amount: 900 });
      expect(first.status).toBe(201);
      expect((await stack.api.post('/v1/payments', { invoice_id: inv.id, amount: 1000, payment_method_type: 'OFFLINE' })).status).toBe(201);
      const v = await stack.api.post(`/v1/invoices/${inv.id}/void`, {});
      expect(v.status).toBe(200);
      expect(v.body).toMatchObject({ status: 'voided', amount_due: 1000, amount_paid: 1000, amount_remaining: 0, pre_payment_credit_notes_amount: 3900, post_payment_credit_notes_amount: 1000 });
      const notes = await notesOf(inv.id);
      expect(notes).toHaveLength(2);
      expect(notes[1]).toMatchObject({
        origin: 'INVOICE_VOID',
        reason: 'OTHER',
        refund: 'OFFLINE',
        amount: 4000,
        pre_payment_amount: 3000,
        wallet_amount: 0,
        refund_amount: 1000,
        refund_status: 'none',
        credit_note_number: expect.stringMatching(NUMBER),
      });
      expect((await getInvoice(inv.id)).line_items[0]!.credited_amount).toBe(4900);
      const types = (await eventsOf(inv.id)).map((e) => e.type);
      expect(types.slice(-2)).toEqual(['credit_note.created', 'invoice.update.voided']);
      // The invoice's note cannot be voided; nothing more can be credited.
      expect((await stack.api.post(`/v1/credit_notes/${notes[1]!.id}/void`, {})).status).toBe(400);
      expect((await note({ invoice_id: inv.id, amount: 1 })).body.error.details).toMatchObject({ field: 'invoice_id', status: 'voided' });
    });

    it('links the wallet part to the existing void refund: the wallet is credited once, not twice', async () => {
      const cust = await customer();
      const walletId = await prepaid(cust, '20');
      const inv = await invoice(['49'], { customerId: cust });
      expect(inv).toMatchObject({ status: 'finalized', total_prepaid_credits_applied: 2000, amount_due: 2900 });
      expect(await balance(walletId)).toBe('0');
      const v = await stack.api.post(`/v1/invoices/${inv.id}/void`, {});
      expect(v.status).toBe(200);
      await waitFor(async () => (await notesOf(inv.id))[0]?.refund_status === 'succeeded', { timeoutMs: 10_000, what: 'the void refund' });
      const [voidNote] = await notesOf(inv.id);
      expect(voidNote).toMatchObject({ origin: 'INVOICE_VOID', amount: 4900, pre_payment_amount: 2900, wallet_amount: 2000, refund_amount: 0, wallet_transaction_id: null });
      expect(await balance(walletId)).toBe('20');
      // One credit: the wallet's refund of its debit (ADR 0016), no second one keyed by the note.
      const credits = await creditNoteTxns(walletId);
      expect(credits.map((t: { idempotency_key: string; credit_amount: string }) => [t.idempotency_key.split(':')[0], t.credit_amount])).toEqual([['refund', '20']]);
      // The period job retries nothing more for it.
      expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
      expect(await balance(walletId)).toBe('20');
      const types = (await eventsOf(inv.id)).map((e) => e.type);
      expect(types.filter((t) => t.startsWith('credit_note.'))).toEqual(['credit_note.created', 'credit_note.updated']);
    });

    it('a draft gets no note; a pending payment blocks the void; wallet money a note gave back blocks it (never two refunds)', async () => {
      const draft = await invoice(['49'], { finalize: false });
      expect((await stack.api.post(`/v1/invoices/${draft.id}/void`, {})).status).toBe(200);
      expect(await notesOf(draft.id)).toEqual([]);
      // A purchase of credits takes no note (its void fails the pending credit instead).
      const buyer = await customer();
      const topupWallet = await prepaid(buyer, '0');
      expect((await stack.api.post(`/v1/wallets/${topupWallet}/topup`, { credits_to_add: '5', transaction_reason: 'PURCHASED_CREDIT_INVOICED' })).status).toBe(201);
      const purchase = await waitFor(
        async () => ((await stack.api.get(`/v1/invoices?customer_id=${buyer}`)).body.items as Array<{ id: string; billing_reason: string }>).find((i) => i.billing_reason === 'CREDIT_PURCHASE'),
        { timeoutMs: 20_000, what: 'the CREDIT_PURCHASE invoice' },
      );
      expect((await stack.api.post(`/v1/invoices/${purchase.id}/void`, {})).status).toBe(200);
      expect(await notesOf(purchase.id)).toEqual([]);

      const inv = await invoice(['49']);
      await billingDb('payments').insert({
        id: `pay_pending_${inv.id}`,
        tenant_id: 'tenant-a',
        environment_id: (await billingDb('invoices').where({ id: inv.id }).first()).environment_id,
        invoice_id: inv.id,
        amount: 100,
        currency: 'usd',
        payment_method_type: 'CREDITS',
        wallet_id: 'wallet_x',
        payment_status: 'pending',
        created_at: new Date(),
        updated_at: new Date(),
      });
      const blocked = await stack.api.post(`/v1/invoices/${inv.id}/void`, {});
      expect(blocked.status).toBe(400);
      expect(blocked.body.error.details).toMatchObject({ field: 'status', pending_payment_amount: 100 });
      expect(await getInvoice(inv.id)).toMatchObject({ status: 'finalized', amount_due: 4900 });
      expect(await notesOf(inv.id)).toEqual([]);
      await billingDb('payments').where({ id: `pay_pending_${inv.id}` }).delete();

      const cust = await customer();
      const walletId = await prepaid(cust, '20');
      const paid = await invoice(['49'], { customerId: cust });
      // What was due, then wallet money; the first note's void makes the invoice finalized again.
      const due = await note({ invoice_id: paid.id, amount: 2900 });
      expect((await note({ invoice_id: paid.id, amount: 1100 })).body).toMatchObject({ pre_payment_amount: 0, wallet_amount: 1100 });
      expect((await stack.api.post(`/v1/credit_notes/${due.body.id}/void`, {})).status).toBe(200);
      expect(await getInvoice(paid.id)).toMatchObject({ status: 'finalized', amount_remaining: 2900 });
      expect(await balance(walletId)).toBe('11');
      const twice = await stack.api.post(`/v1/invoices/${paid.id}/void`, {});
      expect(twice.status).toBe(400);
      expect(twice.body.error.details).toMatchObject({ field: 'status', credit_notes_wallet_amount: 1100 });
      expect(await balance(walletId)).toBe('11');
    });
  });

});
