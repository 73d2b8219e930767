import { createDb, type Db } from '@billstream/db';
import { waitFor } from '@billstream/testing';
import { isoZ, monthStart } from '../../support/clock';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { taxedInvoiceHelpers, type TaxedInvoice } from './taxes-invoices';

/**
 * Tax where usage is billed before its period ends (docs/api/taxes.md#unbilled-usage-and-the-real-time-balance,
 * #invoices-bearing-tax) as a client meets it: through the gateway on real Postgres and Kafka, in
 * the `taxes-invoices` environment with taxes on (19 % for German addresses, reverse charge for EU
 * buyers with a VAT id). The usage price bills 0.50 usd a call. The real-time balance takes off
 * what the wallet would pay for the unbilled usage: its lines with the exclusive tax they would
 * bear; an inclusive price holds its tax, a reverse-charged buyer bears none. A threshold invoice
 * and a commitment's true-up on the closing invoice are taxed like any line.
 */
const ENV = { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0', BILLING_FINALIZE_DELAY_MS: '0', UNBILLED_SWEEP_MS: '0', UNBILLED_DEBOUNCE_MS: '100' };

describe('tax in unbilled usage, the real-time balance, threshold invoices and true-ups (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let db: Db;
  let t: Awaited<ReturnType<typeof taxedInvoiceHelpers>>;
  let meterId: string;
  let n = 0;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: ENV } });
    db = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    t = await taxedInvoiceHelpers(stack, db);
    await t.rate('USE_DE_19', '19', { country: 'DE' });
    await t.settings({ enabled: true, rounding: 'LINE', reverse_charge: { enabled: true, seller_country: 'DE' } });
    const meter = await t.api.post('/v1/meters', { name: 'taxed calls', event_name: 'taxed_call', aggregation: { type: 'COUNT' } });
    expect(meter.status).toBe(201);
    meterId = meter.body.id;
  });
  afterAll(async () => {
    await db?.destroy();
    await stack?.stop();
  });

  const usage = (extra: Record<string, unknown> = {}) => ({ type: 'USAGE', currency: 'usd', amount: '0.5', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', meter_id: meterId, ...extra });
  const fixed = (amount: string) => ({ type: 'FIXED', currency: 'usd', amount, billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' });
  /** A customer of `body` (its external id answered too) with a 100 usd wallet paying everything. */
  async function buyer(body: Record<string, unknown>): Promise<{ id: string; externalId: string; walletId: string }> {
    const externalId = `taxed-use-${++n}-${Date.now()}`;
    const res = await t.api.post('/v1/customers', { external_customer_id: externalId, ...body });
    expect(res.status).toBe(201);
    return { id: res.body.id, externalId, walletId: await t.wallet(res.body.id, '100') };
  }
  async function subscribe(customerId: string, prices: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): Promise<string> {
    const plan = await t.api.post('/v1/plans', { name: `Taxed usage ${n}`, prices });
    expect(plan.status).toBe(201);
    const sub = await t.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: plan.body.id, ...extra });
    expect(sub.status).toBe(201);
    return sub.body.id;
  }
  let sent = 0;
  async function calls(externalId: string, count: number, at = new Date().toISOString()): Promise<void> {
    const events = Array.from({ length: count }, () => ({ event_name: 'taxed_call', external_customer_id: externalId, timestamp: at, event_id: `taxed-use-${++sent}-${Date.now()}` }));
    expect((await t.api.post('/v1/events/bulk', { events })).status).toBe(202);
  }
  const realTime = async (walletId: string) => {
    const res = await t.api.get(`/v1/wallets/${walletId}/balance?include_real_time_balance=true`);
    expect(res.status).toBe(200);
    return res.body as { balance: string; real_time_balance: string; real_time_credit_balance: string; unbilled_usage: number };
  };
  async function shows(walletId: string, unbilled: number): Promise<void> {
    let last: unknown;
    await waitFor(async () => ((last = await realTime(walletId)) as { unbilled_usage: number }).unbilled_usage === unbilled, {
      timeoutMs: 20_000,
      intervalMs: 50,
      what: `unbilled_usage ${unbilled} (last ${JSON.stringify(last)})`,
    });
  }
  type Invoice = Omit<TaxedInvoice, 'line_items'> & { line_items: Array<TaxedInvoice['line_items'][number] & { line_type: string }> };
  const invoicesOf = async (subscriptionId: string): Promise<Invoice[]> => (await t.api.get(`/v1/invoices?subscription_id=${subscriptionId}&limit=100`)).body.items;

  it('takes the unbilled usage off the real-time balance with the exclusive tax it would bear; the upcoming invoice agrees', async () => {
    const c = await buyer({ address_country: 'DE' });
    const sub = await subscribe(c.id, [usage()]);
    await calls(c.externalId, 10);
    // 10 calls: 500 + 19 % = 595, what the wallet would pay for them.
    await shows(c.walletId, 595);
    expect(await realTime(c.walletId)).toMatchObject({ balance: '100', real_time_balance: '94.05', real_time_credit_balance: '94.05', unbilled_usage: 595 });
    const upcoming = (await t.api.get(`/v1/subscriptions/${sub}/upcoming-invoice`)).body as TaxedInvoice;
    expect(upcoming.line_items.map((l) => [l.amount, l.tax_behavior, l.tax_amount])).toEqual([[500, 'exclusive', 95]]);
    // The upcoming invoice's total is after the credits the wallet would apply: they pay the line with its tax.
    expect(upcoming).toMatchObject({ subtotal: 500, total_tax: 95, total_prepaid_credits_applied: 595, total: 0 });
    await calls(c.externalId, 1);
    // 550 + round(104.5) = 655.
    await shows(c.walletId, 655);
  });

  it('counts an inclusive price as it bills (its tax is inside), and a reverse-charged buyer bears none', async () => {
    const inclusive = await buyer({ address_country: 'DE' });
    await subscribe(inclusive.id, [usage({ tax_behavior: 'inclusive' })]);
    const reverse = await buyer({ address_country: 'GR', tax_ids: [{ type: 'eu_vat', value: 'EL094259216' }] });
    await subscribe(reverse.id, [usage()]);
    await calls(inclusive.externalId, 10);
    await calls(reverse.externalId, 10);
    await shows(inclusive.walletId, 500);
    await shows(reverse.walletId, 500);
    for (const w of [inclusive.walletId, reverse.walletId]) expect(await realTime(w)).toMatchObject({ balance: '100', real_time_balance: '95', unbilled_usage: 500 });
  });

  it('counts an ended period through its taxed draft until the wallet pays it with its tax at finalization', async () => {
    const c = await buyer({ address_country: 'DE' });
    // 4 calls last month, before the subscription that bills them starts there: its draft closes at once.
    await calls(c.externalId, 4, new Date(monthStart(-1) + 86_400_000).toISOString());
    await waitFor(
      async () => (await t.api.post(`/v1/meters/${meterId}/usage`, { external_customer_id: c.externalId, start_time: isoZ(monthStart(-1)), end_time: isoZ(monthStart(1)) })).body.value === '4',
      { timeoutMs: 20_000, what: 'last month usage' },
    );
    const sub = await subscribe(c.id, [usage()], { start_date: isoZ(monthStart(-1)) });
    const [draft] = await invoicesOf(sub);
    expect(draft).toMatchObject({ status: 'draft', subtotal: 200, total_tax: 38, total: 238 });
    await calls(c.externalId, 2);
    // The draft's 238 and this month's 100 + 19.
    await shows(c.walletId, 238 + 119);
    const paid = await t.finalize(draft!.id);
    expect(paid).toMatchObject({ status: 'paid', total_prepaid_credits_applied: 238, total_tax: 38 });
    expect(await realTime(c.walletId)).toMatchObject({ balance: '97.62', unbilled_usage: 119, real_time_balance: '96.43' });
  });

  it('taxes a threshold invoice, and deducts what it billed before tax on the closing invoice, which is taxed on the rest', async () => {
    const c = await buyer({ address_country: 'DE' });
    const sub = await subscribe(c.id, [usage()], { usage_thresholds: [{ amount: 1000 }] });
    await calls(c.externalId, 24);
    // 24 calls: 1200 crosses 1000; the usage notice's check makes the invoice.
    const threshold = await waitFor(async () => (await invoicesOf(sub)).find((i) => i.billing_reason === 'SUBSCRIPTION_THRESHOLD'), { timeoutMs: 20_000, what: 'a threshold invoice' });
    expect(threshold.line_items.map((l) => [l.amount, l.tax_amount, l.taxes.map((x) => x.code)])).toEqual([[1200, 228, ['USE_DE_19']]]);
    expect(threshold).toMatchObject({ subtotal: 1200, total_tax: 228 });
    t.adds(threshold);
    const paid = await t.finalize(threshold.id);
    expect(paid).toMatchObject({ status: 'paid', total_prepaid_credits_applied: 1428, total_tax: 228 });
    // Billed, it is no longer unbilled: nothing open until more calls.
    await calls(c.externalId, 2);
    await shows(c.walletId, 119);
    expect((await t.api.post(`/v1/subscriptions/${sub}/cancel`, {})).status).toBe(200);
    const closing = (await invoicesOf(sub)).find((i) => i.billing_reason === 'SUBSCRIPTION_CANCEL')!;
    // 1300 of usage less the 1200 the threshold invoice billed: 100 bears 19.
    expect(closing.line_items.map((l) => [l.line_type, l.amount, l.net_amount, l.tax_amount])).toEqual([
      ['CHARGE', 1300, 100, 19],
      ['THRESHOLD_DEDUCTION', -1200, 0, 0],
    ]);
    expect(closing).toMatchObject({ subtotal: 100, total_tax: 19, total: 119 });
    t.adds(closing);
  });

  it("taxes a commitment's true-up on the closing invoice like its other lines", async () => {
    const c = await buyer({ address_country: 'DE' });
    // 20 usd a month committed, 10 billed in advance: the closing invoice of last month trues up 10.
    const sub = await subscribe(c.id, [fixed('10')], { start_date: isoZ(monthStart(-1)), commitment_amount: 2000 });
    const cycle = (await invoicesOf(sub)).find((i) => i.billing_reason === 'SUBSCRIPTION_CYCLE')!;
    expect(cycle.line_items.map((l) => [l.line_type, l.amount, l.tax_amount, l.taxes.map((x) => x.code)])).toEqual([
      ['CHARGE', 1000, 190, ['USE_DE_19']],
      ['COMMITMENT_TRUE_UP', 1000, 190, ['USE_DE_19']],
    ]);
    expect(cycle).toMatchObject({ subtotal: 2000, total_tax: 380, total: 2380 });
    t.adds(cycle);
    // Finalized, the wallet pays both with their tax.
    expect(await t.finalize(cycle.id)).toMatchObject({ status: 'paid', total_prepaid_credits_applied: 2380, total_tax: 380 });
  });
});
