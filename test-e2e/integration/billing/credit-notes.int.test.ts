import { createDb, type Db } from '@billstream/db';
import { waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { creditNoteHelpers, NUMBER, type Note } from './credit-notes-support';

/**
 * Credit notes (docs/api/credit-notes.md, ADR 0041) as a client meets them: through the gateway,
 * on the whole stack with real Postgres and Kafka. Invoices are the SUBSCRIPTION_CREATE drafts
 * of ADVANCE FIXED prices, finalized with POST /v1/invoices/{id}/finalize.
 */
describe('credit notes through the gateway (real Postgres and Kafka)', () => {
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
  const prepaidWallets = (c: string) => h.prepaidWallets(c);
  const snapshot = (id: string) => h.snapshot(id);

  it('by lines on an unpaid invoice: lowers amount_due and the line, numbered CN-, with credit_note.created and invoice.update; get and list', async () => {
    const inv = await invoice(['49', '10']);
    expect(inv).toMatchObject({ status: 'finalized', amount_due: 5900 });
    const [first, second] = inv.line_items;
    const res = await note({ invoice_id: inv.id, lines: [{ invoice_line_item_id: second!.id, amount: 900 }], memo: 'late delivery', metadata: { ticket: '42' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^cn_[0-9A-HJKMNP-TV-Z]{26}$/),
      credit_note_number: expect.stringMatching(NUMBER),
      invoice_id: inv.id,
      customer_id: inv.customer_id,
      currency: 'usd',
      reason: 'PRODUCT_UNSATISFACTORY',
      memo: 'late delivery',
      amount: 900,
      refund: 'NONE',
      status: 'issued',
      origin: 'MANUAL',
      pre_payment_amount: 900,
      wallet_amount: 0,
      refund_amount: 0,
      refund_status: 'none',
      voided_at: null,
      metadata: { ticket: '42' },
      lines: [{ id: expect.stringMatching(/^cnli_/), invoice_line_item_id: second!.id, amount: 900 }],
    });
    const month = new Date().toISOString().slice(0, 7).replace('-', '');
    expect(res.body.credit_note_number.slice(3, 9)).toBe(month);
    const after = await getInvoice(inv.id);
    expect(after).toMatchObject({ status: 'finalized', amount_due: 5000, amount_remaining: 5000, pre_payment_credit_notes_amount: 900, post_payment_credit_notes_amount: 0 });
    expect(after.line_items.map((l) => l.credited_amount)).toEqual([0, 900]);
    // The second line can take 100 more; the first all of its 4900.
    const over = await note({ invoice_id: inv.id, lines: [{ invoice_line_item_id: first!.id, amount: 10 }, { invoice_line_item_id: second!.id, amount: 101 }] });
    expect(over.status).toBe(400);
    expect(over.body.error.details).toMatchObject({ field: 'lines.1.amount', creditable_amount: 100 });

    expect((await stack.api.get(`/v1/credit_notes/${res.body.id}`)).body).toEqual(res.body);
    expect((await notesOf(inv.id)).map((x) => x.id)).toEqual([res.body.id]);
    expect((await stack.api.get(`/v1/credit_notes?customer_id=${inv.customer_id}&status=issued`)).body.items.map((x: Note) => x.id)).toEqual([res.body.id]);
    expect((await stack.api.get(`/v1/credit_notes?customer_id=${inv.customer_id}&status=void`)).body.items).toEqual([]);
    expect((await stack.api.get('/v1/credit_notes/cn_unknown')).status).toBe(404);

    const events = await billingDb('outbox').where({ message_key: inv.id }).orderBy('id');
    const types = events.map((e: { value: string }) => JSON.parse(e.value).type);
    expect(types.slice(-2)).toEqual(['credit_note.created', 'invoice.update']);
    expect(JSON.parse(events[events.length - 2].value).payload.credit_note).toMatchObject({ id: res.body.id, amount: 900 });
    expect(JSON.parse(events[events.length - 1].value).payload.invoice).toMatchObject({ id: inv.id, amount_due: 5000 });
  });

  it('by amount: spread by what each line can take (largest remainder); all of it leaves nothing due: paid', async () => {
    const inv = await invoice(['49', '10']);
    const res = await note({ invoice_id: inv.id, amount: 100, reason: 'ORDER_CHANGE' });
    expect(res.status).toBe(201);
    // 100 x 4900/5900 = 83.05, 100 x 1000/5900 = 16.95: the larger remainder takes the unit.
    expect(res.body.lines.map((l: { amount: number }) => l.amount)).toEqual([83, 17]);
    const rest = await note({ invoice_id: inv.id, amount: 5801 });
    expect(rest.status).toBe(400);
    expect(rest.body.error.details).toMatchObject({ field: 'amount', creditable_amount: 5800 });
    const all = await note({ invoice_id: inv.id, amount: 5800 });
    expect(all.status).toBe(201);
    expect(all.body).toMatchObject({ pre_payment_amount: 5800, wallet_amount: 0, refund_amount: 0 });
    const after = await getInvoice(inv.id);
    expect(after).toMatchObject({ status: 'paid', amount_due: 0, amount_remaining: 0, pre_payment_credit_notes_amount: 5900 });
    expect(after.line_items.map((l) => l.credited_amount)).toEqual([4900, 1000]);
    const none = await note({ invoice_id: inv.id, amount: 1 });
    expect(none.status).toBe(400);
    expect(none.body.error.details).toMatchObject({ field: 'amount', creditable_amount: 0 });
  });

  it('refuses bad input with a clear 4xx in the envelope, and a refused call writes nothing', async () => {
    const inv = await invoice(['49']);
    const line = inv.line_items[0]!;
    const before = await snapshot(inv.id);
    const cases: Array<[Record<string, unknown>, number, Record<string, unknown>]> = [
      [{ invoice_id: inv.id }, 400, { field: 'lines' }],
      [{ invoice_id: inv.id, amount: 10, lines: [{ invoice_line_item_id: line.id, amount: 10 }] }, 400, { field: 'lines' }],
      [{ invoice_id: inv.id, amount: 0 }, 400, { field: 'amount' }],
      [{ invoice_id: inv.id, amount: 1.5 }, 400, { field: 'amount' }],
      [{ invoice_id: inv.id, lines: [{ invoice_line_item_id: line.id, amount: -1 }] }, 400, { field: 'lines.0.amount' }],
      [{ invoice_id: inv.id, amount: 10, refund: 'CASH' }, 400, { field: 'refund' }],
      [{ invoice_id: inv.id, amount: 10, reason: 'BORED' }, 400, { field: 'reason' }],
      [{ invoice_id: inv.id, lines: [{ invoice_line_item_id: line.id, amount: 4901 }] }, 400, { field: 'lines.0.amount', creditable_amount: 4900 }],
      [{ invoice_id: inv.id, amount: 4901 }, 400, { field: 'amount', creditable_amount: 4900 }],
      [{ invoice_id: inv.id, lines: [{ invoice_line_item_id: 'invli_unknown', amount: 1 }] }, 404, { field: 'lines.0.invoice_line_item_id' }],
      [{ invoice_id: 'inv_unknown', amount: 1 }, 404, { field: 'invoice_id' }],
    ];
    for (const [body, status, details] of cases) {
      const res = await note(body);
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), status]);
      expect(res.body.error.details).toMatchObject(details);
    }
    const draft = await invoice(['49'], { finalize: false });
    const onDraft = await note({ invoice_id: draft.id, amount: 1 });
    expect(onDraft.status).toBe(400);
    expect(onDraft.body.error.details).toMatchObject({ field: 'invoice_id', status: 'draft' });
    const voided = await invoice(['49']);
    expect((await stack.api.post(`/v1/invoices/${voided.id}/void`, {})).status).toBe(200);
    const onVoided = await note({ invoice_id: voided.id, amount: 1 });
    expect(onVoided.body.error.details).toMatchObject({ field: 'invoice_id', status: 'voided' });
    expect(await snapshot(inv.id)).toEqual(before);
    expect(await notesOf(draft.id)).toEqual([]);
  });

  it('refuses a CREDIT_PURCHASE invoice (an invoiced top-up)', async () => {
    const cust = await customer();
    const walletId = await prepaid(cust, '0');
    expect((await stack.api.post(`/v1/wallets/${walletId}/topup`, { credits_to_add: '5', transaction_reason: 'PURCHASED_CREDIT_INVOICED' })).status).toBe(201);
    const purchase = await waitFor(
      async () => ((await stack.api.get(`/v1/invoices?customer_id=${cust}`)).body.items as Array<{ id: string; billing_reason: string }>).find((i) => i.billing_reason === 'CREDIT_PURCHASE'),
      { timeoutMs: 20_000, what: 'the CREDIT_PURCHASE invoice' },
    );
    const res = await note({ invoice_id: purchase.id, amount: 1 });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toMatchObject({ field: 'invoice_id', billing_reason: 'CREDIT_PURCHASE' });
  });

  it('paid OFFLINE: refund NONE is a 400 refund; OFFLINE records it; WALLET credits the PRE_PAID wallet (made if missing) once', async () => {
    const inv = await invoice(['49']);
    expect((await stack.api.post('/v1/payments', { invoice_id: inv.id, amount: 4900, payment_method_type: 'OFFLINE' })).status).toBe(201);
    const before = await snapshot(inv.id);
    const none = await note({ invoice_id: inv.id, amount: 1000 });
    expect(none.status).toBe(400);
    expect(none.body.error.details).toMatchObject({ field: 'refund', refund_amount: 1000 });
    expect(await snapshot(inv.id)).toEqual(before);

    const offline = await note({ invoice_id: inv.id, amount: 1000, refund: 'OFFLINE' });
    expect(offline.status).toBe(201);
    expect(offline.body).toMatchObject({ pre_payment_amount: 0, wallet_amount: 0, refund_amount: 1000, refund_status: 'none' });
    expect(await getInvoice(inv.id)).toMatchObject({ status: 'paid', amount_due: 4900, amount_paid: 4900, post_payment_credit_notes_amount: 1000 });
    // Money given back is not voidable.
    const v = await stack.api.post(`/v1/credit_notes/${offline.body.id}/void`, {});
    expect(v.status).toBe(400);
    expect(v.body.error.details).toMatchObject({ field: 'status', refund_amount: 1000 });

    expect(await prepaidWallets(inv.customer_id)).toEqual([]);
    const toWallet = await note({ invoice_id: inv.id, amount: 500, refund: 'WALLET', idempotency_key: `w-${inv.id}` });
    expect(toWallet.status).toBe(201);
    expect(toWallet.body).toMatchObject({ refund_amount: 500, refund_status: 'succeeded', wallet_transaction_id: expect.any(String) });
    const [wallet] = await prepaidWallets(inv.customer_id);
    expect(wallet!.config.allowed_price_types).toEqual(['ALL']);
    expect(await balance(wallet!.id)).toBe('5');
    const txns = await creditNoteTxns(wallet!.id);
    expect(txns.map((t: { idempotency_key: string; id: string }) => [t.idempotency_key, t.id])).toEqual([[`credit_note:${toWallet.body.id}`, toWallet.body.wallet_transaction_id]]);
    // Everything received was given back: 3400 left to refund.
    const over = await note({ invoice_id: inv.id, amount: 3401, refund: 'OFFLINE' });
    expect(over.body.error.details).toMatchObject({ field: 'amount', creditable_amount: 3400 });
  });

  it("a WALLET refund to an existing PRE_PAID wallet of another rate: credits = money ÷ the wallet's rate, rounded up to 12 decimals", async () => {
    const cust = await customer();
    const w = await stack.api.post('/v1/wallets', { customer_id: cust, currency: 'usd', conversion_rate: '3', config: { allowed_price_types: ['USAGE'] } });
    expect(w.status).toBe(201);
    const inv = await invoice(['49'], { customerId: cust });
    expect((await stack.api.post('/v1/payments', { invoice_id: inv.id, amount: 4900, payment_method_type: 'OFFLINE' })).status).toBe(201);
    const res = await note({ invoice_id: inv.id, amount: 1000, refund: 'WALLET' });
    expect(res.body).toMatchObject({ refund_amount: 1000, refund_status: 'succeeded' });
    // 10 usd at 3 usd per credit; the wallet keeps its rate and price types.
    expect(await balance(w.body.id)).toBe('3.333333333334');
    expect((await prepaidWallets(cust)).map((x) => [x.id, x.config.allowed_price_types])).toEqual([[w.body.id, ['USAGE']]]);
  });

  it('paid by wallet credits: the wallet part goes back to the wallet once; a retry with the same key changes nothing; another body is a 409', async () => {
    const cust = await customer();
    const walletId = await prepaid(cust, '100');
    const inv = await invoice(['49'], { customerId: cust });
    expect(inv).toMatchObject({ status: 'paid', total_prepaid_credits_applied: 4900, amount_due: 0 });
    expect(await balance(walletId)).toBe('51');
    const body = { invoice_id: inv.id, amount: 1000, idempotency_key: `k-${inv.id}` };
    const first = await note(body);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ pre_payment_amount: 0, wallet_amount: 1000, refund_amount: 0, refund: 'NONE', refund_status: 'succeeded' });
    expect(await balance(walletId)).toBe('61');
    const again = await note(body);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const header = await stack.api.post('/v1/credit_notes', { reason: 'PRODUCT_UNSATISFACTORY', invoice_id: inv.id, amount: 1000 }, { 'Idempotency-Key': `k-${inv.id}` });
    expect(header.body.id).toBe(first.body.id);
    const other = await note({ ...body, amount: 999 });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ internal_error: 'idempotency_conflict', details: { field: 'idempotency_key', credit_note_id: first.body.id } });
    expect(await balance(walletId)).toBe('61');
    expect(await creditNoteTxns(walletId)).toHaveLength(1);
    expect(await notesOf(inv.id)).toHaveLength(1);
    expect(await getInvoice(inv.id)).toMatchObject({ status: 'paid', amount_due: 0, post_payment_credit_notes_amount: 1000 });
    const events = await billingDb('outbox').where({ message_key: inv.id }).orderBy('id');
    const types = events.map((e: { value: string }) => JSON.parse(e.value).type);
    expect(types.filter((t: string) => t.startsWith('credit_note.'))).toEqual(['credit_note.created', 'credit_note.updated']);
  });

  it('voids a note that gave nothing back: amount_due restored, paid goes back to finalized; a second void is a 400', async () => {
    const inv = await invoice(['49']);
    const full = await note({ invoice_id: inv.id, amount: 4900 });
    expect(await getInvoice(inv.id)).toMatchObject({ status: 'paid', amount_due: 0 });
    const v = await stack.api.post(`/v1/credit_notes/${full.body.id}/void`, {});
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ id: full.body.id, status: 'void', voided_at: expect.any(String), credit_note_number: full.body.credit_note_number });
    const after = await getInvoice(inv.id);
    expect(after).toMatchObject({ status: 'finalized', amount_due: 4900, amount_remaining: 4900, pre_payment_credit_notes_amount: 0 });
    expect(after.line_items[0]!.credited_amount).toBe(0);
    const twice = await stack.api.post(`/v1/credit_notes/${full.body.id}/void`, {});
    expect(twice.status).toBe(400);
    expect(twice.body.error.details).toMatchObject({ field: 'status', status: 'void' });
    expect((await stack.api.post('/v1/credit_notes/cn_unknown/void', {})).status).toBe(404);
    // The line can be credited again.
    expect((await note({ invoice_id: inv.id, amount: 4900 })).status).toBe(201);
    const types = (await billingDb('outbox').where({ message_key: inv.id }).orderBy('id')).map((e: { value: string }) => JSON.parse(e.value).type);
    expect(types.slice(-5)).toEqual(['invoice.update', 'credit_note.updated', 'invoice.update', 'credit_note.created', 'invoice.update']);
  });

  it('needs credit_notes:read to read and credit_notes:write to write (403 in the envelope); other tenants see nothing', async () => {
    const inv = await invoice(['49']);
    const issued = await note({ invoice_id: inv.id, amount: 100 });
    expect(issued.status).toBe(201);
    const none = stack.api.withKey(await stack.keyFor('tenant-a', 'production', ['invoices:read', 'invoices:write']));
    for (const res of [
      await none.get('/v1/credit_notes'),
      await none.get(`/v1/credit_notes/${issued.body.id}`),
      await none.post('/v1/credit_notes', { invoice_id: inv.id, reason: 'OTHER', amount: 1 }),
      await none.post(`/v1/credit_notes/${issued.body.id}/void`, {}),
    ]) {
      expect([res.status, res.body.success, res.body.error.internal_error]).toEqual([403, false, 'permission_denied']);
    }
    const readOnly = stack.api.withKey(await stack.keyFor('tenant-a', 'production', ['credit_notes:read']));
    expect((await readOnly.get(`/v1/credit_notes/${issued.body.id}`)).status).toBe(200);
    expect((await readOnly.post(`/v1/credit_notes/${issued.body.id}/void`, {})).status).toBe(403);
    const other = stack.api.withKey(await stack.keyFor('tenant-b', 'production'));
    expect((await other.get(`/v1/credit_notes/${issued.body.id}`)).status).toBe(404);
    expect((await other.post(`/v1/credit_notes/${issued.body.id}/void`, {})).status).toBe(404);
    expect((await other.get('/v1/credit_notes')).body.items).toEqual([]);
    expect((await other.post('/v1/credit_notes', { invoice_id: inv.id, reason: 'OTHER', amount: 1 })).body.error.details).toMatchObject({ field: 'invoice_id' });
    expect(await notesOf(inv.id)).toHaveLength(1);
  });

  it('caps under concurrency: 100 parallel notes of 10 on a 500 line, exactly 50 succeed; numbers stay gap-free', async () => {
    const inv = await invoice(['5']);
    const line = inv.line_items[0]!;
    const answers = await Promise.all(Array.from({ length: 100 }, () => note({ invoice_id: inv.id, lines: [{ invoice_line_item_id: line.id, amount: 10 }] })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(50);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused).toHaveLength(50);
    expect(refused.every((a) => a.status === 400 && a.body.error.details.field === 'lines.0.amount' && a.body.error.details.creditable_amount === 0)).toBe(true);
    const after = await getInvoice(inv.id);
    expect(after).toMatchObject({ status: 'paid', amount_due: 0, pre_payment_credit_notes_amount: 500 });
    expect(after.line_items[0]!.credited_amount).toBe(500);

    // Every note of the tenant, failures in between included: CN-{YYYYMM}-{n} with n 1, 2, 3, ... without a gap.
    const rows = await billingDb('credit_notes').where({ tenant_id: 'tenant-a' }).select('credit_note_number');
    const numbers = rows.map((r: { credit_note_number: string }) => r.credit_note_number);
    expect(numbers.every((x: string) => NUMBER.test(x))).toBe(true);
    const ns = numbers.map((x: string) => Number(x.split('-')[2])).sort((a: number, b: number) => a - b);
    expect(ns).toEqual(Array.from({ length: ns.length }, (_, k) => k + 1));
  });
});
