import { createDb, type Db } from '@billstream/db';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { taxedInvoiceHelpers, type TaxedInvoice } from './taxes-invoices';

/**
 * Plan changes and wallet credits on taxed invoices (docs/api/taxes.md#invoices-bearing-tax,
 * docs/api/plan-changes.md) as a client meets them: through the gateway on real Postgres and
 * Kafka, in the `taxes-invoices` environment with 19 % on German addresses. The preview of a
 * change is the invoice it makes, taxed; a prorated change on a partly paid taxed invoice lowers
 * what is due by a note whose amount and returned tax fit it exactly (it answered a 500: the
 * note's tax pushed the invoice's amount_remaining below 0); credits pay lines with their tax,
 * in full or in part.
 */
interface Note {
  origin: string;
  reason: string;
  amount: number;
  tax_amount: number;
  total: number;
  pre_payment_amount: number;
  wallet_amount: number;
  lines: Array<{ taxes: Array<{ amount: number }> }>;
}

describe('taxed plan changes and wallet credits through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let db: Db;
  let t: Awaited<ReturnType<typeof taxedInvoiceHelpers>>;
  let small: string;
  let big: string;
  const DAY = 86_400_000;
  const monthly = (amount: string, extra: Record<string, unknown> = {}) => ({ type: 'FIXED', currency: 'usd', amount, billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE', ...extra });

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0', BILLING_FINALIZE_DELAY_MS: '0' } } });
    db = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    t = await taxedInvoiceHelpers(stack, db);
    await t.rate('PC_DE_19', '19', { country: 'DE' });
    await t.settings({ enabled: true, rounding: 'LINE' });
    small = (await t.api.post('/v1/plans', { name: 'One', prices: [monthly('1')] })).body.id;
    big = (await t.api.post('/v1/plans', { name: 'Two hundred', prices: [monthly('200')] })).body.id;
  });
  afterAll(async () => {
    await db?.destroy();
    await stack?.stop();
  });

  const notesOf = async (invoiceId: string): Promise<Note[]> => (await t.api.get(`/v1/credit_notes?invoice_id=${invoiceId}&limit=100`)).body.items;
  /** round(tax × part / net), half up: what a note of `part` of a line returns of its tax (nothing credited before). */
  const share = (tax: number, part: number, net: number) => Math.floor((2 * tax * part + net) / (2 * net));
  /** A 100 usd (+ 19 %) subscription of a day ago, its 119 usd invoice finalized and paid 50 usd offline. */
  async function partlyPaid(): Promise<{ sub: string; created: TaxedInvoice }> {
    const cust = await t.customer({ address_country: 'DE' });
    const [draft] = await t.subscribe(cust, [['100']], new Date(Date.now() - DAY).toISOString());
    const created = await t.finalize(draft!.id);
    expect(created).toMatchObject({ status: 'finalized', total: 11900, total_tax: 1900, amount_due: 11900 });
    const paid = await t.api.post('/v1/payments', { invoice_id: created.id, amount: 5000, payment_method_type: 'OFFLINE' });
    expect(paid.status).toBe(201);
    expect(await t.get(created.id)).toMatchObject({ amount_paid: 5000, amount_remaining: 6900 });
    return { sub: created.subscription_id, created };
  }
  /** The note that lowered the 6900 still due: the largest amount whose total (amount + the tax it returns) fits it. */
  function expectFits(note: Note): void {
    expect(note).toMatchObject({ origin: 'MANUAL', reason: 'ORDER_CHANGE', total: 6900, pre_payment_amount: 6900, wallet_amount: 0 });
    expect(note.tax_amount).toBe(share(1900, note.amount, 10000));
    expect(note.total).toBe(note.amount + note.tax_amount);
    expect(note.amount + 1 + share(1900, note.amount + 1, 10000)).toBeGreaterThan(6900);
    expect(note.lines.map((l) => l.taxes.map((x) => x.amount))).toEqual([[note.tax_amount]]);
  }

  it('a prorated downgrade on a partly paid taxed invoice: the unpaid part is a note fitting what is due with its tax, the paid part a credit', async () => {
    const { sub, created } = await partlyPaid();
    const res = await t.api.post(`/v1/subscriptions/${sub}/change`, { plan_id: small, proration_behavior: 'create_prorations', effective: 'immediately' });
    expect(res.status).toBe(200);
    const change = res.body.invoice as TaxedInvoice & { excess_credit: number };
    const lines = change.line_items as unknown as Array<{ line_type: string; amount: number; net_amount: number; tax_amount: number }>;
    const [note, ...more] = await notesOf(created.id);
    expect(more).toEqual([]);
    expectFits(note!);
    const after = await t.get(created.id);
    expect(after).toMatchObject({ status: 'paid', amount_due: 5000, amount_paid: 5000, amount_remaining: 0, pre_payment_credit_notes_amount: 6900 });
    // The line is credited by the note's amount and the paid unused time (before tax, in the line's terms).
    const credit = -lines.filter((l) => l.line_type === 'PRORATION_CREDIT').reduce((s, l) => s + l.amount, 0);
    expect(credit).toBeGreaterThan(3500);
    expect(after.line_items[0]!).toMatchObject({ credited_amount: note!.amount + credit });
    // The credit takes the 1 usd plan's prorated charge: nothing of it bears tax, the rest is excess credit.
    const charge = lines.find((l) => l.line_type === 'CHARGE')!;
    expect([charge.net_amount, charge.tax_amount, change.total_tax, change.total]).toEqual([0, 0, 0, 0]);
    expect(change.excess_credit).toBe(credit - charge.amount);
    t.adds(change);
  });

  it('a prorated upgrade on a partly paid taxed invoice: the note fits what is due, the change invoice is taxed on its charge less the paid credit', async () => {
    const { sub, created } = await partlyPaid();
    const preview = await t.api.post(`/v1/subscriptions/${sub}/change/preview`, { plan_id: big, proration_behavior: 'create_prorations' });
    expect(preview.status).toBe(200);
    const res = await t.api.post(`/v1/subscriptions/${sub}/change`, { plan_id: big, proration_behavior: 'create_prorations' });
    expect(res.status).toBe(200);
    const change = res.body.invoice as TaxedInvoice;
    const [note] = await notesOf(created.id);
    expectFits(note!);
    const lines = change.line_items as unknown as Array<{ line_type: string; amount: number; net_amount: number; tax_amount: number }>;
    const charge = lines.find((l) => l.line_type === 'CHARGE')!;
    const credit = -lines.find((l) => l.line_type === 'PRORATION_CREDIT')!.amount;
    expect(charge.net_amount).toBe(charge.amount - credit);
    expect(charge.tax_amount).toBe(share(19, charge.net_amount, 100));
    expect(change).toMatchObject({ total_tax: charge.tax_amount, total: charge.net_amount + charge.tax_amount });
    t.adds(change);
    // The preview answered the same shape, taxed by the same code (at its own instant).
    const previewed = preview.body.invoice as TaxedInvoice;
    t.adds(previewed);
    expect(previewed.line_items.map((l) => [(l as unknown as { line_type: string }).line_type, l.tax_behavior])).toEqual(lines.map((l) => [l.line_type, 'exclusive']));
    expect(previewed.total_tax).toBeGreaterThan(0);
  });

  it('previews a change exactly as the invoice it makes, taxed (another billing period: whole charges, exclusive and inclusive)', async () => {
    const cust = await t.customer({ address_country: 'DE' });
    // Started a day ago: the change's whole second is after the start, so it ends that period and bills the new one.
    const [draft] = await t.subscribe(cust, [['10']], new Date(Date.now() - DAY).toISOString());
    await t.finalize(draft!.id);
    const annual = await t.api.post('/v1/plans', {
      name: 'Annual taxed',
      prices: [monthly('500.01', { billing_period: 'ANNUAL' }), monthly('120', { billing_period: 'ANNUAL', tax_behavior: 'inclusive' })],
    });
    expect(annual.status).toBe(201);
    const body = { plan_id: annual.body.id, billing_period: 'ANNUAL', proration_behavior: 'none' };
    const preview = await t.api.post(`/v1/subscriptions/${draft!.subscription_id}/change/preview`, body);
    expect(preview.status).toBe(200);
    const applied = await t.api.post(`/v1/subscriptions/${draft!.subscription_id}/change`, body);
    expect(applied.status).toBe(200);
    const money = (i: TaxedInvoice) => ({
      totals: [i.subtotal, i.total_tax, i.total_excluding_tax, i.total, i.amount_due, i.reverse_charge, i.buyer_tax],
      breakdown: i.tax_breakdown,
      lines: i.line_items.map((l) => [l.amount, l.net_amount, l.tax_behavior, l.tax_amount, l.taxes]),
    });
    const previewed = preview.body.invoice as TaxedInvoice;
    const made = await t.get(applied.body.invoice.id);
    expect(money(previewed)).toEqual(money(made));
    // 50001 bears 9500 on top; 12000 holds round(12000 × 19/119) = 1916.
    expect(money(made).lines.map((l) => [l[0], l[2], l[3]])).toEqual([[50001, 'exclusive', 9500], [12000, 'inclusive', 1916]]);
    expect(made).toMatchObject({ subtotal: 62001, total_tax: 11416, total_excluding_tax: 62001 - 1916, total: 62001 + 9500 });
    t.adds(made);
  });

  it('wallet credits pay a taxed invoice in part, line by line with each line’s tax, and what is left stays due', async () => {
    const cust = await t.customer({ address_country: 'DE' });
    const walletId = await t.wallet(cust, '12');
    const [draft] = await t.subscribe(cust, [['10.01'], ['3.33']]);
    // 1001 + 190 and 333 + 63: the wallet's 1200 pays the first line with its tax, then 9 of the second.
    const paid = await t.finalize(draft!.id);
    expect(paid.line_items.map((l) => [l.net_amount, l.tax_amount, l.prepaid_credits_applied])).toEqual([[1001, 190, 1191], [333, 63, 9]]);
    expect(paid).toMatchObject({ status: 'finalized', total_tax: 253, total_prepaid_credits_applied: 1200, total: 1587 - 1200, amount_due: 387 });
    expect((await t.api.get(`/v1/wallets/${walletId}/balance`)).body.credit_balance).toBe('0');
    // A payment of what is left settles it.
    expect((await t.api.post('/v1/payments', { invoice_id: paid.id, amount: 387, payment_method_type: 'OFFLINE' })).status).toBe(201);
    expect(await t.get(paid.id)).toMatchObject({ status: 'paid', amount_remaining: 0 });
  });
});
