import { createDb, type Db } from '@billstream/db';
import { waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { fixedPrice, usagePrice } from './prices';

describe('plans, prices and subscriptions through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let db: Db;
  let meterId: string;
  let regionMeterId: string;
  let customerId: string;
  let otherTenantMeter: string;

  beforeAll(async () => {
    stack = await startIntegrationStack();
    db = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    const meter = await stack.api.post('/v1/meters', { name: 'calls', event_name: 'api_call', aggregation: { type: 'COUNT' } });
    meterId = meter.body.id;
    const region = await stack.api.post('/v1/meters', { name: 'gb', event_name: 'storage', aggregation: { type: 'SUM', field: 'gb' } });
    regionMeterId = region.body.id;
    const other = stack.api.withKey(await stack.keyFor('tenant-other', 'production'));
    otherTenantMeter = (await other.post('/v1/meters', { name: 'x', event_name: 'x', aggregation: { type: 'COUNT' } })).body.id;
    customerId = (await stack.api.post('/v1/customers', { external_customer_id: 'acme' })).body.id;
  });
  afterAll(async () => {
    await db?.destroy();
    await stack?.stop();
  });

  const count = async (table: string) => Number((await db(table).count({ n: '*' }))[0].n);

  async function plan(body: Record<string, unknown> = {}) {
    const res = await stack.api.post('/v1/plans', { name: 'Pro', prices: [fixedPrice, usagePrice(meterId)], ...body });
    expect(res.status).toBe(201);
    return res.body;
  }

  describe('plans and prices', () => {
    it('creates a plan with its prices and reads it back, one by one and in lists', async () => {
      const created = await plan({ lookup_key: 'pro-monthly', metadata: { tier: 'pro' } });
      expect(created).toMatchObject({ id: expect.stringMatching(/^plan_/), status: 'active', lookup_key: 'pro-monthly', tenant_id: 'tenant-a' });
      expect(created.prices).toHaveLength(2);
      expect(created.prices[1]).toMatchObject({
        id: expect.stringMatching(/^price_/),
        plan_id: created.id,
        type: 'USAGE',
        amount: '0.5',
        billing_period_count: 1,
        meter_id: meterId,
        status: 'active',
      });
      expect((await stack.api.get(`/v1/plans/${created.id}`)).body).toEqual(created);
      const listed = await stack.api.get('/v1/plans?lookup_key=pro-monthly');
      expect(listed.body.items.map((p: { id: string }) => p.id)).toEqual([created.id]);
      const updated = await stack.api.put(`/v1/plans/${created.id}`, { name: 'Pro plus', description: 'more' });
      expect(updated.body).toMatchObject({ name: 'Pro plus', description: 'more', lookup_key: 'pro-monthly' });
    });

    it('keeps lookup_key unique per tenant and environment: 409 already_exists', async () => {
      await plan({ lookup_key: 'dup' });
      const again = await stack.api.post('/v1/plans', { name: 'Other', lookup_key: 'dup' });
      expect(again.status).toBe(409);
      expect(again.body.error).toMatchObject({ internal_error: 'already_exists', details: { field: 'lookup_key' } });
      const other = stack.api.withKey(await stack.keyFor('tenant-other', 'production'));
      expect((await other.post('/v1/plans', { name: 'Theirs', lookup_key: 'dup' })).status).toBe(201);
      const racing = await Promise.all([1, 2, 3].map(() => stack.api.post('/v1/plans', { name: 'Race', lookup_key: 'race', prices: [fixedPrice] })));
      expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409]);
      expect(await db('plans').where({ lookup_key: 'race' })).toHaveLength(1);
    });

    it("refuses a meter of another tenant (404 details.field) and writes nothing", async () => {
      const before = [await count('plans'), await count('prices')];
      const inPlan = await stack.api.post('/v1/plans', { name: 'Bad', prices: [fixedPrice, usagePrice(otherTenantMeter)] });
      expect(inPlan.status).toBe(404);
      expect(inPlan.body.error).toMatchObject({ internal_error: 'not_found', details: { field: 'prices.1.meter_id' } });
      const p = await plan();
      const alone = await stack.api.post('/v1/prices', { plan_id: p.id, ...usagePrice(otherTenantMeter) });
      expect(alone.status).toBe(404);
      expect(alone.body.error.details.field).toBe('meter_id');
      expect([await count('plans'), await count('prices')]).toEqual([before[0] + 1, before[1] + 2]);
    });

    it('validates every field with details.field', async () => {
      const p = await plan();
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...usagePrice(meterId), invoice_cadence: 'ADVANCE' }, 'invoice_cadence'],
        [{ ...usagePrice(meterId), amount: '0.1234567890123' }, 'amount'],
        [{ ...usagePrice(meterId), currency: 'xyz' }, 'currency'],
        [{ ...usagePrice(meterId), meter_id: undefined }, 'meter_id'],
        [{ ...usagePrice(meterId), billing_model: 'TIERED', tier_mode: 'SLAB', amount: undefined, tiers: [{ up_to: '10', unit_amount: '1' }] }, 'tiers.0.up_to'],
        [{ ...usagePrice(meterId), billing_model: 'PACKAGE' }, 'package'],
        [{ ...usagePrice(meterId), colour: 'red' }, 'colour'],
        [{ ...fixedPrice, billing_period_count: 0 }, 'billing_period_count'],
      ];
      for (const [body, field] of cases) {
        const res = await stack.api.post('/v1/prices', { plan_id: p.id, ...body });
        expect([res.status, res.body.error?.internal_error, res.body.error?.details?.field]).toEqual([400, 'validation_error', field]);
      }
      const unknownPlan = await stack.api.post('/v1/prices', { plan_id: 'plan_nope', ...fixedPrice });
      expect([unknownPlan.status, unknownPlan.body.error.details.field]).toEqual([404, 'plan_id']);
      const noName = await stack.api.post('/v1/plans', {});
      expect([noName.status, noName.body.error.details.field]).toEqual([400, 'name']);
      const planCases: Array<[string, string, Record<string, unknown>, string]> = [
        ['post', '/v1/plans', { name: 'x', prices: [{ ...fixedPrice, amount: '-1' }] }, 'prices.0.amount'],
        ['post', '/v1/plans', { name: 'x', prices: [{ ...fixedPrice, plan_id: p.id }] }, 'prices.0.plan_id'],
        ['post', '/v1/plans', { name: 'x', metadata: { a: 1 } }, 'metadata.a'],
        ['post', '/v1/plans', { name: '   ' }, 'name'],
        ['put', `/v1/plans/${p.id}`, { lookup_key: 'new' }, 'lookup_key'],
        ['put', `/v1/plans/${p.id}`, { prices: [] }, 'prices'],
      ];
      for (const [method, path, body, field] of planCases) {
        const res = method === 'put' ? await stack.api.put(path, body) : await stack.api.post(path, body);
        expect([path, res.status, res.body.error?.internal_error, res.body.error?.details?.field]).toEqual([path, 400, 'validation_error', field]);
      }
      for (const [query, field] of [
        ['status=gone', 'status'],
        ['limit=0', 'limit'],
        ['colour=red', 'colour'],
      ]) {
        const res = await stack.api.get(`/v1/plans?${query}`);
        expect([query, res.status, res.body.error?.details?.field]).toEqual([query, 400, field]);
      }
      expect((await stack.api.put('/v1/plans/plan_nope', { name: 'x' })).status).toBe(404);
      expect((await stack.api.delete('/v1/plans/plan_nope')).status).toBe(404);
    });

    it('creates TIERED and PACKAGE prices, archives a price (204) and keeps it readable', async () => {
      const p = await plan();
      const tiered = await stack.api.post('/v1/prices', {
        plan_id: p.id,
        ...usagePrice(meterId),
        amount: undefined,
        billing_model: 'TIERED',
        tier_mode: 'VOLUME',
        tiers: [{ up_to: '100', unit_amount: '1', flat_amount: '5' }, { up_to: null, unit_amount: '0.5' }],
        filter_values: { region: ['eu'] },
      });
      expect(tiered.status).toBe(201);
      expect(tiered.body).toMatchObject({
        tier_mode: 'VOLUME',
        tiers: [{ up_to: '100', unit_amount: '1', flat_amount: '5' }, { up_to: null, unit_amount: '0.5', flat_amount: null }],
        filter_values: { region: ['eu'] },
      });
      const pkg = await stack.api.post('/v1/prices', { plan_id: p.id, ...usagePrice(meterId), billing_model: 'PACKAGE', package: { size: '1000', round: 'UP' } });
      expect(pkg.body.package).toEqual({ size: '1000', round: 'UP' });
      expect((await stack.api.delete(`/v1/prices/${pkg.body.id}`)).status).toBe(204);
      expect((await stack.api.get(`/v1/prices/${pkg.body.id}`)).body.status).toBe('archived');
      expect((await stack.api.get('/v1/prices/price_nope')).status).toBe(404);
    });

    it('prices are immutable in the database itself: only archiving changes a row', async () => {
      const p = await plan();
      await expect(db('prices').where({ id: p.prices[0].id }).update({ amount: '1' })).rejects.toThrow(/immutable/);
      expect((await db('prices').where({ id: p.prices[0].id }).first()).amount).toBe('49');
    });

    it('needs plans:read / plans:write; other tenants do not see the plan', async () => {
      const p = await plan();
      const reader = stack.api.withKey(await stack.keyFor('tenant-a', 'production', ['plans:read']));
      expect((await reader.get(`/v1/plans/${p.id}`)).status).toBe(200);
      expect((await reader.post('/v1/plans', { name: 'x' })).status).toBe(403);
      const customersOnly = stack.api.withKey(await stack.keyFor('tenant-a', 'production', ['customers:read']));
      expect((await customersOnly.get('/v1/subscriptions')).status).toBe(403);
      const other = stack.api.withKey(await stack.keyFor('tenant-other', 'production'));
      expect((await other.get(`/v1/plans/${p.id}`)).status).toBe(404);
    });
  });

  describe('subscriptions', () => {
    let planId: string;
    beforeAll(async () => {
      planId = (await plan({ prices: [fixedPrice, usagePrice(meterId), usagePrice(regionMeterId, { amount: '2', filter_values: { region: ['eu'] } })] })).id;
    });

    it('refuses bad input with details.field and writes nothing', async () => {
      const before = await count('subscriptions');
      const cases: Array<[Record<string, unknown>, number, string]> = [
        [{ customer_id: customerId }, 400, 'plan_id'],
        [{ customer_id: customerId, plan_id: 'plan_nope' }, 404, 'plan_id'],
        [{ customer_id: 'cust_nope', plan_id: planId }, 404, 'customer_id'],
        [{ external_customer_id: 'nobody', plan_id: planId }, 404, 'external_customer_id'],
        [{ plan_id: planId }, 400, 'customer_id'],
        [{ customer_id: customerId, external_customer_id: 'acme', plan_id: planId }, 400, 'customer_id'],
        [{ customer_id: customerId, plan_id: planId, timezone: 'Mars/Olympus' }, 400, 'timezone'],
        [{ customer_id: customerId, plan_id: planId, currency: 'eur' }, 400, 'currency'],
        [{ customer_id: customerId, plan_id: planId, billing_period: 'ANNUAL' }, 400, 'billing_period'],
        [{ customer_id: customerId, plan_id: planId, start_date: 'yesterday' }, 400, 'start_date'],
        [{ customer_id: customerId, plan_id: planId, trial_period_days: -1 }, 400, 'trial_period_days'],
        [{ customer_id: customerId, plan_id: planId, billing_cycle: 'weekly' }, 400, 'billing_cycle'],
      ];
      for (const [body, status, field] of cases) {
        const res = await stack.api.post('/v1/subscriptions', body);
        expect([JSON.stringify(body), res.status, res.body.error?.details?.field]).toEqual([JSON.stringify(body), status, field]);
      }
      expect(await count('subscriptions')).toBe(before);
    });

    it('creates an active subscription with its first period and announces subscription.created', async () => {
      const res = await stack.api.post('/v1/subscriptions', {
        external_customer_id: 'acme',
        plan_id: planId,
        start_date: '2026-01-31T10:00:00Z',
        timezone: 'Europe/Berlin',
        metadata: { po: '42' },
      });
      expect(res.status).toBe(201);
      const now = Date.now();
      expect(res.body).toMatchObject({
        id: expect.stringMatching(/^sub_/),
        customer_id: customerId,
        plan_id: planId,
        currency: 'usd',
        billing_period: 'MONTHLY',
        billing_cycle: 'anniversary',
        timezone: 'Europe/Berlin',
        status: 'active',
        start_date: '2026-01-31T10:00:00.000Z',
        cancel_at_period_end: false,
        metadata: { po: '42' },
      });
      expect(Date.parse(res.body.current_period_start)).toBeLessThanOrEqual(now);
      expect(Date.parse(res.body.current_period_end)).toBeGreaterThan(now);
      const events = await db('outbox').where({ message_key: res.body.id });
      expect(events.map((e: { topic: string; value: string }) => [e.topic, JSON.parse(e.value).type])).toEqual([
        [expect.stringMatching(/billing-events$/), 'subscription.created'],
      ]);
      expect(JSON.parse(events[0].value).payload.subscription).toEqual(res.body);
    });

    it('walks the lifecycle; every illegal transition is 400 validation_error', async () => {
      const draft = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: planId, draft: true });
      expect(draft.body).toMatchObject({ status: 'draft', current_period_start: null, start_date: null });
      const id = draft.body.id;
      const act = (verb: string, body: unknown = {}) => stack.api.post(`/v1/subscriptions/${id}/${verb}`, body);
      const illegal = async (verb: string, body: unknown = {}) => {
        const res = await act(verb, body);
        expect([verb, res.status, res.body.error?.internal_error]).toEqual([verb, 400, 'validation_error']);
      };
      await illegal('pause');
      await illegal('resume');
      await illegal('cancel', { cancel_at: 'end_of_period' });
      const activated = await act('activate');
      expect(activated.body).toMatchObject({ status: 'active', paused_at: null });
      expect(activated.body.current_period_start).toBe(activated.body.start_date);
      await illegal('activate');
      await illegal('resume');
      const paused = await act('pause');
      expect(paused.body.status).toBe('paused');
      expect(paused.body.current_period_end).toBe(paused.body.paused_at);
      await illegal('pause');
      await illegal('cancel', { cancel_at: 'end_of_period' });
      const resumed = await act('resume');
      expect(resumed.body).toMatchObject({ status: 'active', paused_at: null });
      expect(Date.parse(resumed.body.current_period_start)).toBeGreaterThanOrEqual(Date.parse(paused.body.paused_at));
      const atEnd = await act('cancel', { cancel_at: 'end_of_period' });
      expect(atEnd.body).toMatchObject({ status: 'active', cancel_at_period_end: true });
      await illegal('cancel', { cancel_at: 'end_of_period' });
      const cancelled = await act('cancel', { cancel_at: 'immediately' });
      expect(cancelled.body.status).toBe('cancelled');
      expect(cancelled.body.current_period_end).toBe(cancelled.body.cancelled_at);
      for (const verb of ['activate', 'pause', 'resume', 'cancel']) await illegal(verb);
      expect((await act('cancel', { cancel_at: 'later' })).body.error.details.field).toBe('cancel_at');
      const types = (await db('outbox').where({ message_key: id }).orderBy('seq')).map((e: { value: string }) => JSON.parse(e.value).type);
      expect(types).toEqual([
        'subscription.draft.created',
        'subscription.activated',
        'subscription.paused',
        'subscription.resumed',
        'subscription.updated',
        'subscription.cancelled',
      ]);
      expect((await stack.api.post('/v1/subscriptions/sub_nope/activate', {})).status).toBe(404);
    });

    it('two transitions at once: one wins, the other sees the new state (row lock), one event each', async () => {
      const s = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: planId });
      const statuses = await Promise.all([1, 2, 3].map(() => stack.api.post(`/v1/subscriptions/${s.body.id}/pause`, {}).then((r) => r.status)));
      expect(statuses.sort()).toEqual([200, 400, 400]);
      const types = (await db('outbox').where({ message_key: s.body.id })).map((e: { value: string }) => JSON.parse(e.value).type);
      expect(types.sort()).toEqual(['subscription.created', 'subscription.paused']);
    });

    it('starts a trial: trialing until trial_end', async () => {
      const res = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: planId, trial_period_days: 14 });
      expect(res.body.status).toBe('trialing');
      expect(Date.parse(res.body.trial_end) - Date.parse(res.body.start_date)).toBe(14 * 86_400_000);
      expect(res.body.current_period_end).toBe(res.body.trial_end);
      expect((await stack.api.post(`/v1/subscriptions/${res.body.id}/pause`, {})).status).toBe(400);
    });

    it('defaults currency and period to the plan only ones; several: 400 until one is chosen', async () => {
      const multi = await plan({ prices: [fixedPrice, { ...fixedPrice, currency: 'EUR' }] });
      const ambiguous = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: multi.id });
      expect([ambiguous.status, ambiguous.body.error.details.field]).toEqual([400, 'currency']);
      const eur = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: multi.id, currency: 'EUR' });
      expect([eur.status, eur.body.currency]).toEqual([201, 'eur']);
    });

    it('refuses new subscriptions to an archived plan; running ones go on', async () => {
      const p = await plan();
      const running = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: p.id });
      expect((await stack.api.delete(`/v1/plans/${p.id}`)).status).toBe(204);
      expect((await stack.api.get(`/v1/plans/${p.id}`)).body.status).toBe('archived');
      const refused = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: p.id });
      expect([refused.status, refused.body.error.details.field]).toEqual([400, 'plan_id']);
      expect((await stack.api.get(`/v1/subscriptions/${running.body.id}`)).body.status).toBe('active');
    });

    it('lists by customer, plan and status', async () => {
      const other = (await stack.api.post('/v1/customers', { external_customer_id: 'globex' })).body.id;
      const mine = await stack.api.post('/v1/subscriptions', { customer_id: other, plan_id: planId, draft: true });
      const byCustomer = await stack.api.get(`/v1/subscriptions?customer_id=${other}`);
      expect(byCustomer.body).toMatchObject({ items: [{ id: mine.body.id }], pagination: { total: 1, limit: 50, offset: 0 } });
      const drafts = await stack.api.get(`/v1/subscriptions?customer_id=${other}&status=draft&plan_id=${planId}`);
      expect(drafts.body.items).toHaveLength(1);
      expect((await stack.api.get(`/v1/subscriptions?customer_id=${other}&status=active`)).body.items).toHaveLength(0);
      expect((await stack.api.get('/v1/subscriptions?status=gone')).body.error.details.field).toBe('status');
    });

    it("gives the current period's usage per usage price from the aggregator, filter_values applied, priced", async () => {
      const sub = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: planId });
      const at = new Date(Date.parse(sub.body.current_period_start) + 1000).toISOString();
      const events = [
        ...[1, 2, 3].map((i) => ({ event_id: `c${i}`, event_name: 'api_call', external_customer_id: 'acme', timestamp: at })),
        { event_id: 's1', event_name: 'storage', external_customer_id: 'acme', timestamp: at, properties: { gb: 10, region: 'eu' } },
        { event_id: 's2', event_name: 'storage', external_customer_id: 'acme', timestamp: at, properties: { gb: 7, region: 'us' } },
        { event_id: 'old', event_name: 'api_call', external_customer_id: 'acme', timestamp: '2020-01-01T00:00:00Z' },
      ];
      expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
      await waitFor(async () => (await stack.api.post('/v1/events/query', { external_customer_id: 'acme' })).body.total_count >= 6, {
        what: 'events stored',
      });
      const usage = await stack.api.get(`/v1/subscriptions/${sub.body.id}/usage`);
      expect(usage.status).toBe(200);
      expect(usage.body).toMatchObject({
        subscription_id: sub.body.id,
        currency: 'usd',
        period_start: sub.body.current_period_start,
        period_end: sub.body.current_period_end,
        amount: 150 + 2000,
      });
      const byMeter = Object.fromEntries(usage.body.items.map((i: { meter_id: string }) => [i.meter_id, i]));
      expect(byMeter[meterId]).toMatchObject({ quantity: '3', amount: 150, lines: [{ quantity: '3', unit_amount: '0.5', amount: 150 }] });
      expect(byMeter[regionMeterId]).toMatchObject({ quantity: '10', amount: 2000 });
      const draft = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: planId, draft: true });
      expect((await stack.api.get(`/v1/subscriptions/${draft.body.id}/usage`)).status).toBe(400);
      expect((await stack.api.get('/v1/subscriptions/sub_nope/usage')).status).toBe(404);
    });
  });
});
