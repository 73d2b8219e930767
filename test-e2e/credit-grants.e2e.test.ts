import { createDb, type Db } from '@billstream/db';
import { waitFor } from '@billstream/testing';
import { startProcessStack, type ProcessStack } from './support/stack';

/**
 * Credit grants exactly once across processes (ADR 0039) on six real processes, every call
 * through the gateway: billing SIGKILLed at `grants.after-credit` (the wallet committed the
 * credit, billing has not recorded it; ADR 0017), and the wallet service down when a
 * subscription starts. Either way the application stays pending and the period job lands it
 * once: one wallet credit, the application applied with that credit's transaction.
 */
const NO_JOB = { BILLING_INTERVAL_MS: '0' };
const POINT = 'grants.after-credit';

interface Application {
  status: string;
  wallet_transaction_id: string | null;
  idempotency_key: string;
}

describe('credit grants exactly once across crashes and outages (e2e: real processes, Postgres and Kafka)', () => {
  let stack: ProcessStack;
  let walletDb: Db;
  let planId: string;
  let grantId: string;
  let n = 0;

  beforeAll(async () => {
    stack = await startProcessStack({ env: { billing: { ...NO_JOB, BILLING_CLAIM_LEASE_MS: '2000' } } });
    walletDb = createDb({ databaseUrl: stack.database.url, schema: 'wallet', poolMax: 2 });
    const plan = await stack.api.post('/v1/plans', {
      name: 'Granting',
      prices: [{ type: 'FIXED', currency: 'usd', amount: '10', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }],
    });
    expect(plan.status).toBe(201);
    planId = plan.body.id;
    const grant = await stack.api.post('/v1/credit_grants', { plan_id: planId, name: 'Monthly', credits: '25', cadence: 'RECURRING' });
    expect(grant.status).toBe(201);
    grantId = grant.body.id;
  }, 180_000);
  afterAll(async () => {
    await walletDb?.destroy();
    await stack?.stop();
  }, 120_000);

  beforeEach(async () => {
    if (!stack.running('wallet')) await stack.restart('wallet');
    if (!stack.running('billing')) await stack.restart('billing', NO_JOB);
  }, 60_000);

  const customer = async () => (await stack.api.post('/v1/customers', { external_customer_id: `grants-e2e-${++n}-${Date.now()}` })).body.id as string;
  const applications = async (subscriptionId: string): Promise<Application[]> =>
    (await stack.api.get(`/v1/credit_grants/${grantId}/applications?subscription_id=${subscriptionId}`)).body.items;
  const subscriptionOf = async (customerId: string): Promise<string> => {
    const list = await stack.api.get(`/v1/subscriptions?customer_id=${customerId}`);
    expect(list.body.items).toHaveLength(1);
    return list.body.items[0].id;
  };
  /** Every grant credit the wallet service holds for the customer, read from its schema. */
  const grantCredits = (customerId: string) =>
    walletDb('transactions as t')
      .join('wallets as w', 'w.id', 't.wallet_id')
      .where({ 'w.customer_id': customerId, 't.transaction_reason': 'SUBSCRIPTION_CREDIT_GRANT' })
      .select<Array<{ id: string; credit_amount: string; idempotency_key: string }>>('t.id', 't.credit_amount', 't.idempotency_key');
  const cronUntilApplied = (subscriptionId: string) =>
    waitFor(
      async () => {
        expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
        const apps = await applications(subscriptionId);
        return apps.length === 1 && apps[0].status === 'applied' && apps;
      },
      { timeoutMs: 20_000, intervalMs: 300, what: `the period job to apply the grant of ${subscriptionId}` },
    );

  it(`billing killed at ${POINT}: the retry lands on the same wallet credit, once`, async () => {
    await stack.restart('billing', { ...NO_JOB, BILLSTREAM_FAILPOINTS: POINT });
    const customerId = await customer();
    const res = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: planId });
    expect(res.status).toBeGreaterThanOrEqual(500);
    await waitFor(() => !stack.running('billing'), { timeoutMs: 10_000, what: `billing to kill itself at ${POINT}` });
    expect(stack.logs('billing')).toContain(`failpoint ${POINT}: SIGKILL`);

    // The wallet committed its credit; billing committed the subscription and a pending application.
    const [credited] = await grantCredits(customerId);
    expect(credited).toMatchObject({ credit_amount: '25' });
    await stack.restart('billing', NO_JOB);
    const subscriptionId = await subscriptionOf(customerId);
    expect((await applications(subscriptionId)).map((a) => a.status)).toEqual(['pending']);

    const [applied] = await cronUntilApplied(subscriptionId);
    expect(applied).toMatchObject({ wallet_transaction_id: credited.id, idempotency_key: credited.idempotency_key });
    await stack.api.post('/v1/cron/bill-subscriptions', {});
    expect(await grantCredits(customerId)).toEqual([credited]);
    const wallets = (await stack.api.get(`/v1/customers/${customerId}/wallets`)).body.items;
    expect(wallets.map((w: { credit_balance: string }) => w.credit_balance)).toEqual(['25']);
  }, 120_000);

  it('the wallet service down at activation: the subscription starts, the application stays pending, the job credits it once the wallet is back', async () => {
    const customerId = await customer();
    await stack.kill('wallet');
    const res = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: planId });
    expect(res.status).toBe(201);
    expect((await applications(res.body.id)).map((a) => a.status)).toEqual(['pending']);
    expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
    expect((await applications(res.body.id)).map((a) => a.status)).toEqual(['pending']);

    await stack.restart('wallet');
    const [applied] = await cronUntilApplied(res.body.id);
    const credits = await grantCredits(customerId);
    expect(credits).toHaveLength(1);
    expect(applied.wallet_transaction_id).toBe(credits[0].id);
  }, 120_000);
});
