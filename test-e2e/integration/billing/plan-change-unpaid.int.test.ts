import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { fixedPrice } from './prices';

/**
 * Issue #47, item 2a (ADR 0056) as a client meets it, through the gateway on real Postgres and
 * Kafka: a proration credit never returns money that was never paid. The unused time of an
 * unpaid (or partly paid) ADVANCE invoice lowers what is due on that invoice (a pre-payment
 * credit note); only the paid part becomes a PRORATION_CREDIT and excess credit in the wallet.
 * A void of the credited invoice then has nothing of the change to undo.
 */
interface Line {
  id: string;
  line_type: string;
  amount: number;
  net_amount: number;
  credited_amount: number;
}
interface Invoice {
  id: string;
  status: string;
  billing_reason: string;
  total: number;
  amount_due: number;
  amount_paid: number;
  amount_remaining: number;
  excess_credit: number;
  pre_payment_credit_notes_amount: number;
  line_items: Line[];
}

/** part / whole, 12 decimals, half up (the contract's proration factor), as a scaled integer. */
function factor(partMs: number, wholeMs: number): bigint {
  return (2n * BigInt(partMs) * 10n ** 12n + BigInt(wholeMs)) / (2n * BigInt(wholeMs));
}
/** round(amount × factor) half up, amount in minor units. */
function times(amount: number, f: bigint): number {
  return Number((2n * BigInt(amount) * f + 10n ** 12n) / (2n * 10n ** 12n));
}

describe('a downgrade with prorations after an unpaid ADVANCE invoice (issue #47 2a)', () => {
  let stack: IntegrationStack;
  let big: string;
  let small: string;
  let n = 0;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0', BILLING_FINALIZE_DELAY_MS: '0' } } });
    big = (await stack.api.post('/v1/plans', { name: 'Hundred', prices: [{ ...fixedPrice, amount: '100' }] })).body.id;
    small = (await stack.api.post('/v1/plans', { name: 'One', prices: [{ ...fixedPrice, amount: '1' }] })).body.id;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  async function subscribed(startDate?: string, keepDraft = false, extra: Record<string, unknown> = {}): Promise<{ customerId: string; subscriptionId: string; created: Invoice }> {
    const c = await stack.api.post('/v1/customers', { external_customer_id: `unpaid-${++n}-${Date.now()}` });
    expect(c.status).toBe(201);
    const s = await stack.api.post('/v1/subscriptions', { customer_id: c.body.id, plan_id: big, ...(startDate ? { start_date: startDate } : {}), ...extra });
    expect(s.status).toBe(201);
    const list = (await stack.api.get(`/v1/invoices?subscription_id=${s.body.id}&limit=10`)).body.items as Invoice[];
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ billing_reason: 'SUBSCRIPTION_CREATE', status: 'draft', total: 10000 });
    if (keepDraft) return { customerId: c.body.id, subscriptionId: s.body.id, created: list[0]! };
    const finalized = await stack.api.post(`/v1/invoices/${list[0]!.id}/finalize`, {});
    expect(finalized.status).toBe(200);
    const created = finalized.body as Invoice;
    // The 100 usd ADVANCE invoice, finalized and not paid (no wallet, no payment).
    expect(created).toMatchObject({ billing_reason: 'SUBSCRIPTION_CREATE', status: 'finalized', total: 10000, amount_due: 10000, amount_paid: 0 });
    return { customerId: c.body.id, subscriptionId: s.body.id, created };
  }
  const invoice = async (id: string) => (await stack.api.get(`/v1/invoices/${id}`)).body as Invoice;
  const downgrade = async (subscriptionId: string) => {
    const res = await stack.api.post(`/v1/subscriptions/${subscriptionId}/change`, { plan_id: small, proration_behavior: 'create_prorations', effective: 'immediately' });
    expect(res.status).toBe(200);
    return res.body.invoice as Invoice;
  };
  async function walletCredits(customerId: string): Promise<Array<{ transaction_reason: string; amount: string }>> {
    const wallets = (await stack.api.get(`/v1/customers/${customerId}/wallets`)).body.items as Array<{ id: string }>;
    const out: Array<{ transaction_reason: string; amount: string }> = [];
    for (const w of wallets) out.push(...((await stack.api.get(`/v1/wallets/${w.id}/transactions?limit=100`)).body.items as Array<{ transaction_reason: string; amount: string }>));
    return out;
  }
  async function notesOf(invoiceId: string): Promise<Array<{ origin: string; reason: string; amount: number; pre_payment_amount: number; wallet_amount: number; refund: string }>> {
    const res = await stack.api.get(`/v1/credit_notes?invoice_id=${invoiceId}&limit=100`);
    expect(res.status).toBe(200);
    return res.body.items;
  }

  it('as written: unpaid 100 usd, immediate downgrade to 1 usd, void: no credit reaches the wallet and nothing is owed back', async () => {
    const { customerId, subscriptionId, created } = await subscribed();
    const change = await downgrade(subscriptionId);
    // Nothing of the 100 was paid: no PRORATION_CREDIT on the change invoice, so no excess credit (before: 99 usd).
    expect(change.line_items.filter((l) => l.line_type === 'PRORATION_CREDIT')).toEqual([]);
    expect(change.excess_credit).toBe(0);
    const charge = change.line_items.find((l) => l.line_type === 'CHARGE')!.amount;
    expect(charge).toBeGreaterThan(0);
    expect(change.total).toBe(charge);
    // The unused time lowered what is due on the 100 usd invoice instead: one pre-payment note, nothing to a wallet.
    const after = await invoice(created.id);
    const notes = await notesOf(created.id);
    expect(notes).toHaveLength(1);
    const unused = notes[0]!.amount;
    expect(notes[0]).toMatchObject({ origin: 'MANUAL', reason: 'ORDER_CHANGE', refund: 'NONE', pre_payment_amount: unused, wallet_amount: 0 });
    expect(unused).toBeGreaterThanOrEqual(9999);
    expect(after.amount_due).toBe(10000 - unused);
    expect(after.line_items[0]!.credited_amount).toBe(unused);
    // The void: what is left of the 100 usd invoice is credited (or, all of it lowered already, it is paid and a void is refused).
    const voided = await stack.api.post(`/v1/invoices/${created.id}/void`, {});
    if (after.amount_due > 0) {
      expect(voided.status).toBe(200);
      expect(voided.body.status).toBe('voided');
    } else {
      expect(after.status).toBe('paid');
      expect([voided.status, voided.body.error?.internal_error]).toEqual([400, 'validation_error']);
    }
    // The customer holds no credit for anything: no wallet transaction at all.
    expect(await walletCredits(customerId)).toEqual([]);
    await stack.api.post('/v1/cron/bill-subscriptions', {});
    expect(await walletCredits(customerId)).toEqual([]);
  });

  it('a day into the period: the used part stays due, the void credits only that, the wallet gets nothing', async () => {
    const { customerId, subscriptionId, created } = await subscribed(new Date(Date.now() - 86_400_000).toISOString());
    const change = await downgrade(subscriptionId);
    expect(change.excess_credit).toBe(0);
    expect(change.line_items.some((l) => l.line_type === 'PRORATION_CREDIT')).toBe(false);
    const after = await invoice(created.id);
    const [lowered] = await notesOf(created.id);
    // About 1/30 of 100 usd was used: that stays due; the unused rest is off the amount due.
    expect(after.amount_due).toBe(10000 - lowered!.amount);
    expect(after.amount_due).toBeGreaterThan(250);
    expect(after.amount_due).toBeLessThan(400);
    expect(after.status).toBe('finalized');
    const voided = await stack.api.post(`/v1/invoices/${created.id}/void`, {});
    expect(voided.status).toBe(200);
    expect(voided.body).toMatchObject({ status: 'voided' });
    // The void's note took only what the change left: both notes add up to the invoice, no wallet part.
    const notes = await notesOf(created.id);
    expect(notes).toHaveLength(2);
    expect(notes.reduce((s, x) => s + x.amount, 0)).toBe(10000);
    expect(notes.every((x) => x.wallet_amount === 0)).toBe(true);
    await stack.api.post('/v1/cron/bill-subscriptions', {});
    expect(await walletCredits(customerId)).toEqual([]);
    // The change invoice still bills the 1 usd plan for the rest of the period.
    expect((await invoice(change.id)).total).toBe(change.total);
  });

  it('a draft still waiting for the period job: the change finalizes it first, then lowers what it has due', async () => {
    const { customerId, subscriptionId, created } = await subscribed(undefined, true);
    const change = await downgrade(subscriptionId);
    expect(change.excess_credit).toBe(0);
    expect(change.line_items.some((l) => l.line_type === 'PRORATION_CREDIT')).toBe(false);
    const after = await invoice(created.id);
    const notes = await notesOf(created.id);
    expect(notes).toHaveLength(1);
    expect(after.amount_due).toBe(10000 - notes[0]!.amount);
    expect(['finalized', 'paid']).toContain(after.status);
    await stack.api.post('/v1/cron/bill-subscriptions', {});
    expect(await walletCredits(customerId)).toEqual([]);
  });

  it('partly paid: the unpaid part is lowered, only the paid part is credited and reaches the wallet', async () => {
    const { customerId, subscriptionId, created } = await subscribed(new Date(Date.now() - 86_400_000).toISOString());
    const paid = await stack.api.post('/v1/payments', { invoice_id: created.id, amount: 5000, payment_method_type: 'OFFLINE' });
    expect(paid.status).toBe(201);
    const change = await downgrade(subscriptionId);
    const [lowered] = await notesOf(created.id);
    // The 50 usd still due is lowered to 0 (the invoice is paid), the rest of the unused time was paid: credited.
    expect(lowered!.amount).toBe(5000);
    const after = await invoice(created.id);
    expect(after).toMatchObject({ status: 'paid', amount_due: 5000, amount_paid: 5000 });
    const credit = -change.line_items.filter((l) => l.line_type === 'PRORATION_CREDIT').reduce((s, l) => s + l.amount, 0);
    const charge = change.line_items.find((l) => l.line_type === 'CHARGE')!.amount;
    expect(after.line_items[0]!.credited_amount).toBe(5000 + credit);
    expect(credit).toBeGreaterThan(4500);
    expect(change.excess_credit).toBe(credit - charge);
    await stack.api.post('/v1/cron/bill-subscriptions', {});
    const txs = await walletCredits(customerId);
    expect(txs).toHaveLength(1);
    expect(txs[0]!.transaction_reason).toBe('CREDIT_NOTE');
    // What reaches the wallet is money received less what was used: 50 − the used part − the new plan's rest.
    expect(Math.round(Number(txs[0]!.amount) * 100)).toBe(change.excess_credit);
    expect(5000 - (10000 - 5000 - credit) - charge).toBe(change.excess_credit);
  });

  it('with a commitment, a change to another billing period trues it up against what the period billed: the 100 usd less the unused time lowered', async () => {
    const start = new Date(Date.now() - 86_400_000);
    const { subscriptionId, created } = await subscribed(start.toISOString(), false, { commitment_amount: 20000 });
    const annual = (await stack.api.post('/v1/plans', { name: 'Annual', prices: [{ ...fixedPrice, amount: '500', billing_period: 'ANNUAL' }] })).body.id;
    const res = await stack.api.post(`/v1/subscriptions/${subscriptionId}/change`, { plan_id: annual, proration_behavior: 'create_prorations' });
    expect(res.status).toBe(200);
    const lines = (res.body.invoice as Invoice & { line_items: Array<Line & { line_type: string }> }).line_items;
    expect(lines.some((l) => l.line_type === 'PRORATION_CREDIT')).toBe(false);
    const [lowered] = await notesOf(created.id);
    const t = Date.parse(res.body.subscription.current_period_start);
    const s = start.getTime();
    const e = Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, start.getUTCDate(), start.getUTCHours(), start.getUTCMinutes(), start.getUTCSeconds(), start.getUTCMilliseconds());
    // The period [s, t) must bill the commitment × its part; it billed 100 usd less the unused time (the note), as with a credit line.
    expect(lines.find((l) => l.line_type === 'COMMITMENT_TRUE_UP')!.amount).toBe(times(20000, factor(t - s, e - s)) - (10000 - lowered!.amount));
  });
});
