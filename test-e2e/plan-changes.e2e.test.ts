import { createDb, type Db } from '@billstream/db';
import { waitFor } from '@billstream/testing';
import { isoZ, monthlyPeriodAround } from './support/clock';
import { startProcessStack, type ProcessStack } from './support/stack';
import { paidInFull } from './support/payments';

/**
 * A plan change exactly once across crashes (docs/api/plan-changes.md, ADR 0043) on six real
 * processes, every call through the gateway: billing SIGKILLed inside the change's transaction
 * (`plan-changes.before-commit`: nothing of it stays) and right after its commit
 * (`plan-changes.after-commit`: the client never heard back). The client's retry with the same
 * idempotency key lands on one change and one SUBSCRIPTION_UPDATE invoice either way. Then a
 * downgrade's excess credit reaches the wallet once though billing dies after the wallet
 * credited it (`invoices.after-excess-credit`).
 */
/** 10 to 14 days before the run (test-e2e/support/clock.ts): the changes fall inside its MONTHLY period, 14 or more days left, on any day. */
const START_AT = isoZ(monthlyPeriodAround().start);
const NO_JOB = { BILLING_INTERVAL_MS: '0', BILLING_FINALIZE_DELAY_MS: '0' };
const fixed = (amount: string) => ({ type: 'FIXED', currency: 'usd', amount, billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' });

interface Invoice {
  id: string;
  billing_reason: string;
  excess_credit: number;
  status: string;
}

describe('plan changes exactly once across crashes (e2e: real processes, Postgres and Kafka)', () => {
  let stack: ProcessStack;
  let billingDb: Db;
  let walletDb: Db;
  let basic: string;
  let pro: string;
  let n = 0;

  beforeAll(async () => {
    stack = await startProcessStack({ env: { billing: { ...NO_JOB, BILLING_CLAIM_LEASE_MS: '2000' } } });
    billingDb = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    walletDb = createDb({ databaseUrl: stack.database.url, schema: 'wallet', poolMax: 2 });
    basic = (await stack.api.post('/v1/plans', { name: 'Basic', prices: [fixed('49')] })).body.id;
    pro = (await stack.api.post('/v1/plans', { name: 'Pro', prices: [fixed('99')] })).body.id;
  }, 180_000);
  afterAll(async () => {
    await billingDb?.destroy();
    await walletDb?.destroy();
    await stack?.stop();
  }, 120_000);

  beforeEach(async () => {
    if (!stack.running('billing')) await stack.restart('billing', NO_JOB);
  }, 60_000);

  async function subscription(planId: string): Promise<{ id: string; customerId: string }> {
    const customerId = (await stack.api.post('/v1/customers', { external_customer_id: `changes-e2e-${++n}-${Date.now()}` })).body.id as string;
    const sub = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: planId, start_date: START_AT });
    expect(sub.status).toBe(201);
    return { id: sub.body.id, customerId };
  }
  const invoicesOf = async (id: string): Promise<Invoice[]> => (await stack.api.get(`/v1/invoices?subscription_id=${id}&limit=100`)).body.items;
  const updates = async (id: string) => (await invoicesOf(id)).filter((i) => i.billing_reason === 'SUBSCRIPTION_UPDATE');
  const changesOf = (id: string) => billingDb('subscription_changes').where({ subscription_id: id }).select('id', 'invoice_id', 'idempotency_key');
  async function killedAt(point: string, subscriptionId: string, body: Record<string, unknown>): Promise<void> {
    await stack.restart('billing', { ...NO_JOB, BILLSTREAM_FAILPOINTS: point });
    const res = await stack.api.post(`/v1/subscriptions/${subscriptionId}/change`, body);
    expect(res.status).toBeGreaterThanOrEqual(500);
    await waitFor(() => !stack.running('billing'), { timeoutMs: 10_000, what: `billing to kill itself at ${point}` });
    expect(stack.logs('billing')).toContain(`failpoint ${point}: SIGKILL`);
    await stack.restart('billing', NO_JOB);
  }

  it('billing killed inside the change transaction: nothing of it stays; the retry changes once', async () => {
    const sub = await subscription(basic);
    const body = { plan_id: pro, idempotency_key: `before-${sub.id}` };
    await killedAt('plan-changes.before-commit', sub.id, body);
    expect((await stack.api.get(`/v1/subscriptions/${sub.id}`)).body.plan_id).toBe(basic);
    expect(await updates(sub.id)).toEqual([]);
    expect(await changesOf(sub.id)).toEqual([]);

    const retried = await stack.api.post(`/v1/subscriptions/${sub.id}/change`, body);
    expect(retried.status).toBe(200);
    expect(retried.body.subscription.plan_id).toBe(pro);
    const again = await stack.api.post(`/v1/subscriptions/${sub.id}/change`, body);
    expect(again.body.invoice.id).toBe(retried.body.invoice.id);
    expect((await updates(sub.id)).map((i) => i.id)).toEqual([retried.body.invoice.id]);
    expect(await changesOf(sub.id)).toEqual([expect.objectContaining({ invoice_id: retried.body.invoice.id, idempotency_key: body.idempotency_key })]);
  }, 120_000);

  it('billing killed after the change committed: the retry with the key answers the same change and invoice', async () => {
    const sub = await subscription(basic);
    const body = { plan_id: pro, idempotency_key: `after-${sub.id}` };
    await killedAt('plan-changes.after-commit', sub.id, body);
    expect((await stack.api.get(`/v1/subscriptions/${sub.id}`)).body.plan_id).toBe(pro);
    const [made] = await updates(sub.id);
    expect(made).toBeDefined();

    const retried = await stack.api.post(`/v1/subscriptions/${sub.id}/change`, body);
    expect(retried.status).toBe(200);
    expect(retried.body.invoice.id).toBe(made!.id);
    expect(retried.body.subscription.plan_id).toBe(pro);
    expect((await updates(sub.id)).map((i) => i.id)).toEqual([made!.id]);
    expect(await changesOf(sub.id)).toHaveLength(1);
  }, 120_000);

  it("a downgrade's excess credit reaches the PRE_PAID wallet once though billing dies after the wallet credited it", async () => {
    const sub = await subscription(pro);
    // Paid: the unused time is money received, so it can reach the wallet (an unpaid invoice would owe less instead, ADR 0056).
    await paidInFull(stack.api, sub.id);
    const down = await stack.api.post(`/v1/subscriptions/${sub.id}/change`, { plan_id: basic });
    expect(down.status).toBe(200);
    const invoice = down.body.invoice as Invoice;
    expect(invoice.excess_credit).toBeGreaterThan(0);

    await stack.restart('billing', { ...NO_JOB, BILLSTREAM_FAILPOINTS: 'invoices.after-excess-credit' });
    await stack.api.post(`/v1/invoices/${invoice.id}/finalize`, {});
    await waitFor(() => !stack.running('billing'), { timeoutMs: 10_000, what: 'billing to kill itself after the excess credit' });
    await stack.restart('billing', NO_JOB);
    const credits = () =>
      walletDb('transactions as t')
        .join('wallets as w', 'w.id', 't.wallet_id')
        .where({ 'w.customer_id': sub.customerId, 't.transaction_reason': 'CREDIT_NOTE' })
        .select<Array<{ id: string; credit_amount: string; idempotency_key: string }>>('t.id', 't.credit_amount', 't.idempotency_key');
    expect(await credits()).toEqual([expect.objectContaining({ idempotency_key: `invoice-excess:${invoice.id}`, credit_amount: String(invoice.excess_credit / 100) })]);
    await waitFor(
      async () => {
        expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
        const row = await billingDb('invoices').where({ id: invoice.id }).first('excess_credited_at', 'status');
        return row?.excess_credited_at !== null && row?.status === 'paid';
      },
      { timeoutMs: 20_000, intervalMs: 300, what: 'the period job to record the excess credit' },
    );
    expect(await credits()).toHaveLength(1);
  }, 120_000);
});
