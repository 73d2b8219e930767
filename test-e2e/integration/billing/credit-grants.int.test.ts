import { createDb, type Db } from '@billstream/db';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

/**
 * Credit grants (docs/api/credit-grants.md, ADR 0039) as a client meets them: through the gateway,
 * on the whole stack with real Postgres and Kafka. The period job's schedule is off; the tests
 * run it with POST /v1/cron/bill-subscriptions. A "next period" is made real by DAILY
 * subscriptions started a day minus a few seconds ago: their second period starts a few
 * seconds into the test.
 */
const DAY = 86_400_000;
const dailyPrice = { type: 'FIXED', currency: 'usd', amount: '1', billing_model: 'FLAT_FEE', billing_period: 'DAILY', invoice_cadence: 'ADVANCE' };
const monthlyPrice = { ...dailyPrice, billing_period: 'MONTHLY' };

interface Application {
  id: string;
  subscription_id: string;
  period_start: string;
  period_end: string;
  credits: string;
  status: string;
  skip_reason: string | null;
  expiry_date: string | null;
  wallet_id: string | null;
  wallet_transaction_id: string | null;
  idempotency_key: string;
}

interface Transaction {
  id: string;
  type: string;
  transaction_reason: string;
  credit_amount: string;
  expiry_date: string | null;
  priority: number | null;
  idempotency_key: string | null;
  transaction_status: string;
}

describe('credit grants through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let billingDb: Db;
  let n = 0;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0' } } });
    billingDb = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
  });
  afterAll(async () => {
    await billingDb?.destroy();
    await stack?.stop();
  });

  const cron = async () => expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
  async function customer(): Promise<string> {
    const res = await stack.api.post('/v1/customers', { external_customer_id: `grants-${++n}-${Date.now()}` });
    expect(res.status).toBe(201);
    return res.body.id;
  }
  async function plan(price: Record<string, unknown> = dailyPrice): Promise<string> {
    const res = await stack.api.post('/v1/plans', { name: 'Grants', prices: [price] });
    expect(res.status).toBe(201);
    return res.body.id;
  }
  async function grant(body: Record<string, unknown>) {
    const res = await stack.api.post('/v1/credit_grants', { name: 'Monthly credits', credits: '100', cadence: 'RECURRING', ...body });
    expect(res.status).toBe(201);
    return res.body as { id: string; status: string };
  }
  async function subscribe(customerId: string, planId: string, startDate: Date, extra: Record<string, unknown> = {}) {
    const res = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: planId, start_date: startDate.toISOString(), ...extra });
    expect(res.status).toBe(201);
    return res.body as { id: string; status: string };
  }
  const applications = async (grantId: string, subscriptionId?: string): Promise<Application[]> => {
    const res = await stack.api.get(`/v1/credit_grants/${grantId}/applications${subscriptionId ? `?subscription_id=${subscriptionId}` : ''}`);
    expect(res.status).toBe(200);
    return res.body.items;
  };
  const prepaid = async (customerId: string) => {
    const res = await stack.api.get(`/v1/customers/${customerId}/wallets`);
    expect(res.status).toBe(200);
    return (res.body.items as Array<{ id: string; wallet_type: string; wallet_status: string; conversion_rate: string; config: { allowed_price_types: string[] }; credit_balance: string }>).filter(
      (w) => w.wallet_type === 'PRE_PAID',
    );
  };
  const transactions = async (walletId: string): Promise<Transaction[]> => (await stack.api.get(`/v1/wallets/${walletId}/transactions?limit=1000`)).body.items;
  const sleepUntil = async (at: number) => {
    const wait = at - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  };

  describe('the API', () => {
    it('creates, lists, gets and archives a grant; bad input is a 400 in the envelope, an unknown target a 404', async () => {
      const planId = await plan();
      const res = await stack.api.post('/v1/credit_grants', {
        plan_id: planId,
        name: 'Starter credits',
        credits: '12.5',
        cadence: 'RECURRING',
        expire_in_days: 30,
        priority: 2,
        conversion_rate: '0.5',
        metadata: { source: 'test' },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        id: expect.stringMatching(/^cgrant_[0-9A-HJKMNP-TV-Z]{26}$/),
        plan_id: planId,
        subscription_id: null,
        name: 'Starter credits',
        credits: '12.5',
        cadence: 'RECURRING',
        period: null,
        expire_in_days: 30,
        priority: 2,
        conversion_rate: '0.5',
        metadata: { source: 'test' },
        status: 'active',
        archived_at: null,
      });
      const id = res.body.id as string;
      expect((await stack.api.get(`/v1/credit_grants/${id}`)).body).toEqual(res.body);
      const list = await stack.api.get(`/v1/credit_grants?plan_id=${planId}`);
      expect([list.status, list.body.items.map((g: { id: string }) => g.id), list.body.pagination]).toEqual([200, [id], { total: 1, limit: 50, offset: 0 }]);
      expect((await applications(id))).toEqual([]);

      expect((await stack.api.delete(`/v1/credit_grants/${id}`)).status).toBe(204);
      expect((await stack.api.get(`/v1/credit_grants/${id}`)).body).toMatchObject({ status: 'archived', archived_at: expect.any(String) });
      expect((await stack.api.delete(`/v1/credit_grants/${id}`)).status).toBe(204);

      const invalid = async (body: Record<string, unknown>, field: string) => {
        const bad = await stack.api.post('/v1/credit_grants', { name: 'x', credits: '1', cadence: 'ONETIME', ...body });
        expect([bad.status, bad.body.success, bad.body.error.internal_error, bad.body.error.details?.field]).toEqual([400, false, 'validation_error', field]);
      };
      const subscriptionId = (await subscribe(await customer(), planId, new Date())).id;
      await invalid({ plan_id: planId, subscription_id: subscriptionId }, 'plan_id');
      await invalid({}, 'plan_id');
      await invalid({ plan_id: planId, credits: '0' }, 'credits');
      await invalid({ plan_id: planId, credits: '-5' }, 'credits');
      await invalid({ plan_id: planId, credits: 'ten' }, 'credits');
      await invalid({ plan_id: planId, cadence: 'WEEKLY' }, 'cadence');
      await invalid({ plan_id: planId, expire_in_days: 0 }, 'expire_in_days');
      await invalid({ plan_id: planId, surprise: true }, 'surprise');

      const unknownPlan = await stack.api.post('/v1/credit_grants', { plan_id: 'plan_missing', name: 'x', credits: '1', cadence: 'ONETIME' });
      expect([unknownPlan.status, unknownPlan.body.error.internal_error, unknownPlan.body.error.details.field]).toEqual([404, 'not_found', 'plan_id']);
      const unknownSub = await stack.api.post('/v1/credit_grants', { subscription_id: 'sub_missing', name: 'x', credits: '1', cadence: 'ONETIME' });
      expect([unknownSub.status, unknownSub.body.error.details.field]).toEqual([404, 'subscription_id']);
      expect((await stack.api.get('/v1/credit_grants/cgrant_missing')).status).toBe(404);
      expect((await stack.api.get('/v1/credit_grants/cgrant_missing/applications')).status).toBe(404);
      expect((await stack.api.delete('/v1/credit_grants/cgrant_missing')).status).toBe(404);
      // Nothing half written: the refused creations left no grant.
      expect(await billingDb('credit_grants').where({ plan_id: planId }).select('id')).toEqual([{ id }]);
    });

    it('needs credit_grants:read to read and credit_grants:write to write (403 in the envelope); other tenants see nothing', async () => {
      const planId = await plan();
      const { id } = await grant({ plan_id: planId });
      const none = stack.api.withKey(await stack.keyFor('tenant-a', 'production', ['plans:read', 'plans:write', 'subscriptions:read']));
      for (const res of [await none.get('/v1/credit_grants'), await none.get(`/v1/credit_grants/${id}`), await none.post('/v1/credit_grants', { plan_id: planId, name: 'x', credits: '1', cadence: 'ONETIME' })]) {
        expect([res.status, res.body.success, res.body.error.internal_error]).toEqual([403, false, 'permission_denied']);
      }
      const readOnly = stack.api.withKey(await stack.keyFor('tenant-a', 'production', ['credit_grants:read']));
      expect((await readOnly.get(`/v1/credit_grants/${id}`)).status).toBe(200);
      expect((await readOnly.get(`/v1/credit_grants/${id}/applications`)).status).toBe(200);
      expect((await readOnly.delete(`/v1/credit_grants/${id}`)).status).toBe(403);
      const other = stack.api.withKey(await stack.keyFor('tenant-b', 'production'));
      expect((await other.get(`/v1/credit_grants/${id}`)).status).toBe(404);
      expect((await other.get('/v1/credit_grants')).body.items).toEqual([]);
    });
  });

  describe('applications', () => {
    it('a RECURRING plan grant creates the PRE_PAID wallet and credits it at activation, again at the next period start; reruns change nothing', async () => {
      const planId = await plan();
      const g = await grant({ plan_id: planId, credits: '100', expire_in_days: 10, priority: 3, conversion_rate: '2' });
      const customerId = await customer();
      expect(await prepaid(customerId)).toEqual([]);
      const nextStart = Date.now() + 8000;
      const start = new Date(nextStart - DAY);
      const sub = await subscribe(customerId, planId, start);

      const [wallet] = await prepaid(customerId);
      expect(wallet).toMatchObject({ wallet_status: 'active', conversion_rate: '2', config: { allowed_price_types: ['USAGE'] }, credit_balance: '100' });
      let apps = await applications(g.id, sub.id);
      expect(apps).toEqual([
        expect.objectContaining({
          id: expect.stringMatching(/^cgapp_/),
          subscription_id: sub.id,
          period_start: start.toISOString(),
          credits: '100',
          status: 'applied',
          expiry_date: new Date(start.getTime() + 10 * DAY).toISOString(),
          wallet_id: wallet.id,
          idempotency_key: `cgrant:${g.id}:${sub.id}:${start.toISOString()}`,
        }),
      ]);
      let txns = await transactions(wallet.id);
      expect(txns).toEqual([
        expect.objectContaining({
          id: apps[0].wallet_transaction_id,
          type: 'CREDIT',
          transaction_status: 'COMPLETED',
          transaction_reason: 'SUBSCRIPTION_CREDIT_GRANT',
          credit_amount: '100',
          priority: 3,
          expiry_date: apps[0].expiry_date,
          idempotency_key: apps[0].idempotency_key,
        }),
      ]);
      // A run before the next period starts grants nothing more.
      await cron();
      expect(await applications(g.id, sub.id)).toHaveLength(1);

      await sleepUntil(nextStart + 500);
      await cron();
      apps = await applications(g.id, sub.id);
      expect(apps.map((a) => [a.period_start, a.status])).toEqual([
        [start.toISOString(), 'applied'],
        [new Date(nextStart).toISOString(), 'applied'],
      ]);
      expect((await prepaid(customerId))[0].credit_balance).toBe('200');
      txns = await transactions(wallet.id);
      expect(txns.map((t) => t.id).sort()).toEqual(apps.map((a) => a.wallet_transaction_id).sort());

      // Reruns of the job (and a replay of the wallet's key) change nothing.
      await cron();
      await cron();
      expect((await prepaid(customerId))[0].credit_balance).toBe('200');
      expect(await transactions(wallet.id)).toHaveLength(2);
      expect(await applications(g.id, sub.id)).toEqual(apps);
    });

    it('a subscription backdated 3 periods gets 3 applications, the expired one skipped and never credited', async () => {
      const planId = await plan(monthlyPrice);
      const g = await grant({ plan_id: planId, credits: '30', expire_in_days: 40 });
      const customerId = await customer();
      const now = new Date();
      const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, now.getUTCDate() - 5, 12));
      const sub = await subscribe(customerId, planId, start);
      const apps = await applications(g.id, sub.id);
      expect(apps).toHaveLength(3);
      expect(apps[0]).toMatchObject({ period_start: start.toISOString(), status: 'skipped', skip_reason: 'expired', wallet_transaction_id: null });
      expect(apps.slice(1).map((a) => a.status)).toEqual(['applied', 'applied']);
      const [wallet] = await prepaid(customerId);
      expect(wallet.credit_balance).toBe('60');
      expect((await transactions(wallet.id)).map((t) => t.idempotency_key).sort()).toEqual(apps.slice(1).map((a) => a.idempotency_key).sort());

      await cron();
      await cron();
      expect(await applications(g.id, sub.id)).toEqual(apps);
      expect((await prepaid(customerId))[0].credit_balance).toBe('60');
      expect(await transactions(wallet.id)).toHaveLength(2);
    });

    it('an existing PRE_PAID wallet keeps its configuration; a ONETIME grant credits once; a grant made on a running subscription credits its current period', async () => {
      const planId = await plan(monthlyPrice);
      const onetime = await grant({ plan_id: planId, cadence: 'ONETIME', credits: '5' });
      const customerId = await customer();
      const existing = await stack.api.post('/v1/wallets', { customer_id: customerId, currency: 'usd', conversion_rate: '3', description: 'mine' });
      expect(existing.status).toBe(201);
      const now = new Date();
      const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, now.getUTCDate() - 3, 12));
      const sub = await subscribe(customerId, planId, start);
      expect((await applications(onetime.id, sub.id)).map((a) => [a.period_start, a.status])).toEqual([[start.toISOString(), 'applied']]);

      const own = await grant({ subscription_id: sub.id, credits: '7' });
      const ownApps = await applications(own.id, sub.id);
      const current = (await stack.api.get(`/v1/subscriptions/${sub.id}`)).body.current_period_start;
      expect(ownApps.map((a) => [a.period_start, a.status])).toEqual([[current, 'applied']]);

      await cron();
      const wallets = await prepaid(customerId);
      expect(wallets).toHaveLength(1);
      expect(wallets[0]).toMatchObject({ id: existing.body.id, conversion_rate: '3', description: 'mine', credit_balance: '12' });
      expect(await applications(onetime.id, sub.id)).toHaveLength(1);
    });

    it('stops on pause, cancel and archive: a period starting after them grants nothing', async () => {
      const planId = await plan();
      const kept = await grant({ plan_id: planId, credits: '10' });
      const archived = await grant({ plan_id: planId, credits: '1' });
      const nextStart = Date.now() + 8000;
      const start = new Date(nextStart - DAY);
      const [running, paused, cancelled] = [await customer(), await customer(), await customer()];
      const subs = { running: await subscribe(running, planId, start), paused: await subscribe(paused, planId, start), cancelled: await subscribe(cancelled, planId, start) };
      expect((await stack.api.post(`/v1/subscriptions/${subs.paused.id}/pause`, {})).status).toBe(200);
      expect((await stack.api.post(`/v1/subscriptions/${subs.cancelled.id}/cancel`, { cancel_at: 'immediately' })).status).toBe(200);
      expect((await stack.api.delete(`/v1/credit_grants/${archived.id}`)).status).toBe(204);
      // A subscription made after the archive does not take the archived grant.
      const late = await subscribe(await customer(), planId, new Date());
      expect(await applications(archived.id, late.id)).toEqual([]);

      await sleepUntil(nextStart + 500);
      await cron();
      expect((await applications(kept.id, subs.running.id)).map((a) => a.status)).toEqual(['applied', 'applied']);
      expect((await applications(archived.id, subs.running.id)).map((a) => a.period_start)).toEqual([start.toISOString()]);
      for (const s of [subs.paused, subs.cancelled]) {
        expect((await applications(kept.id, s.id)).map((a) => a.period_start)).toEqual([start.toISOString()]);
      }
      expect((await prepaid(running))[0].credit_balance).toBe('21');
      expect((await prepaid(paused))[0].credit_balance).toBe('11');
    });
  });
});
