/** One file: every case runs on the one ledger harness (a migrated database and the wallet service) started in beforeAll. */
import { listen, type Listening } from '@billstream/http';
import { newUlid } from '@billstream/ids';
import { Exact } from '@billstream/money';
import { ApiClient } from '@billstream/testing';
import { ENVIRONMENT, INTERNAL_TOKEN, META, TENANT, startLedgerHarness, type LedgerHarness } from '../testing/harness';
import { assertLedgerAddsUp } from '../testing/invariants';
import type { PriceType } from '../wallets/domain';

/**
 * POST /internal/v1/invoices/allocations (ADR 0016, "Batch allocation"): many invoices in one
 * wallet transaction, each answered exactly as the single allocation endpoint answers it.
 */

const D = (v: string) => new Exact(v);
const HEADERS = { 'x-internal-token': INTERNAL_TOKEN, 'x-tenant-id': TENANT, 'x-environment-id': ENVIRONMENT };
const BATCH = '/internal/v1/invoices/allocations';

type Line = { id: string; price_type: 'USAGE' | 'FIXED'; amount: number };
type Invoice = { invoice_id: string; customer_id: string; currency: string; exponent: number; lines: Line[] };
type Answer = { invoice_id: string; status: string; prepaid: null | Record<string, unknown>; postpaid: null | Record<string, unknown> };

interface WalletSpec {
  credits: string;
  walletType?: 'PRE_PAID' | 'POST_PAID';
  currency?: string;
  conversionRate?: string;
  allowedPriceTypes?: PriceType[];
  frozen?: boolean;
}

/** Customers by name and their wallets: one world is built twice to compare a batch with single calls. */
const CUSTOMERS: Record<string, WalletSpec[]> = {
  // PRE_PAID only (USAGE lines by default).
  a: [{ credits: '30' }],
  // PRE_PAID and POST_PAID: the postpaid pays what the prepaid leaves.
  b: [{ credits: '10' }, { credits: '50', walletType: 'POST_PAID' }],
  // No wallet at all.
  c: [],
  // POST_PAID paying only usage, less than due.
  d: [{ credits: '3.5', walletType: 'POST_PAID', allowedPriceTypes: ['USAGE'] }],
  // A frozen PRE_PAID and a POST_PAID of another currency: nothing applies.
  e: [{ credits: '100', frozen: true }, { credits: '20', walletType: 'POST_PAID', currency: 'eur' }],
  // jpy, conversion rate 3, every line type: rounding chains over several invoices.
  f: [{ credits: '10', currency: 'jpy', conversionRate: '3', allowedPriceTypes: ['ALL'] }],
  // A balance whose worth rounds: the credits debited are capped at the balance.
  g: [{ credits: '0.333333333333333334', currency: 'jpy', conversionRate: '3' }],
};

/** The invoices of the world, in the order they are allocated: [customer, currency, exponent, lines]. */
const INVOICES: Array<[string, string, number, Line[]]> = [
  ['a', 'usd', 2, [{ id: 'f', price_type: 'FIXED', amount: 500 }, { id: 'u', price_type: 'USAGE', amount: 1234 }]],
  ['b', 'usd', 2, [{ id: 'f', price_type: 'FIXED', amount: 500 }, { id: 'u', price_type: 'USAGE', amount: 1500 }]],
  ['c', 'usd', 2, [{ id: 'u', price_type: 'USAGE', amount: 100 }]],
  ['f', 'jpy', 0, [{ id: 'a', price_type: 'USAGE', amount: 7 }]],
  ['a', 'usd', 2, [{ id: 'u1', price_type: 'USAGE', amount: 1000 }, { id: 'u2', price_type: 'USAGE', amount: 1000 }]],
  ['d', 'usd', 2, [{ id: 'f', price_type: 'FIXED', amount: 9000 }, { id: 'u', price_type: 'USAGE', amount: 400 }]],
  ['e', 'usd', 2, [{ id: 'u', price_type: 'USAGE', amount: 100 }]],
  ['b', 'usd', 2, [{ id: 'u', price_type: 'USAGE', amount: 3000 }]],
  ['f', 'jpy', 0, [{ id: 'b', price_type: 'FIXED', amount: 100 }]],
  ['g', 'jpy', 0, [{ id: 'a', price_type: 'USAGE', amount: 5 }]],
  ['a', 'usd', 2, [{ id: 'u', price_type: 'USAGE', amount: 1 }]],
  ['f', 'jpy', 0, [{ id: 'c', price_type: 'USAGE', amount: 1 }]],
  ['b', 'usd', 2, [{ id: 'u', price_type: 'USAGE', amount: 2000 }]],
  ['d', 'usd', 2, [{ id: 'u', price_type: 'USAGE', amount: 1 }]],
];

describe('batch allocation of invoices: POST /internal/v1/invoices/allocations (real Postgres)', () => {
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
  const batch = (invoices: Invoice[]) => api.post(BATCH, { invoices }, HEADERS);
  const allocate = (invoice: Invoice) => {
    const { invoice_id, ...body } = invoice;
    return api.post(`/internal/v1/invoices/${invoice_id}/allocation`, body, HEADERS);
  };
  const refund = (invoice: string) => api.post(`/internal/v1/invoices/${invoice}/refund`, {}, HEADERS);
  const usd = (customerId: string, lines: Line[], id = invoiceId()): Invoice => ({ invoice_id: id, customer_id: customerId, currency: 'usd', exponent: 2, lines });
  const usage = (amount: number, id = 'u'): Line[] => [{ id, price_type: 'USAGE', amount }];

  async function wallet(customerId: string, spec: WalletSpec): Promise<string> {
    const w = await h.wallet({
      customerId,
      initialCredits: Number(spec.credits) > 0 ? D(spec.credits) : null,
      ...(spec.walletType ? { walletType: spec.walletType } : {}),
      ...(spec.currency ? { currency: spec.currency } : {}),
      ...(spec.conversionRate ? { conversionRate: D(spec.conversionRate) } : {}),
      ...(spec.allowedPriceTypes ? { allowedPriceTypes: spec.allowedPriceTypes } : {}),
    });
    if (spec.frozen) await h.service.wallets.update(META, w.id, { walletStatus: 'frozen' });
    touched.push(w.id);
    return w.id;
  }
  const balance = async (walletId: string) => (await h.db('wallets').where({ id: walletId }).first()).credit_balance as string;
  const entries = (walletId: string, reason?: string) =>
    h.db('transactions').where({ wallet_id: walletId, ...(reason ? { transaction_reason: reason } : {}) }).orderBy('ledger_seq');
  const check = async (...walletIds: string[]) => {
    for (const id of walletIds) await assertLedgerAddsUp(h.db, id, h.clock.now());
  };
  const count = async (table: string, where: Record<string, unknown> = {}) => Number((await h.db(table).where(where).count({ n: '*' }))[0].n);
  const allocationRows = (ids: string[]) => h.db('invoice_allocations').whereIn('invoice_id', ids);
  const debitRows = (ids: string[]) => h.db('invoice_debits').whereIn('invoice_id', ids);

  /** A copy of CUSTOMERS: customer ids and wallet ids by name (`b.1` is b's second wallet). */
  async function world(): Promise<{ customers: Record<string, string>; wallets: Record<string, string> }> {
    const customers: Record<string, string> = {};
    const wallets: Record<string, string> = {};
    for (const [name, specs] of Object.entries(CUSTOMERS)) {
      customers[name] = await h.customer();
      for (const [i, spec] of specs.entries()) wallets[`${name}.${i}`] = await wallet(customers[name], spec);
    }
    return { customers, wallets };
  }
  const invoicesOf = (customers: Record<string, string>): Invoice[] =>
    INVOICES.map(([name, currency, exponent, lines]) => ({ invoice_id: invoiceId(), customer_id: customers[name], currency, exponent, lines }));

  /**
   * What a world's allocations and wallets look like with its own ids replaced by names
   * (customers, wallets, invoices by index) and each transaction id by the entry it names:
   * two worlds that did the same are equal.
   */
  async function snapshot(w: { customers: Record<string, string>; wallets: Record<string, string> }, invoices: Invoice[], answers: Answer[]) {
    const names = new Map<string, string>([
      ...Object.entries(w.customers).map(([n, id]) => [id, `customer:${n}`] as [string, string]),
      ...Object.entries(w.wallets).map(([n, id]) => [id, `wallet:${n}`] as [string, string]),
      ...invoices.map((inv, i) => [inv.invoice_id, `invoice:${i}`] as [string, string]),
    ]);
    const rename = (text: string | null) => (text === null ? null : [...names].reduce((t, [id, n]) => t.split(id).join(n), text));
    const ledgers: Record<string, unknown[]> = {};
    const events: Record<string, unknown[]> = {};
    const entryName = new Map<string, string>();
    for (const [n, id] of Object.entries(w.wallets)) {
      const rows = await entries(id);
      for (const r of rows) entryName.set(r.id, `entry:${n}#${r.ledger_seq ?? r.id}`);
      ledgers[n] = rows.map((r) => ({
        type: r.type,
        reason: r.transaction_reason,
        status: r.transaction_status,
        credits: r.credit_amount,
        amount: r.amount,
        before: r.credit_balance_before,
        after: r.credit_balance_after,
        available: r.credits_available,
        seq: r.ledger_seq,
        key: rename(r.idempotency_key),
        description: rename(r.description),
      }));
      ledgers[`${n}:balance`] = [await balance(id)];
      events[n] = (await h.events(id)).map((e) => ({
        type: e.type,
        reason: e.payload.transaction?.transaction_reason ?? null,
        credits: e.payload.transaction?.credit_amount ?? null,
        balance: e.payload.transaction?.credit_balance_after ?? e.payload.wallet?.credit_balance ?? null,
      }));
    }
    const part = (p: Record<string, unknown> | null) =>
      p && { ...p, wallet_id: rename(p.wallet_id as string), transaction_id: entryName.get(p.transaction_id as string) ?? `unknown ${p.transaction_id}` };
    const allocations = answers.map((a) => ({ ...a, invoice_id: rename(a.invoice_id), prepaid: part(a.prepaid), postpaid: part(a.postpaid) }));
    const ids = invoices.map((i) => i.invoice_id);
    // The hash covers the customer id, which differs between worlds: its equality shows as no 409 on a repeat (below).
    const stored = (await allocationRows(ids)).map((r) => ({ invoice: rename(r.invoice_id), status: r.status, hashed: /^[0-9a-f]{64}$/.test(r.request_hash) }));
    const debits = (await debitRows(ids)).map((r) => ({
      invoice: rename(r.invoice_id),
      key: rename(r.key),
      wallet: rename(r.wallet_id),
      transaction: entryName.get(r.transaction_id),
      credits: r.credits,
      amount: r.amount,
    }));
    const byInvoice = (a: { invoice: string | null }, b: { invoice: string | null }) => String(a.invoice).localeCompare(String(b.invoice));
    return { allocations, ledgers, events, stored: stored.sort(byInvoice), debits: debits.sort((a, b) => byInvoice(a, b) || a.key!.localeCompare(b.key!)) };
  }

  describe('answers and effects', () => {
    it('a batch across customers with and without wallets answers and writes exactly what single calls in the same order do', async () => {
      const batched = await world();
      const single = await world();
      const batchInvoices = invoicesOf(batched.customers);
      const singleInvoices = invoicesOf(single.customers);

      const res = await batch(batchInvoices);
      expect(res.status).toBe(200);
      expect(res.body.allocations.map((a: Answer) => a.invoice_id)).toEqual(batchInvoices.map((i) => i.invoice_id));
      const singles: Answer[] = [];
      for (const invoice of singleInvoices) {
        const one = await allocate(invoice);
        expect(one.status).toBe(200);
        singles.push(one.body);
      }
      const got = await snapshot(batched, batchInvoices, res.body.allocations);
      const want = await snapshot(single, singleInvoices, singles);
      expect(got).toEqual(want);

      // The figures themselves (what the single endpoint's rules give), for the reader.
      const [a1, b1, c1, f1, a2, d1, e1, b2, f2, g1, a3, f3] = res.body.allocations as Answer[];
      expect(a1).toMatchObject({ status: 'allocated', prepaid: { amount: 1234, credits: '12.34', lines: [{ id: 'u', amount: 1234 }] }, postpaid: null });
      expect(b1).toMatchObject({ prepaid: { amount: 1000, credits: '10' }, postpaid: { amount: 1000, credits: '10' } });
      expect(c1).toEqual({ invoice_id: batchInvoices[2].invoice_id, status: 'allocated', prepaid: null, postpaid: null });
      expect(f1).toMatchObject({ prepaid: { amount: 7, credits: '2.333333333334' } });
      // a has 17.66 credits left after its first invoice: 1000 + 766.
      expect(a2).toMatchObject({ prepaid: { amount: 1766, credits: '17.66', lines: [{ id: 'u1', amount: 1000 }, { id: 'u2', amount: 766 }] } });
      expect(d1).toMatchObject({ prepaid: null, postpaid: { amount: 350, credits: '3.5' } });
      expect(e1).toMatchObject({ prepaid: null, postpaid: null });
      // b's prepaid is empty: its postpaid (40 left) pays 3000 cents of usage.
      expect(b2).toMatchObject({ prepaid: null, postpaid: { amount: 3000, credits: '30' } });
      // f: 7.666666666666 credits x 3 = 22.999999999998 yen, worth 22.
      expect(f2).toMatchObject({ prepaid: { amount: 22, credits: '7.333333333334', lines: [{ id: 'b', amount: 22 }] } });
      expect(g1).toMatchObject({ prepaid: { amount: 1, credits: '0.333333333333333334' } });
      expect(a3).toMatchObject({ prepaid: null, postpaid: null });
      // f's 0.333333333332 credits are worth 0 yen: nothing applied.
      expect(f3).toMatchObject({ prepaid: null, postpaid: null });
      expect(await balance(batched.wallets['f.0'])).toBe('0.333333333332');
      await check(...Object.values(batched.wallets), ...Object.values(single.wallets));
    });

    it('a batch of one is indistinguishable from the single call: the same answer, rows and events', async () => {
      const batched = await world();
      const single = await world();
      const pick = (customers: Record<string, string>) => [usd(customers.b, [{ id: 'f', price_type: 'FIXED', amount: 500 }, ...usage(1500)])];
      const batchInvoices = pick(batched.customers);
      const singleInvoices = pick(single.customers);
      const res = await batch(batchInvoices);
      expect(res.status).toBe(200);
      const one = await allocate(singleInvoices[0]);
      expect(await snapshot(batched, batchInvoices, res.body.allocations)).toEqual(await snapshot(single, singleInvoices, [one.body]));
      // And the single endpoint answers the batch's invoice with the batch's answer (and vice versa).
      expect((await allocate(batchInvoices[0])).body).toEqual(res.body.allocations[0]);
      expect((await batch(singleInvoices)).body).toEqual({ allocations: [one.body] });
      expect(await count('invoice_debits', { invoice_id: batchInvoices[0].invoice_id })).toBe(2);
      await check(...Object.values(batched.wallets), ...Object.values(single.wallets));
    });

    it('several invoices of one customer chain through one balance and never take more than the rules allow', async () => {
      const customer = await h.customer();
      const pre = await wallet(customer, { credits: '10' });
      const post = await wallet(customer, { credits: '5', walletType: 'POST_PAID' });
      const invoices = [usd(customer, usage(400)), usd(customer, usage(400)), usd(customer, usage(400)), usd(customer, usage(400)), usd(customer, usage(400))];
      const res = await batch(invoices);
      expect(res.status).toBe(200);
      const parts = (res.body.allocations as Answer[]).map((a) => [a.prepaid?.amount ?? 0, a.postpaid?.amount ?? 0]);
      // 1000 cents of prepaid credits, then 500 of postpaid, in request order.
      expect(parts).toEqual([
        [400, 0],
        [400, 0],
        [200, 200],
        [0, 300],
        [0, 0],
      ]);
      expect(await balance(pre)).toBe('0');
      expect(await balance(post)).toBe('0');
      const applied = await entries(pre, 'INVOICE_CREDIT_APPLIED');
      expect(applied.map((e) => [e.credit_balance_before, e.credit_balance_after, e.idempotency_key])).toEqual([
        ['10', '6', `invoice:${invoices[0].invoice_id}`],
        ['6', '2', `invoice:${invoices[1].invoice_id}`],
        ['2', '0', `invoice:${invoices[2].invoice_id}`],
      ]);
      const paid = await entries(post, 'INVOICE_PAYMENT');
      expect(paid.map((e) => [e.credit_balance_before, e.credit_balance_after, e.idempotency_key])).toEqual([
        ['5', '3', `invoice-payment:${invoices[2].invoice_id}`],
        ['3', '0', `invoice-payment:${invoices[3].invoice_id}`],
      ]);
      const events = await h.events(pre, 'wallet.transaction.created');
      expect(events.filter((e) => e.payload.transaction.transaction_reason === 'INVOICE_CREDIT_APPLIED').map((e) => e.payload.transaction.credit_balance_after)).toEqual([
        '6',
        '2',
        '0',
      ]);
      await check(pre, post);
    });

    it('a refunded (tombstoned) invoice in a batch answers voided and takes nothing; the others are allocated', async () => {
      const customer = await h.customer();
      const w = await wallet(customer, { credits: '10' });
      const voided = usd(customer, usage(300));
      expect((await refund(voided.invoice_id)).status).toBe(200);
      const other = usd(customer, usage(300));
      const res = await batch([voided, other]);
      expect(res.body.allocations).toEqual([
        { invoice_id: voided.invoice_id, status: 'voided', prepaid: null, postpaid: null },
        expect.objectContaining({ invoice_id: other.invoice_id, status: 'allocated', prepaid: expect.objectContaining({ amount: 300 }) }),
      ]);
      expect(await balance(w)).toBe('7');
      await check(w);
    });
  });

  describe('exactly once', () => {
    it('a repeated batch answers the same and debits nothing, even after the balance changed', async () => {
      const customer = await h.customer();
      const pre = await wallet(customer, { credits: '20' });
      const post = await wallet(customer, { credits: '20', walletType: 'POST_PAID' });
      const nobody = await h.customer();
      const invoices = [usd(customer, usage(1500)), usd(nobody, usage(100)), usd(customer, usage(1500))];
      const first = await batch(invoices);
      expect(first.status).toBe(200);
      await h.service.entries.topup(META, pre, {
        credits: D('100'),
        reason: 'PURCHASED_CREDIT_DIRECT',
        expiryDate: null,
        priority: null,
        description: null,
        idempotencyKey: null,
      });
      const outbox = await count('outbox');
      const again = await batch(invoices);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      expect(await count('outbox')).toBe(outbox);
      expect(await entries(pre, 'INVOICE_CREDIT_APPLIED')).toHaveLength(2);
      expect(await entries(post, 'INVOICE_PAYMENT')).toHaveLength(1);
      expect(await balance(pre)).toBe('100');
      expect(await balance(post)).toBe('10');
      // In another order, the stored answers follow the request's order.
      const reordered = await batch([invoices[2], invoices[0], invoices[1]]);
      expect(reordered.body.allocations).toEqual([first.body.allocations[2], first.body.allocations[0], first.body.allocations[1]]);
      expect(await count('invoice_debits', { invoice_id: invoices[0].invoice_id })).toBe(1);
      await check(pre, post);
    });

    it('a batch overlapping invoices allocated singly answers their stored results and allocates only the others', async () => {
      const customer = await h.customer();
      const w = await wallet(customer, { credits: '10' });
      const [a, b, c, d] = [usd(customer, usage(200)), usd(customer, usage(300)), usd(customer, usage(100)), usd(customer, usage(1000))];
      const singleA = await allocate(a);
      const singleB = await allocate(b);
      expect(await balance(w)).toBe('5');
      const res = await batch([a, c, b, d]);
      expect(res.status).toBe(200);
      const [ra, rc, rb, rd] = res.body.allocations as Answer[];
      expect(ra).toEqual(singleA.body);
      expect(rb).toEqual(singleB.body);
      expect(rc.prepaid).toMatchObject({ amount: 100, credits: '1' });
      expect(rd.prepaid).toMatchObject({ amount: 400, credits: '4' });
      expect(await balance(w)).toBe('0');
      expect(await entries(w, 'INVOICE_CREDIT_APPLIED')).toHaveLength(4);
      // A single call after the batch answers the batch's stored result.
      expect((await allocate(c)).body).toEqual(rc);
      expect((await allocate(d)).body).toEqual(rd);
      expect(await entries(w, 'INVOICE_CREDIT_APPLIED')).toHaveLength(4);
      await check(w);
    });

    it('an invoice allocated with another request refuses the whole batch with 409 naming it, and nothing is written', async () => {
      const customer = await h.customer();
      const w = await wallet(customer, { credits: '10' });
      const allocated = usd(customer, usage(200));
      await allocate(allocated);
      const fresh = usd(customer, usage(300));
      const otherFresh = usd(await h.customer(), usage(300));
      const before = { entries: await entries(w), outbox: await count('outbox'), allocations: await count('invoice_allocations'), debits: await count('invoice_debits') };
      const res = await batch([fresh, { ...allocated, lines: usage(201) }, otherFresh]);
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({
        internal_error: 'idempotency_conflict',
        details: { invoice_id: allocated.invoice_id, field: 'invoices.1.lines' },
      });
      // Another customer or currency for the invoice is another request too.
      const otherCustomer = await batch([fresh, { ...allocated, customer_id: otherFresh.customer_id }]);
      expect([otherCustomer.status, otherCustomer.body.error.details.invoice_id]).toEqual([409, allocated.invoice_id]);
      expect(await entries(w)).toEqual(before.entries);
      expect(await balance(w)).toBe('8');
      expect(await count('outbox')).toBe(before.outbox);
      expect(await count('invoice_allocations')).toBe(before.allocations);
      expect(await count('invoice_debits')).toBe(before.debits);
      expect(await allocationRows([fresh.invoice_id, otherFresh.invoice_id])).toHaveLength(0);
      // The same batch with the original request goes through.
      const ok = await batch([fresh, allocated, otherFresh]);
      expect(ok.status).toBe(200);
      expect(await balance(w)).toBe('5');
      await check(w);
    });

    it('a batch and single calls racing on the same invoices debit each invoice once and answer alike', async () => {
      for (let round = 0; round < 5; round += 1) {
        const customer = await h.customer();
        const pre = await wallet(customer, { credits: '5' });
        const post = await wallet(customer, { credits: '100', walletType: 'POST_PAID' });
        const invoices = [usd(customer, [...usage(800), { id: 'f', price_type: 'FIXED', amount: 300 }]), usd(customer, usage(700)), usd(customer, usage(50))];
        const [batched, ...singles] = await Promise.all([batch(invoices), allocate(invoices[0]), allocate(invoices[2]), allocate(invoices[0])]);
        expect([batched.status, ...singles.map((s) => s.status)]).toEqual([200, 200, 200, 200]);
        expect(singles[0].body).toEqual(batched.body.allocations[0]);
        expect(singles[1].body).toEqual(batched.body.allocations[2]);
        expect(singles[2].body).toEqual(batched.body.allocations[0]);
        for (const invoice of invoices) {
          expect(await allocationRows([invoice.invoice_id])).toHaveLength(1);
          const ledgerDebits = await h.db('transactions').whereIn('idempotency_key', [`invoice:${invoice.invoice_id}`, `invoice-payment:${invoice.invoice_id}`]);
          expect(ledgerDebits.length).toBeGreaterThan(0);
          expect(ledgerDebits.length).toBe(await count('invoice_debits', { invoice_id: invoice.invoice_id }));
        }
        // 500 + 600 + 700 + 50 cents due; 500 of prepaid credits, the rest postpaid.
        expect(await balance(pre)).toBe('0');
        expect(await balance(post)).toBe('86.5');
        await check(pre, post);
      }
    });

    it('concurrent overlapping batches over shared wallets neither deadlock nor debit an invoice twice', async () => {
      const customers = await Promise.all(Array.from({ length: 4 }, () => h.customer()));
      const wallets: string[] = [];
      for (const c of customers) {
        wallets.push(await wallet(c, { credits: '50' }));
        wallets.push(await wallet(c, { credits: '50', walletType: 'POST_PAID' }));
      }
      const invoices = Array.from({ length: 24 }, (_, i) => usd(customers[i % 4], usage(100 + i * 37)));
      // Four batches, each a different overlapping slice in a different order.
      const slices = [invoices.slice(0, 14), invoices.slice(6, 20).reverse(), invoices.slice(10).concat(invoices.slice(0, 4)), [...invoices].sort((x, y) => y.invoice_id.localeCompare(x.invoice_id)).slice(0, 12)];
      const answers = await Promise.all(slices.map((s) => batch(s)));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
      const byInvoice = new Map<string, Answer>();
      for (const [i, a] of answers.entries()) {
        expect(a.body.allocations.map((x: Answer) => x.invoice_id)).toEqual(slices[i].map((s) => s.invoice_id));
        for (const x of a.body.allocations as Answer[]) {
          if (byInvoice.has(x.invoice_id)) expect(x).toEqual(byInvoice.get(x.invoice_id));
          else byInvoice.set(x.invoice_id, x);
        }
      }
      expect(byInvoice.size).toBe(invoices.length);
      const ids = invoices.map((i) => i.invoice_id);
      expect(await allocationRows(ids)).toHaveLength(invoices.length);
      // 100 credits per customer cover every invoice (at most 8.51 + ... of each), so each invoice took its whole due, once.
      const debits = await debitRows(ids);
      const debited = new Map<string, number>();
      for (const d of debits) debited.set(d.invoice_id, (debited.get(d.invoice_id) ?? 0) + Number(d.amount));
      for (const inv of invoices) expect(debited.get(inv.invoice_id)).toBe(inv.lines[0].amount);
      const keys = (await h.db('transactions').whereIn('wallet_id', wallets).whereNotNull('idempotency_key').select('idempotency_key')).map((r) => r.idempotency_key);
      expect(new Set(keys).size).toBe(keys.length);
      await check(...wallets);
    });
  });

  describe('size', () => {
    it('takes 500 invoices of 100 customers in one call (a body above 1 MiB) and answers them in order', async () => {
      const customers = await Promise.all(Array.from({ length: 100 }, () => h.customer()));
      const wallets: string[] = [];
      for (const c of customers.slice(0, 50)) wallets.push(await wallet(c, { credits: '1000', allowedPriceTypes: ['ALL'] }));
      // 20 lines with long ids per invoice: about 2.4 MiB of JSON.
      const lines = Array.from({ length: 20 }, (_, i): Line => ({ id: `line_${i}_${'x'.repeat(200)}`, price_type: i % 2 ? 'USAGE' : 'FIXED', amount: 100 }));
      const invoices = Array.from({ length: 500 }, (_, i) => usd(customers[i % 100], lines));
      expect(JSON.stringify({ invoices }).length).toBeGreaterThan(2 * 1024 * 1024);
      const res = await batch(invoices);
      expect(res.status).toBe(200);
      expect(res.body.allocations.map((a: Answer) => a.invoice_id)).toEqual(invoices.map((i) => i.invoice_id));
      // Each wallet's customer has 5 invoices of 2000 cents: 100 credits of its 1000.
      for (const w of wallets) expect(await balance(w)).toBe('900');
      expect(res.body.allocations.filter((a: Answer) => a.prepaid !== null)).toHaveLength(250);
      expect(await allocationRows(invoices.map((i) => i.invoice_id))).toHaveLength(500);
      await check(...wallets);
    });
  });

  describe('statements', () => {
    /** The statements of the allocation transactions the call makes (BEGIN and COMMIT left out; not the outbox relay's). */
    async function statementsOf(call: () => Promise<unknown>): Promise<string[][]> {
      const byTransaction = new Map<string, string[]>();
      const listener = (q: { sql: string; __knexTxId?: string }) => {
        if (!q.__knexTxId || /^(BEGIN|COMMIT|ROLLBACK)/.test(q.sql)) return;
        byTransaction.set(q.__knexTxId, [...(byTransaction.get(q.__knexTxId) ?? []), q.sql]);
      };
      h.db.on('query', listener);
      try {
        await call();
      } finally {
        h.db.off('query', listener);
      }
      return [...byTransaction.values()].filter((sqls) => sqls.some((sql) => /invoice_allocations/.test(sql)));
    }

    it('one transaction of 8 statements whatever the batch holds: locks, reads, one lock of the wallets, one save, two inserts', async () => {
      const customers = await Promise.all(Array.from({ length: 5 }, () => h.customer()));
      const wallets: string[] = [];
      for (const c of customers) {
        wallets.push(await wallet(c, { credits: '20', allowedPriceTypes: ['ALL'] }));
        wallets.push(await wallet(c, { credits: '20', walletType: 'POST_PAID' }));
      }
      // 40 invoices, 8 per customer: the prepaid wallets run dry half way, the postpaid ones pay the rest.
      const many = Array.from({ length: 40 }, (_, i) => usd(customers[i % 5], [...usage(300), { id: 'f', price_type: 'FIXED', amount: 200 }]));
      const bigCalls = await statementsOf(() => batch(many));
      const lone = await h.customer();
      wallets.push(await wallet(lone, { credits: '1' }), await wallet(lone, { credits: '1', walletType: 'POST_PAID' }));
      const smallCalls = await statementsOf(() => batch([usd(lone, usage(200))]));
      expect([bigCalls.length, smallCalls.length]).toEqual([1, 1]);
      const [big, small] = [bigCalls[0], smallCalls[0]];
      expect(big.map((sql) => sql.slice(0, 40))).toEqual(small.map((sql) => sql.slice(0, 40)));
      expect(big).toHaveLength(8);
      expect(big[0]).toMatch(/pg_advisory_xact_lock/);
      expect(big[3]).toMatch(/FOR UPDATE OF w/);
      // Per customer 8 invoices x 500 cents = 40 credits: 20 prepaid + 20 postpaid, all spent (the lone one: 1 + 1).
      for (const w of wallets) expect(await balance(w)).toBe('0');
      expect(await count('invoice_debits', { invoice_id: many[39].invoice_id })).toBe(1);
      await check(...wallets);
    });
  });

  describe('the edge', () => {
    it('refuses bad bodies with 400 validation_error naming the field, and writes nothing', async () => {
      const customer = await h.customer();
      const w = await wallet(customer, { credits: '10' });
      const good = usd(customer, usage(100));
      const before = await count('invoice_allocations');
      const cases: Array<[unknown, string]> = [
        [{}, 'invoices'],
        [{ invoices: [] }, 'invoices'],
        [{ invoices: Array.from({ length: 501 }, () => usd(customer, usage(1))) }, 'invoices'],
        [{ invoices: [good, usd(customer, usage(1), good.invoice_id)] }, 'invoices.1.invoice_id'],
        [{ invoices: [good, { ...usd(customer, usage(1)), exponent: 3 }] }, 'invoices.1.exponent'],
        [{ invoices: [{ ...good, exponent: 7 }] }, 'invoices.0.exponent'],
        [{ invoices: [{ ...good, currency: 'usdx' }] }, 'invoices.0.currency'],
        [{ invoices: [{ ...good, invoice_id: '' }] }, 'invoices.0.invoice_id'],
        [{ invoices: [{ ...good, dry_run: true }] }, 'invoices.0.dry_run'],
        [{ invoices: [{ ...good, lines: [{ id: 'u', price_type: 'USAGE', amount: 1.5 }] }] }, 'invoices.0.lines.0.amount'],
        [{ invoices: [{ ...good, lines: [...usage(1), ...usage(2)] }] }, 'invoices.0.lines.1.id'],
        [{ invoices: [good], extra: 1 }, 'extra'],
      ];
      for (const [body, field] of cases) {
        const res = await api.post(BATCH, body, HEADERS);
        expect([field, res.status, res.body.error.internal_error, res.body.error.details.field]).toEqual([field, 400, 'validation_error', field]);
      }
      const notJson = await api.post(BATCH, '{"invoices": [', HEADERS);
      expect(notJson.status).toBe(400);
      expect(await count('invoice_allocations')).toBe(before);
      expect(await balance(w)).toBe('10');
    });

    it('refuses a body above 5 MiB with 413', async () => {
      const customer = await h.customer();
      const lines = Array.from({ length: 100 }, (_, i): Line => ({ id: `line_${i}_${'x'.repeat(200)}`, price_type: 'USAGE', amount: 1 }));
      const res = await batch(Array.from({ length: 250 }, () => usd(customer, lines)));
      expect([res.status, res.body.error.internal_error]).toEqual([413, 'validation_error']);
    });

    it('needs the internal token and a tenant, like every service route', async () => {
      const body = { invoices: [usd(await h.customer(), usage(1))] };
      const noToken = await api.post(BATCH, body, { 'x-tenant-id': TENANT, 'x-environment-id': ENVIRONMENT });
      expect([noToken.status, noToken.body.error.internal_error]).toEqual([401, 'permission_denied']);
      const wrongToken = await api.post(BATCH, body, { ...HEADERS, 'x-internal-token': 'nope' });
      expect(wrongToken.status).toBe(401);
      const noTenant = await api.post(BATCH, body, { 'x-internal-token': INTERNAL_TOKEN });
      expect(noTenant.status).toBe(401);
      expect(await allocationRows([body.invoices[0].invoice_id])).toHaveLength(0);
    });
  });
});
