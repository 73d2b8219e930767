/** One file: every case runs on the one ledger harness (a migrated database and the wallet service) started in beforeAll. */
import { listen, type Listening } from '@billstream/http';
import { newUlid } from '@billstream/ids';
import { Exact } from '@billstream/money';
import { ApiClient } from '@billstream/testing';
import { ENVIRONMENT, INTERNAL_TOKEN, META, TENANT, startLedgerHarness, type LedgerHarness } from '../testing/harness';
import { assertLedgerAddsUp } from '../testing/invariants';
import type { Wallet } from '../wallets/domain';

const D = (v: string) => new Exact(v);
const HEADERS = { 'x-internal-token': INTERNAL_TOKEN, 'x-tenant-id': TENANT, 'x-environment-id': ENVIRONMENT };

type Line = { id: string; price_type: 'USAGE' | 'FIXED'; amount: number };

describe('wallet credits on invoices: internal endpoints (real Postgres)', () => {
  let h: LedgerHarness;
  let http: Listening;
  let api: ApiClient;
  /** Every wallet a test made: the ledger of each must add up at the end. */
  const touched: string[] = [];

  beforeAll(async () => {
    h = await startLedgerHarness();
    http = await listen(h.service.app, 0, '127.0.0.1');
    api = new ApiClient(http.url);
  });
  afterAll(async () => {
    for (const id of touched) await assertLedgerAddsUp(h.db, id, h.clock.now());
    await http?.close();
    await h?.stop();
  });

  const invoiceId = () => `inv_${newUlid()}`;
  const allocate = (invoice: string, body: Record<string, unknown>) => api.post(`/internal/v1/invoices/${invoice}/allocation`, body, HEADERS);
  const pay = (invoice: string, body: Record<string, unknown>) => api.post(`/internal/v1/invoices/${invoice}/payments`, body, HEADERS);
  const refund = (invoice: string) => api.post(`/internal/v1/invoices/${invoice}/refund`, {}, HEADERS);
  const usd = (customerId: string, lines: Line[]) => ({ customer_id: customerId, currency: 'usd', exponent: 2, lines });

  async function wallet(customerId: string, credits: string, extra: Partial<Parameters<LedgerHarness['wallet']>[0]> = {}): Promise<Wallet> {
    const w = await h.wallet({ customerId, initialCredits: Number(credits) > 0 ? D(credits) : null, ...extra });
    touched.push(w.id);
    return w;
  }
  const balance = async (walletId: string) => (await h.db('wallets').where({ id: walletId }).first()).credit_balance as string;
  const entries = (walletId: string, reason?: string) =>
    h.db('transactions').where({ wallet_id: walletId, ...(reason ? { transaction_reason: reason } : {}) }).orderBy('ledger_seq');
  const check = async (...walletIds: string[]) => {
    for (const id of walletIds) await assertLedgerAddsUp(h.db, id, h.clock.now());
  };

  describe('allocation rules', () => {
    it('applies a PRE_PAID wallet (default USAGE) to its usage lines in order, as one INVOICE_CREDIT_APPLIED debit', async () => {
      const customer = await h.customer();
      const w = await wallet(customer, '100');
      const invoice = invoiceId();
      const lines: Line[] = [
        { id: 'l1', price_type: 'FIXED', amount: 500 },
        { id: 'l2', price_type: 'USAGE', amount: 1234 },
        { id: 'l3', price_type: 'USAGE', amount: 200 },
      ];
      const res = await allocate(invoice, usd(customer, lines));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        invoice_id: invoice,
        status: 'allocated',
        prepaid: {
          wallet_id: w.id,
          transaction_id: expect.stringMatching(/^wtxn_/),
          credits: '14.34',
          amount: 1434,
          lines: [
            { id: 'l2', amount: 1234 },
            { id: 'l3', amount: 200 },
          ],
        },
        postpaid: null,
      });
      expect(await balance(w.id)).toBe('85.66');
      const [debit] = await entries(w.id, 'INVOICE_CREDIT_APPLIED');
      expect(debit).toMatchObject({
        id: res.body.prepaid.transaction_id,
        type: 'DEBIT',
        transaction_status: 'COMPLETED',
        credit_amount: '14.34',
        idempotency_key: `invoice:${invoice}`,
      });
      expect(debit.description).toContain(invoice);
      const events = await h.events(w.id, 'wallet.transaction.created');
      expect(events.map((e) => e.payload.transaction.transaction_reason)).toContain('INVOICE_CREDIT_APPLIED');
      await check(w.id);
    });

    it('a FIXED wallet pays only fixed lines; an ALL wallet pays every line until its credits run out', async () => {
      const lines: Line[] = [
        { id: 'f', price_type: 'FIXED', amount: 600 },
        { id: 'u1', price_type: 'USAGE', amount: 700 },
        { id: 'u2', price_type: 'USAGE', amount: 300 },
      ];
      const c1 = await h.customer();
      const fixed = await wallet(c1, '100', { allowedPriceTypes: ['FIXED'] });
      const r1 = await allocate(invoiceId(), usd(c1, lines));
      expect(r1.body.prepaid).toMatchObject({ wallet_id: fixed.id, amount: 600, credits: '6', lines: [{ id: 'f', amount: 600 }] });

      // Balance smaller than the lines: 10 credits are worth 1000 cents.
      const c2 = await h.customer();
      const all = await wallet(c2, '10', { allowedPriceTypes: ['ALL'] });
      const r2 = await allocate(invoiceId(), usd(c2, lines));
      expect(r2.body.prepaid).toMatchObject({
        wallet_id: all.id,
        amount: 1000,
        credits: '10',
        lines: [
          { id: 'f', amount: 600 },
          { id: 'u1', amount: 400 },
        ],
      });
      expect(await balance(all.id)).toBe('0');
      await check(fixed.id, all.id);
    });

    it('rounds with conversion_rate 3 and exponent 0: applied rounds down, credits round up to 12 decimals', async () => {
      const customer = await h.customer();
      const w = await wallet(customer, '10', { currency: 'jpy', conversionRate: D('3') });
      const jpy = (lines: Line[]) => ({ customer_id: customer, currency: 'jpy', exponent: 0, lines });
      const first = await allocate(invoiceId(), jpy([{ id: 'a', price_type: 'USAGE', amount: 7 }]));
      expect(first.body.prepaid).toMatchObject({ amount: 7, credits: '2.333333333334' });
      expect(await balance(w.id)).toBe('7.666666666666');
      // 7.666666666666 credits x 3 = 22.999999999998 yen: worth 22, not 23.
      const second = await allocate(invoiceId(), jpy([{ id: 'b', price_type: 'USAGE', amount: 100 }]));
      expect(second.body.prepaid).toMatchObject({ amount: 22, credits: '7.333333333334', lines: [{ id: 'b', amount: 22 }] });
      expect(await balance(w.id)).toBe('0.333333333332');
      await check(w.id);
    });

    it('rounds with conversion_rate 3 and exponent 3', async () => {
      const customer = await h.customer();
      const w = await wallet(customer, '1', { currency: 'kwd', conversionRate: D('3') });
      const res = await allocate(invoiceId(), { customer_id: customer, currency: 'kwd', exponent: 3, lines: [{ id: 'a', price_type: 'USAGE', amount: 1001 }] });
      // 1001 / 3000 = 0.333666..., up to 0.333666666667.
      expect(res.body.prepaid).toMatchObject({ amount: 1001, credits: '0.333666666667' });
      expect(await balance(w.id)).toBe('0.666333333333');
      const all = await allocate(invoiceId(), { customer_id: customer, currency: 'kwd', exponent: 3, lines: [{ id: 'b', price_type: 'USAGE', amount: 5000 }] });
      // 0.666333333333 x 3000 = 1998.999999999: 1998 fils.
      expect(all.body.prepaid).toMatchObject({ amount: 1998, credits: '0.666' });
      await check(w.id);
    });

    it('caps the credits debited at the usable balance (the wallet never goes below zero)', async () => {
      const customer = await h.customer();
      const w = await wallet(customer, '0.333333333333333334', { currency: 'jpy', conversionRate: D('3') });
      const res = await allocate(invoiceId(), { customer_id: customer, currency: 'jpy', exponent: 0, lines: [{ id: 'a', price_type: 'USAGE', amount: 5 }] });
      // Worth floor(1.000000000000000002) = 1 yen; 1/3 up to 12 decimals is more than the balance: the balance pays.
      expect(res.body.prepaid).toMatchObject({ amount: 1, credits: '0.333333333333333334' });
      expect(await balance(w.id)).toBe('0');
      await check(w.id);
    });

    it('the POST_PAID wallet pays what the prepaid credits left on the lines it covers, as one INVOICE_PAYMENT', async () => {
      const customer = await h.customer();
      const pre = await wallet(customer, '10');
      const post = await wallet(customer, '50', { walletType: 'POST_PAID' });
      const invoice = invoiceId();
      const res = await allocate(
        invoice,
        usd(customer, [
          { id: 'f', price_type: 'FIXED', amount: 500 },
          { id: 'u', price_type: 'USAGE', amount: 1500 },
        ]),
      );
      expect(res.body.prepaid).toMatchObject({ wallet_id: pre.id, amount: 1000, lines: [{ id: 'u', amount: 1000 }] });
      expect(res.body.postpaid).toEqual({ wallet_id: post.id, transaction_id: expect.stringMatching(/^wtxn_/), credits: '10', amount: 1000 });
      const [payment] = await entries(post.id, 'INVOICE_PAYMENT');
      expect(payment).toMatchObject({ credit_amount: '10', idempotency_key: `invoice-payment:${invoice}` });
      expect(payment.description).toContain(invoice);
      expect(await balance(post.id)).toBe('40');
      await check(pre.id, post.id);
    });

    it('a POST_PAID wallet pays at most its credits, and only the line types it allows', async () => {
      const customer = await h.customer();
      const post = await wallet(customer, '3.5', { walletType: 'POST_PAID', allowedPriceTypes: ['USAGE'] });
      const res = await allocate(
        invoiceId(),
        usd(customer, [
          { id: 'f', price_type: 'FIXED', amount: 9000 },
          { id: 'u', price_type: 'USAGE', amount: 400 },
        ]),
      );
      expect(res.body).toMatchObject({ prepaid: null, postpaid: { amount: 350, credits: '3.5' } });
      const other = await h.customer();
      const postAll = await wallet(other, '100', { walletType: 'POST_PAID' });
      const all = await allocate(invoiceId(), usd(other, [{ id: 'f', price_type: 'FIXED', amount: 1 }]));
      expect(all.body.postpaid).toMatchObject({ wallet_id: postAll.id, amount: 1, credits: '0.01' });
      await check(post.id, postAll.id);
    });

    it('answers prepaid and postpaid null when no wallet applies (none, frozen, other currency, nothing allowed, zero balance)', async () => {
      const none = await allocate(invoiceId(), usd(await h.customer(), [{ id: 'u', price_type: 'USAGE', amount: 100 }]));
      expect(none.body).toMatchObject({ status: 'allocated', prepaid: null, postpaid: null });

      const customer = await h.customer();
      const frozen = await wallet(customer, '100');
      await h.service.wallets.update(META, frozen.id, { walletStatus: 'frozen' });
      const eur = await wallet(customer, '100', { walletType: 'POST_PAID', currency: 'eur' });
      const res = await allocate(invoiceId(), usd(customer, [{ id: 'u', price_type: 'USAGE', amount: 100 }]));
      expect(res.body).toMatchObject({ prepaid: null, postpaid: null });

      const c2 = await h.customer();
      const usageOnly = await wallet(c2, '100');
      const empty = await wallet(c2, '0', { walletType: 'POST_PAID' });
      const fixedOnly = await allocate(invoiceId(), usd(c2, [{ id: 'f', price_type: 'FIXED', amount: 100 }]));
      expect(fixedOnly.body).toMatchObject({ prepaid: null, postpaid: null });
      expect(await entries(usageOnly.id, 'INVOICE_CREDIT_APPLIED')).toHaveLength(0);
      await check(frozen.id, eur.id, usageOnly.id, empty.id);
    });
  });

  describe('dry run (the upcoming invoice)', () => {
    it('answers what an allocation would apply now and leaves no trace: no debit, no allocation, no event', async () => {
      const customer = await h.customer();
      const w = await wallet(customer, '10');
      const invoice = invoiceId();
      const lines: Line[] = [
        { id: 'l1', price_type: 'USAGE', amount: 700 },
        { id: 'l2', price_type: 'USAGE', amount: 700 },
      ];
      const outboxBefore = Number((await h.db('outbox').count({ n: '*' }))[0].n);
      const estimate = await allocate(invoice, { ...usd(customer, lines), dry_run: true });
      expect(estimate.status).toBe(200);
      expect(estimate.body).toMatchObject({
        invoice_id: invoice,
        status: 'allocated',
        prepaid: { wallet_id: w.id, amount: 1000, credits: '10', lines: [{ id: 'l1', amount: 700 }, { id: 'l2', amount: 300 }] },
        postpaid: null,
      });
      expect(await balance(w.id)).toBe('10');
      expect(await entries(w.id, 'INVOICE_CREDIT_APPLIED')).toHaveLength(0);
      expect(await h.db('invoice_allocations').where({ invoice_id: invoice })).toHaveLength(0);
      expect(Number((await h.db('outbox').count({ n: '*' }))[0].n)).toBe(outboxBefore);
      // The real allocation afterwards is not answered from the estimate: it debits once.
      const real = await allocate(invoice, usd(customer, lines));
      expect(real.body.prepaid).toMatchObject({ amount: 1000, credits: '10' });
      expect(await balance(w.id)).toBe('0');
      await check(w.id);
    });
  });

  describe('exactly once', () => {
    it('a second call answers the stored result and debits nothing; other lines for the invoice: 409', async () => {
      const customer = await h.customer();
      const pre = await wallet(customer, '20');
      const post = await wallet(customer, '20', { walletType: 'POST_PAID' });
      const invoice = invoiceId();
      const body = usd(customer, [{ id: 'u', price_type: 'USAGE', amount: 2500 }]);
      const first = await allocate(invoice, body);
      await h.service.entries.topup(META, pre.id, {
        credits: D('100'),
        reason: 'PURCHASED_CREDIT_DIRECT',
        expiryDate: null,
        priority: null,
        description: null,
        idempotencyKey: null,
      });
      const second = await allocate(invoice, body);
      expect(second.status).toBe(200);
      expect(second.body).toEqual(first.body);
      expect(await entries(pre.id, 'INVOICE_CREDIT_APPLIED')).toHaveLength(1);
      expect(await entries(post.id, 'INVOICE_PAYMENT')).toHaveLength(1);
      expect(await balance(pre.id)).toBe('100');
      const other = await allocate(invoice, usd(customer, [{ id: 'u', price_type: 'USAGE', amount: 2600 }]));
      expect(other.status).toBe(409);
      expect(other.body.error).toMatchObject({ internal_error: 'idempotency_conflict' });
      await check(pre.id, post.id);
    });

    it('10 concurrent calls for one invoice make one allocation: the same answer, one debit per wallet', async () => {
      const customer = await h.customer();
      const pre = await wallet(customer, '5');
      const post = await wallet(customer, '100', { walletType: 'POST_PAID' });
      const invoice = invoiceId();
      const body = usd(customer, [
        { id: 'u', price_type: 'USAGE', amount: 800 },
        { id: 'f', price_type: 'FIXED', amount: 300 },
      ]);
      const answers = await Promise.all(Array.from({ length: 10 }, () => allocate(invoice, body)));
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
      for (const a of answers) expect(a.body).toEqual(answers[0].body);
      expect(answers[0].body).toMatchObject({ prepaid: { amount: 500 }, postpaid: { amount: 600 } });
      expect(await entries(pre.id, 'INVOICE_CREDIT_APPLIED')).toHaveLength(1);
      expect(await entries(post.id, 'INVOICE_PAYMENT')).toHaveLength(1);
      expect(await balance(pre.id)).toBe('0');
      expect(await balance(post.id)).toBe('94');
      expect(await h.db('invoice_debits').where({ invoice_id: invoice })).toHaveLength(2);
      expect(await h.db('invoice_allocations').where({ invoice_id: invoice })).toHaveLength(1);
      await check(pre.id, post.id);
    });

    it('an invoice of another tenant or environment is another invoice', async () => {
      const customer = await h.customer();
      const w = await wallet(customer, '10');
      const invoice = invoiceId();
      await allocate(invoice, usd(customer, [{ id: 'u', price_type: 'USAGE', amount: 100 }]));
      const elsewhere = await api.post(`/internal/v1/invoices/${invoice}/allocation`, usd(customer, [{ id: 'u', price_type: 'USAGE', amount: 100 }]), {
        ...HEADERS,
        'x-environment-id': 'sandbox',
      });
      // The customer's wallets are invisible there: nothing applies, nothing is debited.
      expect(elsewhere.body).toMatchObject({ status: 'allocated', prepaid: null, postpaid: null });
      expect(await balance(w.id)).toBe('9');
    });
  });

  describe('refund and tombstone', () => {
    it('credits back every debit once (CREDIT_NOTE), then answers voided and debits nothing', async () => {
      const customer = await h.customer();
      const pre = await wallet(customer, '10');
      const post = await wallet(customer, '50', { walletType: 'POST_PAID' });
      const invoice = invoiceId();
      const body = usd(customer, [{ id: 'u', price_type: 'USAGE', amount: 1500 }]);
      const allocation = await allocate(invoice, body);
      const paid = await pay(invoice, { payment_id: 'pay_r1', wallet_id: post.id, customer_id: customer, currency: 'usd', exponent: 2, amount: 125 });
      expect(paid.body).toMatchObject({ status: 'paid', credits: '1.25' });
      expect(await balance(post.id)).toBe('43.75');

      const [first, second] = await Promise.all([refund(invoice), refund(invoice)]);
      expect(first.status).toBe(200);
      expect(second.body).toEqual(first.body);
      expect(first.body.refunds).toEqual([
        { wallet_id: pre.id, transaction_id: expect.stringMatching(/^wtxn_/), credits: '10', debit_transaction_id: allocation.body.prepaid.transaction_id },
        { wallet_id: post.id, transaction_id: expect.stringMatching(/^wtxn_/), credits: '5', debit_transaction_id: allocation.body.postpaid.transaction_id },
        { wallet_id: post.id, transaction_id: expect.stringMatching(/^wtxn_/), credits: '1.25', debit_transaction_id: paid.body.transaction_id },
      ]);
      expect(await balance(pre.id)).toBe('10');
      expect(await balance(post.id)).toBe('50');
      const notes = await entries(post.id, 'CREDIT_NOTE');
      expect(notes).toHaveLength(2);
      for (const n of notes) expect(n.description).toContain(invoice);
      expect(await entries(pre.id, 'CREDIT_NOTE')).toHaveLength(1);
      const third = await refund(invoice);
      expect(third.body).toEqual(first.body);
      expect(await entries(post.id, 'CREDIT_NOTE')).toHaveLength(2);

      const late = await allocate(invoice, body);
      expect(late.body).toEqual({ ...allocation.body, status: 'voided' });
      const latePayment = await pay(invoice, { payment_id: 'pay_r2', wallet_id: post.id, customer_id: customer, currency: 'usd', exponent: 2, amount: 100 });
      expect(latePayment.body).toEqual({ status: 'voided', transaction_id: null, credits: null });
      const retried = await pay(invoice, { payment_id: 'pay_r1', wallet_id: post.id, customer_id: customer, currency: 'usd', exponent: 2, amount: 125 });
      expect(retried.body.status).toBe('voided');
      expect(await balance(pre.id)).toBe('10');
      expect(await balance(post.id)).toBe('50');
      await check(pre.id, post.id);
    });

    it('a refund before any allocation tombstones the invoice: a late allocation answers voided and debits nothing', async () => {
      const customer = await h.customer();
      const w = await wallet(customer, '10');
      const invoice = invoiceId();
      const res = await refund(invoice);
      expect(res.body).toEqual({ refunds: [] });
      const late = await allocate(invoice, usd(customer, [{ id: 'u', price_type: 'USAGE', amount: 100 }]));
      expect(late.body).toEqual({ invoice_id: invoice, status: 'voided', prepaid: null, postpaid: null });
      expect(await balance(w.id)).toBe('10');
      expect(await entries(w.id, 'INVOICE_CREDIT_APPLIED')).toHaveLength(0);
    });

    it('allocations, payments and a refund racing on one invoice leave every wallet as it was', async () => {
      const customer = await h.customer();
      const pre = await wallet(customer, '10');
      const post = await wallet(customer, '10', { walletType: 'POST_PAID' });
      const invoice = invoiceId();
      const body = usd(customer, [{ id: 'u', price_type: 'USAGE', amount: 1500 }]);
      const payment = (n: number) => ({ payment_id: `pay_race_${invoice}_${n}`, wallet_id: post.id, customer_id: customer, currency: 'usd', exponent: 2, amount: 10 });
      const calls = [
        ...Array.from({ length: 5 }, () => allocate(invoice, body)),
        ...Array.from({ length: 3 }, (_, n) => pay(invoice, payment(n))),
        refund(invoice),
        ...Array.from({ length: 5 }, () => allocate(invoice, body)),
      ];
      const answers = await Promise.all(calls);
      expect(answers.map((a) => a.status)).toEqual(Array(calls.length).fill(200));
      // Whatever ran before the refund was refunded; whatever ran after it was refused.
      expect((await refund(invoice)).body.refunds.every((r: { transaction_id: string | null }) => r.transaction_id !== null)).toBe(true);
      expect(await balance(pre.id)).toBe('10');
      expect(await balance(post.id)).toBe('10');
      const late = await allocate(invoice, body);
      expect(late.body.status).toBe('voided');
      await check(pre.id, post.id);
    });

    it('skips a debit whose wallet was terminated, and says so', async () => {
      const customer = await h.customer();
      const pre = await wallet(customer, '10');
      const post = await wallet(customer, '10', { walletType: 'POST_PAID' });
      const invoice = invoiceId();
      await allocate(invoice, usd(customer, [{ id: 'u', price_type: 'USAGE', amount: 1200 }]));
      await h.service.wallets.terminate(META, pre.id);
      const res = await refund(invoice);
      expect(res.body.refunds).toEqual([
        { wallet_id: pre.id, transaction_id: null, credits: '10', debit_transaction_id: expect.any(String), skipped: true },
        { wallet_id: post.id, transaction_id: expect.stringMatching(/^wtxn_/), credits: '2', debit_transaction_id: expect.any(String) },
      ]);
      expect(await entries(pre.id, 'CREDIT_NOTE')).toHaveLength(0);
      expect(await balance(post.id)).toBe('10');
      expect((await refund(invoice)).body).toEqual(res.body);
      await check(pre.id, post.id);
    });
  });

  describe('credits payments', () => {
    it('debits amount / (rate x 10^exp) credits once per payment id; another request with the id: 409', async () => {
      const customer = await h.customer();
      const w = await wallet(customer, '10', { conversionRate: D('3') });
      const invoice = invoiceId();
      const body = { payment_id: 'pay_p1', wallet_id: w.id, customer_id: customer, currency: 'usd', exponent: 2, amount: 1000 };
      const first = await pay(invoice, body);
      expect(first.status).toBe(200);
      // 1000 cents / 300 = 3.333..., up to 3.333333333334 credits.
      expect(first.body).toEqual({ status: 'paid', transaction_id: expect.stringMatching(/^wtxn_/), credits: '3.333333333334' });
      const again = await Promise.all([pay(invoice, body), pay(invoice, body)]);
      for (const a of again) expect(a.body).toEqual(first.body);
      const [entry] = await entries(w.id, 'INVOICE_PAYMENT');
      expect(entry).toMatchObject({ id: first.body.transaction_id, idempotency_key: 'payment:pay_p1', credit_amount: '3.333333333334' });
      expect(entry.description).toContain(invoice);
      expect(await entries(w.id, 'INVOICE_PAYMENT')).toHaveLength(1);
      const conflict = await pay(invoice, { ...body, amount: 999 });
      expect(conflict.status).toBe(409);
      expect(conflict.body.error.internal_error).toBe('idempotency_conflict');
      const otherInvoice = await pay(invoiceId(), body);
      expect(otherInvoice.status).toBe(409);
      expect(await balance(w.id)).toBe('6.666666666666');
      await check(w.id);
    });

    it('refuses more than the usable credits with 400 and writes nothing', async () => {
      const customer = await h.customer();
      const w = await wallet(customer, '2.5');
      const before = await entries(w.id);
      const res = await pay(invoiceId(), { payment_id: 'pay_big', wallet_id: w.id, customer_id: customer, currency: 'usd', exponent: 2, amount: 251 });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ internal_error: 'validation_error', details: { available_credits: '2.5', available_amount: 250 } });
      expect(res.body.error.message).toMatch(/Insufficient credits/);
      expect(await entries(w.id)).toEqual(before);
      expect(await h.db('invoice_debits').where({ key: 'payment:pay_big' })).toHaveLength(0);
      const exact = await pay(invoiceId(), { payment_id: 'pay_all', wallet_id: w.id, customer_id: customer, currency: 'usd', exponent: 2, amount: 250 });
      expect(exact.body).toMatchObject({ status: 'paid', credits: '2.5' });
      expect(await balance(w.id)).toBe('0');
      await check(w.id);
    });

    it("refuses a wallet that is not the customer's (400), of another currency (400), frozen (400) or unknown (404)", async () => {
      const customer = await h.customer();
      const w = await wallet(customer, '10');
      const body = { payment_id: 'pay_x', wallet_id: w.id, customer_id: customer, currency: 'usd', exponent: 2, amount: 100 };
      const otherCustomer = await pay(invoiceId(), { ...body, customer_id: 'cust_other' });
      expect(otherCustomer.status).toBe(400);
      expect(otherCustomer.body.error.details.field).toBe('wallet_id');
      const otherCurrency = await pay(invoiceId(), { ...body, currency: 'jpy', exponent: 0 });
      expect(otherCurrency.status).toBe(400);
      const unknown = await pay(invoiceId(), { ...body, wallet_id: 'wallet_nope' });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toMatchObject({ internal_error: 'not_found', details: { field: 'wallet_id' } });
      await h.service.wallets.update(META, w.id, { walletStatus: 'frozen' });
      const frozen = await pay(invoiceId(), body);
      expect(frozen.status).toBe(400);
      expect(frozen.body.error.details.wallet_status).toBe('frozen');
      expect(await balance(w.id)).toBe('10');
      expect(await h.db('invoice_debits').where({ key: 'payment:pay_x' })).toHaveLength(0);
    });
  });

  describe('the edge', () => {
    it('refuses bad input with 400 validation_error naming the field', async () => {
      const customer = await h.customer();
      const good = usd(customer, [{ id: 'u', price_type: 'USAGE', amount: 100 }]);
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...good, extra: 1 }, 'extra'],
        [{ ...good, exponent: 3 }, 'exponent'],
        [{ ...good, lines: [{ id: 'u', price_type: 'USAGE', amount: 1.5 }] }, 'lines.0.amount'],
        [{ ...good, lines: [{ id: 'u', price_type: 'USAGE', amount: -1 }] }, 'lines.0.amount'],
        [{ ...good, lines: [{ id: 'u', price_type: 'ALL', amount: 1 }] }, 'lines.0.price_type'],
        [
          {
            ...good,
            lines: [
              { id: 'u', price_type: 'USAGE', amount: 1 },
              { id: 'u', price_type: 'FIXED', amount: 1 },
            ],
          },
          'lines.1.id',
        ],
      ];
      for (const [body, field] of cases) {
        const res = await allocate(invoiceId(), body);
        expect([res.status, res.body.error.internal_error, res.body.error.details.field]).toEqual([400, 'validation_error', field]);
      }
      const zero = await pay(invoiceId(), { payment_id: 'p', wallet_id: 'w', customer_id: customer, currency: 'usd', exponent: 2, amount: 0 });
      expect(zero.status).toBe(400);
      const refundBody = await api.post(`/internal/v1/invoices/${invoiceId()}/refund`, { all: true }, HEADERS);
      expect(refundBody.status).toBe(400);
    });

    it('needs the internal token and a tenant, like every service route', async () => {
      const res = await api.post(`/internal/v1/invoices/${invoiceId()}/refund`, {}, { 'x-tenant-id': TENANT, 'x-environment-id': ENVIRONMENT });
      expect(res.status).toBe(401);
      const noTenant = await api.post(`/internal/v1/invoices/${invoiceId()}/refund`, {}, { 'x-internal-token': INTERNAL_TOKEN });
      expect(noTenant.status).toBe(401);
    });
  });
});
