import { createDb, type Db } from '@billstream/db';
import { waitFor } from '@billstream/testing';
import { DAY, awayFromMonthEnd, iso, isoZ, monthStart, ymd } from '../../support/clock';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { fixedPrice, usagePrice } from './prices';

/**
 * Invoices, credits on invoices and payments (issue #13) as a client meets them: through the
 * gateway, on the whole stack with real Postgres and Kafka. The period job's schedule is off;
 * the tests run it with POST /v1/cron/bill-subscriptions.
 */
const fixedAdvance = fixedPrice;
const fixedArrear = { ...fixedPrice, amount: '30', invoice_cadence: 'ARREAR' };
const usage = (meterId: string) => usagePrice(meterId);

interface Invoice {
  id: string;
  invoice_number: string | null;
  status: string;
  billing_reason: string;
  period_start: string;
  subtotal: number;
  total: number;
  amount_due: number;
  amount_paid: number;
  amount_remaining: number;
  total_prepaid_credits_applied: number;
  finalized_at: string | null;
  line_items: Array<{ amount: number; prepaid_credits_applied: number; price_type: string; quantity: string; description: string; line_type: string }>;
}

describe('invoices, credits and payments through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let billingDb: Db;
  let walletDb: Db;
  let meterId: string;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0' } } });
    billingDb = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    walletDb = createDb({ databaseUrl: stack.database.url, schema: 'wallet', poolMax: 2 });
    meterId = (await stack.api.post('/v1/meters', { name: 'calls', event_name: 'api_call', aggregation: { type: 'COUNT' } })).body.id;
  });
  // The months the tests bill are computed at each use from the real clock (test-e2e/support/clock.ts): never across a month's end.
  beforeEach(() => awayFromMonthEnd(30_000));
  afterAll(async () => {
    await billingDb?.destroy();
    await walletDb?.destroy();
    await stack?.stop();
  });

  const cron = async () => {
    const res = await stack.api.post('/v1/cron/bill-subscriptions', {});
    expect(res.status).toBe(200);
    return res.body as { invoices_created: number; subscriptions_billed: number; invoices_finalized: number; invoices_marked_overdue: number };
  };
  const invoicesOf = async (subscriptionId: string): Promise<Invoice[]> => {
    const res = await stack.api.get(`/v1/invoices?subscription_id=${subscriptionId}&limit=100`);
    expect(res.status).toBe(200);
    return (res.body.items as Invoice[]).sort((a, b) => a.period_start.localeCompare(b.period_start) || a.billing_reason.localeCompare(b.billing_reason));
  };
  const balance = async (walletId: string) => (await stack.api.get(`/v1/wallets/${walletId}/balance`)).body.credit_balance as string;

  async function customer(externalId: string): Promise<string> {
    const res = await stack.api.post('/v1/customers', { external_customer_id: externalId });
    expect(res.status).toBe(201);
    return res.body.id;
  }
  async function plan(prices: unknown[]): Promise<string> {
    const res = await stack.api.post('/v1/plans', { name: 'Pro', prices });
    expect(res.status).toBe(201);
    return res.body.id;
  }
  async function ingest(externalId: string, n: number, at: string): Promise<void> {
    const events = Array.from({ length: n }, (_, i) => ({ event_name: 'api_call', external_customer_id: externalId, timestamp: at, event_id: `${externalId}-${at}-${i}` }));
    expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
  }
  async function usageStored(externalId: string, from: string, to: string, value: string): Promise<void> {
    await waitFor(async () => {
      const res = await stack.api.post(`/v1/meters/${meterId}/usage`, { external_customer_id: externalId, start_time: from, end_time: to });
      return res.body.value === value;
    }, { timeoutMs: 20_000, what: `usage of ${externalId}` });
  }
  async function prepaid(customerId: string, credits: string, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await stack.api.post('/v1/wallets', { customer_id: customerId, currency: 'usd', initial_credits_to_load: credits, ...extra });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  it('bills a backdated subscription every past period at once, exactly once, and finalizes with credits applied line by line', async () => {
    const cust = await customer('inv-acme');
    await ingest('inv-acme', 10, isoZ(monthStart(-2) + 9.5 * DAY));
    await usageStored('inv-acme', isoZ(monthStart(-2)), isoZ(monthStart(-1)), '10');
    const walletId = await prepaid(cust, '20');
    const planId = await plan([fixedAdvance, usage(meterId)]);
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: cust, plan_id: planId, start_date: isoZ(monthStart(-3)) });
    expect(sub.status).toBe(201);
    expect(sub.body.current_period_start).toBe(iso(monthStart(0)));

    const drafts = await invoicesOf(sub.body.id);
    expect(drafts.map((i) => [i.billing_reason, i.period_start.slice(0, 10), i.status, i.subtotal])).toEqual([
      ['SUBSCRIPTION_CREATE', ymd(monthStart(-3)), 'draft', 4900],
      ['SUBSCRIPTION_CYCLE', ymd(monthStart(-3)), 'draft', 4900],
      ['SUBSCRIPTION_CYCLE', ymd(monthStart(-2)), 'draft', 500 + 4900],
      ['SUBSCRIPTION_CYCLE', ymd(monthStart(-1)), 'draft', 4900],
    ]);
    const september = drafts[2];
    expect(september.line_items.map((l) => [l.price_type, l.quantity, l.amount, l.prepaid_credits_applied])).toEqual([
      ['USAGE', '10', 500, 0],
      ['FIXED', '1', 4900, 0],
    ]);
    expect(drafts.every((i) => i.invoice_number === null && i.total_prepaid_credits_applied === 0)).toBe(true);

    const first = await cron();
    expect(first.invoices_created).toBe(0);
    expect(first.invoices_finalized).toBeGreaterThanOrEqual(4);
    // Reruns make and finalize nothing more.
    for (let i = 0; i < 3; i++) expect(await cron()).toMatchObject({ invoices_created: 0, subscriptions_billed: 0, invoices_finalized: 0 });

    const final = await invoicesOf(sub.body.id);
    expect(final).toHaveLength(4);
    expect(final.every((i) => i.status === 'finalized' && /^INV-\d{6}-\d{5}$/.test(i.invoice_number!))).toBe(true);
    const sept = final[2];
    expect(sept.line_items.map((l) => l.prepaid_credits_applied)).toEqual([500, 0]);
    expect(sept).toMatchObject({ subtotal: 5400, total_prepaid_credits_applied: 500, total: 4900, amount_due: 4900, amount_paid: 0, amount_remaining: 4900 });
    expect(await balance(walletId)).toBe('15');
    const debits = await walletDb('transactions').where({ wallet_id: walletId, transaction_reason: 'INVOICE_CREDIT_APPLIED' });
    expect(debits).toHaveLength(1);
    expect(debits[0].description).toContain(sept.id);

    // The events carry the invoice as the spec shows it.
    const events = await billingDb('outbox').where({ message_key: sept.id }).orderBy('id');
    const types = events.map((e: { value: string }) => JSON.parse(e.value).type);
    // payment_terms_days 0: due at finalization, so the next run marks it overdue, once.
    expect(types).toEqual(['invoice.create.drafted', 'invoice.update.finalized', 'invoice.payment.overdue']);
    expect((await stack.api.get(`/v1/invoices/${sept.id}`)).body).toMatchObject({ overdue: true, due_date: sept.finalized_at });
    const payload = JSON.parse(events[1].value).payload.invoice;
    expect(payload).toMatchObject({ id: sept.id, invoice_number: sept.invoice_number, customer_id: cust, status: 'finalized', amount_due: 4900, currency: 'usd' });
    expect(payload.line_items[0]).toMatchObject({ description: expect.any(String), quantity: '10', unit_amount: '0.5', amount: 500 });
  });

  it('numbers invoices gap-free per tenant and environment, increasing in finalization order', async () => {
    const rows = await billingDb('invoices').whereNotNull('invoice_number').where({ tenant_id: 'tenant-a' });
    const byNumber = rows
      .map((r: { invoice_number: string; finalized_at: Date }) => ({ n: Number(r.invoice_number.split('-')[2]), at: r.finalized_at.getTime() }))
      .sort((a: { n: number }, b: { n: number }) => a.n - b.n);
    expect(byNumber.map((r: { n: number }) => r.n)).toEqual(byNumber.map((_: unknown, i: number) => i + 1));
    // Invoices finalized in one batch share finalized_at: numbers never decrease as finalized_at grows.
    byNumber.slice(1).forEach((r: { at: number }, i: number) => expect(r.at).toBeGreaterThanOrEqual(byNumber[i].at));
  });

  it('finalizes one draft once under 10 concurrent calls: one 200, nine 400, the wallet debited once', async () => {
    const cust = await customer('inv-race');
    await ingest('inv-race', 4, isoZ(monthStart(-1) + 4 * DAY));
    await usageStored('inv-race', isoZ(monthStart(-1)), isoZ(monthStart(0)), '4');
    const walletId = await prepaid(cust, '100');
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: cust, plan_id: await plan([usage(meterId)]), start_date: isoZ(monthStart(-1)) });
    const [draft] = await invoicesOf(sub.body.id);
    expect(draft).toMatchObject({ status: 'draft', subtotal: 200 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => stack.api.post(`/v1/invoices/${draft.id}/finalize`, {})));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400, 400, 400, 400, 400, 400, 400]);
    const done = answers.find((a) => a.status === 200)!.body as Invoice;
    // Fully paid by credits: paid at finalization.
    expect(done).toMatchObject({ status: 'paid', payment_status: 'succeeded', total_prepaid_credits_applied: 200, amount_due: 0 });
    expect(await balance(walletId)).toBe('98');
    expect(await walletDb('transactions').where({ wallet_id: walletId, transaction_reason: 'INVOICE_CREDIT_APPLIED' })).toHaveLength(1);
    const refused = answers.find((a) => a.status === 400)!.body;
    expect(refused.error).toMatchObject({ internal_error: 'validation_error' });
    // A paid invoice cannot be voided.
    expect((await stack.api.post(`/v1/invoices/${draft.id}/void`, {})).status).toBe(400);
  });

  it('voids a finalized invoice once, giving its credits back to the wallet', async () => {
    const cust = await customer('inv-void');
    await ingest('inv-void', 100, isoZ(monthStart(-1) + 4 * DAY));
    await usageStored('inv-void', isoZ(monthStart(-1)), isoZ(monthStart(0)), '100');
    const walletId = await prepaid(cust, '30');
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: cust, plan_id: await plan([usage(meterId)]), start_date: isoZ(monthStart(-1)) });
    const [draft] = await invoicesOf(sub.body.id);
    const fin = await stack.api.post(`/v1/invoices/${draft.id}/finalize`, {});
    expect(fin.body).toMatchObject({ status: 'finalized', subtotal: 5000, total_prepaid_credits_applied: 3000, amount_due: 2000 });
    expect(await balance(walletId)).toBe('0');
    const voided = await stack.api.post(`/v1/invoices/${draft.id}/void`, {});
    expect(voided.status).toBe(200);
    expect(voided.body).toMatchObject({ status: 'voided', voided_at: expect.any(String) });
    await waitFor(async () => (await balance(walletId)) === '30', { timeoutMs: 10_000, what: 'the refund' });
    expect((await stack.api.post(`/v1/invoices/${draft.id}/void`, {})).status).toBe(400);
    await cron();
    expect(await balance(walletId)).toBe('30');
    const notes = await walletDb('transactions').where({ wallet_id: walletId, transaction_reason: 'CREDIT_NOTE' });
    expect(notes).toHaveLength(1);
    expect(notes[0].description).toContain(draft.id);
  });

  it('takes OFFLINE payments up to the amount remaining, idempotently, and CREDITS payments from a wallet', async () => {
    const cust = await customer('inv-pay');
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: cust, plan_id: await plan([fixedAdvance]) });
    const [draft] = await invoicesOf(sub.body.id);
    expect(draft).toMatchObject({ billing_reason: 'SUBSCRIPTION_CREATE', status: 'draft', subtotal: 4900 });
    const onDraft = await stack.api.post('/v1/payments', { invoice_id: draft.id, amount: 100, payment_method_type: 'OFFLINE' });
    expect(onDraft.status).toBe(400);
    await stack.api.post(`/v1/invoices/${draft.id}/finalize`, {});

    const over = await stack.api.post('/v1/payments', { invoice_id: draft.id, amount: 4901, payment_method_type: 'OFFLINE' });
    expect(over.status).toBe(400);
    expect(over.body.error.details).toMatchObject({ field: 'amount' });
    const body = { invoice_id: draft.id, amount: 900, payment_method_type: 'OFFLINE', reference: 'wire 1', idempotency_key: 'pay-1' };
    const p1 = await stack.api.post('/v1/payments', body);
    expect(p1.status).toBe(201);
    expect(p1.body).toMatchObject({ id: expect.stringMatching(/^pay_/), amount: 900, currency: 'usd', payment_status: 'succeeded', wallet_id: null });
    const again = await stack.api.post('/v1/payments', body);
    expect(again.body.id).toBe(p1.body.id);
    expect((await stack.api.post('/v1/payments', { ...body, amount: 901 })).status).toBe(409);
    const partly = (await stack.api.get(`/v1/invoices/${draft.id}`)).body;
    expect(partly).toMatchObject({ status: 'finalized', payment_status: 'partially_paid', amount_paid: 900, amount_remaining: 4000 });

    // CREDITS from a POST_PAID wallet: never adds credits, debits what it pays.
    const postpaid = (await stack.api.post('/v1/wallets', { customer_id: cust, currency: 'usd', wallet_type: 'POST_PAID', initial_credits_to_load: '100' })).body.id;
    const credits = await stack.api.post('/v1/payments', { invoice_id: draft.id, amount: 4000, payment_method_type: 'CREDITS', wallet_id: postpaid });
    expect(credits.status).toBe(201);
    expect(credits.body).toMatchObject({ payment_method_type: 'CREDITS', wallet_id: postpaid, payment_status: 'succeeded' });
    expect(await balance(postpaid)).toBe('60');
    const paid = (await stack.api.get(`/v1/invoices/${draft.id}`)).body;
    expect(paid).toMatchObject({ status: 'paid', payment_status: 'succeeded', amount_paid: 4900, amount_remaining: 0 });
    const listed = await stack.api.get(`/v1/payments?invoice_id=${draft.id}`);
    expect(listed.body.items.map((p: { amount: number }) => p.amount)).toEqual([900, 4000]);
    expect((await stack.api.post('/v1/payments', { invoice_id: draft.id, amount: 1, payment_method_type: 'OFFLINE' })).status).toBe(400);
  });

  it('refuses a CREDITS payment a wallet cannot cover, leaving no payment', async () => {
    const cust = await customer('inv-poor');
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: cust, plan_id: await plan([fixedAdvance]) });
    const [draft] = await invoicesOf(sub.body.id);
    await stack.api.post(`/v1/invoices/${draft.id}/finalize`, {});
    const poor = (await stack.api.post('/v1/wallets', { customer_id: cust, currency: 'usd', wallet_type: 'POST_PAID', initial_credits_to_load: '1' })).body.id;
    const res = await stack.api.post('/v1/payments', { invoice_id: draft.id, amount: 4900, payment_method_type: 'CREDITS', wallet_id: poor });
    expect(res.status).toBe(400);
    expect((await stack.api.get(`/v1/payments?invoice_id=${draft.id}`)).body.items).toEqual([]);
    expect(await balance(poor)).toBe('1');
  });

  it('invoices a pause (ARREAR charges prorated up to it), a resume (ADVANCE charges) and an immediate cancel', async () => {
    const cust = await customer('inv-life');
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: cust, plan_id: await plan([fixedAdvance, fixedArrear, usage(meterId)]) });
    const id = sub.body.id;
    expect((await stack.api.post(`/v1/subscriptions/${id}/pause`, {})).status).toBe(200);
    expect((await stack.api.post(`/v1/subscriptions/${id}/resume`, {})).status).toBe(200);
    expect((await stack.api.post(`/v1/subscriptions/${id}/cancel`, { cancel_at: 'immediately' })).status).toBe(200);
    const all = await invoicesOf(id);
    const reasons = all.map((i) => i.billing_reason).sort();
    expect(reasons).toEqual(['SUBSCRIPTION_CANCEL', 'SUBSCRIPTION_CREATE', 'SUBSCRIPTION_PAUSE', 'SUBSCRIPTION_RESUME']);
    const pause = all.find((i) => i.billing_reason === 'SUBSCRIPTION_PAUSE')!;
    // Paused within a second of the start: the ARREAR fixed charge is prorated to (almost) nothing.
    expect(pause.line_items.find((l) => l.price_type === 'FIXED')!.description).toMatch(/prorated/);
    expect(pause.subtotal).toBeLessThan(100);
    const resume = all.find((i) => i.billing_reason === 'SUBSCRIPTION_RESUME')!;
    expect(resume.line_items.map((l) => l.amount)).toEqual([4900]);
  });

  it('shows the upcoming invoice with the credits it would apply, storing and debiting nothing', async () => {
    const cust = await customer('inv-next');
    const walletId = await prepaid(cust, '3');
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: cust, plan_id: await plan([fixedAdvance, usage(meterId)]) });
    await ingest('inv-next', 8, new Date().toISOString());
    await usageStored('inv-next', sub.body.current_period_start, sub.body.current_period_end, '8');
    const before = Number((await billingDb('invoices').count({ n: '*' }))[0].n);
    const res = await stack.api.get(`/v1/subscriptions/${sub.body.id}/upcoming-invoice`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ billing_reason: 'SUBSCRIPTION_CYCLE', status: 'draft', subtotal: 400 + 4900, total_prepaid_credits_applied: 300, amount_due: 5000 });
    expect(res.body.line_items.map((l: { prepaid_credits_applied: number }) => l.prepaid_credits_applied)).toEqual([300, 0]);
    expect(res.body.id).toBeUndefined();
    expect(Number((await billingDb('invoices').count({ n: '*' }))[0].n)).toBe(before);
    expect(await balance(walletId)).toBe('3');
  });

  it('bills jpy in whole yen, not x100', async () => {
    const cust = await customer('inv-yen');
    const planId = await plan([{ ...fixedAdvance, currency: 'jpy', amount: '1500' }]);
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: cust, plan_id: planId });
    const [inv] = await invoicesOf(sub.body.id);
    expect(inv).toMatchObject({ subtotal: 1500, amount_due: 1500, line_items: [{ amount: 1500, unit_amount: '1500' }] });
  });

  it('answers 400 and 404 in the envelope for bad invoice and payment calls', async () => {
    expect((await stack.api.get('/v1/invoices/inv_missing')).status).toBe(404);
    expect((await stack.api.post('/v1/invoices/inv_missing/finalize', {})).status).toBe(404);
    expect((await stack.api.get('/v1/invoices?status=open')).status).toBe(400);
    const noWallet = await stack.api.post('/v1/payments', { invoice_id: 'inv_x', amount: 1, payment_method_type: 'CREDITS' });
    expect(noWallet.status).toBe(400);
    expect(noWallet.body.error.details).toMatchObject({ field: 'wallet_id' });
    const missing = await stack.api.post('/v1/payments', { invoice_id: 'inv_missing', amount: 1, payment_method_type: 'OFFLINE' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.details).toMatchObject({ field: 'invoice_id' });
    expect((await stack.api.post('/v1/payments', { invoice_id: 'inv_x', amount: 1.5, payment_method_type: 'OFFLINE' })).status).toBe(400);
    const other = stack.api.withKey(await stack.keyFor('tenant-other', 'production'));
    const mine = (await stack.api.get('/v1/invoices?limit=1')).body.items[0];
    expect((await other.get(`/v1/invoices/${mine.id}`)).status).toBe(404);
  });

  it('shows the invoice arithmetic (docs/api/billing.md#invoice-arithmetic) on an ordinary invoice: CHARGE lines netting their amount, the new totals 0', async () => {
    const cust = await customer('inv-arith');
    await ingest('inv-arith', 6, isoZ(monthStart(-1) + 4 * DAY));
    await usageStored('inv-arith', isoZ(monthStart(-1)), isoZ(monthStart(0)), '6');
    await prepaid(cust, '2');
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: cust, plan_id: await plan([fixedAdvance, usage(meterId)]), start_date: isoZ(monthStart(-1)) });
    const ordinary = { total_discount: 0, discounts: [], excess_credit: 0, pre_payment_credit_notes_amount: 0, post_payment_credit_notes_amount: 0, hosted_invoice_url: null, invoice_pdf_url: null };
    const plain = { line_type: 'CHARGE', offset_amount: 0, discount_amount: 0, credited_amount: 0 };

    const cycle = (await invoicesOf(sub.body.id)).find((i) => i.billing_reason === 'SUBSCRIPTION_CYCLE')!;
    expect(cycle).toMatchObject({ ...ordinary, subscription_customer_id: cust, status: 'draft', subtotal: 300 + 4900, total: 5200, amount_due: 5200, amount_remaining: 5200 });
    expect(cycle.line_items).toEqual([expect.objectContaining({ ...plain, amount: 300, net_amount: 300 }), expect.objectContaining({ ...plain, amount: 4900, net_amount: 4900 })]);

    // Finalized: the wallet's 2 credits pay the lines' net amounts in line order; docs/api/billing.md's totals are unchanged.
    const fin = await stack.api.post(`/v1/invoices/${cycle.id}/finalize`, {});
    expect(fin.status).toBe(200);
    // Finalized, it has its documents' signed links (ADR 0045; a draft has none).
    const links = { hosted_invoice_url: expect.stringContaining(`/v1/hosted/invoices/${cycle.id}?token=`), invoice_pdf_url: expect.stringContaining(`/v1/hosted/invoices/${cycle.id}/pdf?token=`) };
    expect(fin.body).toMatchObject({ ...ordinary, ...links, subtotal: 5200, total_prepaid_credits_applied: 200, total: 5000, amount_due: 5000, amount_paid: 0, amount_remaining: 5000 });
    expect(fin.body.line_items.map((l: Invoice['line_items'][number] & { net_amount: number }) => [l.line_type, l.amount, l.net_amount, l.prepaid_credits_applied])).toEqual([
      ['CHARGE', 300, 300, 200],
      ['CHARGE', 4900, 4900, 0],
    ]);
    const pay = await stack.api.post('/v1/payments', { invoice_id: cycle.id, amount: 5000, payment_method_type: 'OFFLINE' });
    expect(pay.status).toBe(201);
    expect((await stack.api.get(`/v1/invoices/${cycle.id}`)).body).toMatchObject({ ...ordinary, ...links, status: 'paid', total: 5000, amount_due: 5000, amount_paid: 5000, amount_remaining: 0 });

    // The upcoming invoice too.
    const upcoming = await stack.api.get(`/v1/subscriptions/${sub.body.id}/upcoming-invoice`);
    expect(upcoming.status).toBe(200);
    expect(upcoming.body).toMatchObject({ ...ordinary, subscription_customer_id: cust });
    expect(upcoming.body.line_items.every((l: { line_type: string; amount: number; net_amount: number }) => l.line_type === 'CHARGE' && l.net_amount === l.amount)).toBe(true);
  });

  it('refuses in the database a row that breaks an identity of section 0, and keeps invoices unique per sequence', async () => {
    const row = await billingDb('invoices').whereNotNull('subscription_id').where('total', '>=', 100).where({ amount_paid: 0 }).orderBy('id').first();
    const [line] = await billingDb('invoice_line_items').where({ invoice_id: row.id }).orderBy('position').limit(1);
    const refused = async (constraint: string, change: (trx: Db) => Promise<unknown>) => {
      await expect(billingDb.transaction((trx) => change(trx))).rejects.toMatchObject({ code: '23514', constraint });
    };
    const invoice = (values: Record<string, unknown>) => (trx: Db) => trx('invoices').where({ id: row.id }).update(values);
    const lineOf = (values: Record<string, unknown>) => (trx: Db) => trx('invoice_line_items').where({ id: line.id }).update(values);
    // A discount not taken off the total, an excess credit not added to it.
    await refused('invoices_total', invoice({ total_discount: 1 }));
    await refused('invoices_total', invoice({ excess_credit: 5, total: Number(row.total) + 4, amount_due: Number(row.total) + 4, amount_remaining: Number(row.total) + 4 - Number(row.amount_paid) }));
    // A credit note before payment must lower amount_due; amount_remaining follows amount_due and amount_paid.
    await refused('invoices_amount_due', invoice({ pre_payment_credit_notes_amount: 1 }));
    await refused('invoices_amount_remaining', invoice({ amount_paid: Number(row.amount_paid) + 1 }));
    // A line: net = amount - offset - discount, never below 0; a negative line nets 0 and has no offset of its own; credits at most the net.
    await refused('invoice_line_items_arithmetic', lineOf({ net_amount: Number(line.amount) + 1 }));
    await refused('invoice_line_items_arithmetic', lineOf({ discount_amount: Number(line.amount) + 1, net_amount: 0, prepaid_credits_applied: 0 }));
    await refused('invoice_line_items_arithmetic', lineOf({ amount: -1, net_amount: 0, prepaid_credits_applied: 0 }));
    await refused('invoice_line_items_arithmetic', lineOf({ line_type: 'PRORATION_CREDIT', amount: -100, net_amount: 0, prepaid_credits_applied: 0, offset_amount: 100 }));
    await refused('invoice_line_items_applied', lineOf({ prepaid_credits_applied: Number(line.net_amount) + 1 }));
    await refused('invoice_line_items_applied', lineOf({ credited_amount: Number(line.net_amount) + 1 }));
    // What the identities allow is written: a negative line of net 0, a consistent discount (rolled back).
    const rollback = new Error('rollback');
    await expect(
      billingDb.transaction(async (trx) => {
        await lineOf({ line_type: 'PRORATION_CREDIT', amount: -100, net_amount: 0, offset_amount: 0, discount_amount: 0, prepaid_credits_applied: 0 })(trx);
        const total = Number(row.subtotal) - 10 - Number(row.total_prepaid_credits_applied);
        await invoice({ total_discount: 10, total, amount_due: total, amount_remaining: total - Number(row.amount_paid) })(trx);
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    // Uniqueness is (subscription, period start, reason, sequence): another sequence is another invoice, the same one is refused.
    const copy = (sequence: string) => ({ ...row, id: `inv_copy_${sequence || 'none'}`, sequence, invoice_number: null });
    await expect(
      billingDb.transaction(async (trx) => {
        await trx('invoices').insert(copy('schg_1'));
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    await expect(billingDb('invoices').insert(copy(''))).rejects.toMatchObject({ code: '23505', constraint: 'invoices_one_per_period_sequence' });
    await expect(billingDb('invoices').insert({ ...copy('x'), billing_reason: 'SUBSCRIPTION_SOMETHING' })).rejects.toMatchObject({ code: '23514', constraint: 'invoices_billing_reason_check' });
  });
});
