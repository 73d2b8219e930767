/** One file: every case uses the one stack, meter, features and plan set up in beforeAll (a stack costs seconds to start on two cores). */
import { createDb, type Db } from '@billstream/db';
import { waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { fixedPrice } from './prices';

/** docs/api/entitlements.md, through the gateway on real Postgres and Kafka with the real aggregator. */
describe('features, entitlements and the check through the gateway', () => {
  let stack: IntegrationStack;
  let db: Db;
  let meterId: string;
  let otherTenantMeter: string;

  beforeAll(async () => {
    stack = await startIntegrationStack();
    db = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    meterId = (await stack.api.post('/v1/meters', { name: 'calls', event_name: 'api_call', aggregation: { type: 'COUNT' } })).body.id;
    const other = stack.api.withKey(await stack.keyFor('tenant-other', 'production'));
    otherTenantMeter = (await other.post('/v1/meters', { name: 'x', event_name: 'x', aggregation: { type: 'COUNT' } })).body.id;
  });
  afterAll(async () => {
    await db?.destroy();
    await stack?.stop();
  });

  const count = async (table: string) => Number((await db(table).count({ n: '*' }))[0].n);
  const outboxTypes = async (key: string) => (await db('outbox').where({ message_key: key }).orderBy('seq')).map((e: { value: string }) => JSON.parse(e.value).type);
  let seq = 0;
  const unique = (prefix: string) => `${prefix}-${++seq}-${Date.now()}`;

  async function feature(type: 'BOOLEAN' | 'METERED' | 'STATIC', extra: Record<string, unknown> = {}) {
    const res = await stack.api.post('/v1/features', { name: `F ${type}`, lookup_key: unique(type.toLowerCase()), type, ...(type === 'METERED' ? { meter_id: meterId } : {}), ...extra });
    expect(res.status).toBe(201);
    return res.body;
  }
  async function plan() {
    const res = await stack.api.post('/v1/plans', { name: 'Plan', prices: [fixedPrice] });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }
  async function entitle(planId: string, featureId: string, grant: Record<string, unknown> = {}) {
    const res = await stack.api.post('/v1/entitlements', { plan_id: planId, feature_id: featureId, ...grant });
    expect([res.status, res.body.error]).toEqual([201, undefined]);
    return res.body;
  }
  async function customer() {
    const external = unique('cust');
    const res = await stack.api.post('/v1/customers', { external_customer_id: external });
    return { id: res.body.id as string, external };
  }
  async function subscribe(customerId: string, planId: string, extra: Record<string, unknown> = {}) {
    const res = await stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: planId, ...extra });
    expect([res.status, res.body.error]).toEqual([201, undefined]);
    await granting(customerId, res.body.id, true);
    return res.body;
  }
  /**
   * Subscription changes reach the check through billing-events (ADR 0061,
   * docs/api/entitlements.md#post-v1entitlementscheck): waits until the customer's view (the
   * check's grants, one cache) lists the subscription among its sources, or no longer does.
   */
  async function granting(customerId: string, subscriptionId: string, present: boolean) {
    await waitFor(async () => {
      const res = await stack.api.get(`/v1/customers/${customerId}/entitlements?limit=1000`);
      const listed = (res.body.items ?? []).some((i: { sources: Array<{ subscription_id: string }> }) => i.sources.some((s) => s.subscription_id === subscriptionId));
      return res.status === 200 && listed === present;
    }, { what: `subscription ${subscriptionId} ${present ? 'granting' : 'no longer granting'} in the check` });
  }
  /** Posts api_call events at these times and waits until the aggregator stored them all. */
  async function usage(external: string, times: Date[]) {
    const before = (await stack.api.post('/v1/events/query', { external_customer_id: external })).body.total_count as number;
    const events = times.map((t) => ({ event_id: unique('e'), event_name: 'api_call', external_customer_id: external, timestamp: t.toISOString() }));
    expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
    await waitFor(async () => (await stack.api.post('/v1/events/query', { external_customer_id: external })).body.total_count >= before + times.length, { what: 'events stored' });
  }
  const check = (body: Record<string, unknown>) => stack.api.post('/v1/entitlements/check', body);
  /** The check once it shows these fields: usage read from the aggregator may be served up to 1 s (docs/api/entitlements.md#post-v1entitlementscheck: usage counts accepted events within 2 s). */
  const checkShows = (body: Record<string, unknown>, fields: Record<string, unknown>) =>
    waitFor(async () => {
      const res = await check(body);
      return Object.entries(fields).every(([k, v]) => res.body[k] === v) && res;
    }, { what: `check showing ${JSON.stringify(fields)}` });

  const now = () => new Date();
  const startOfDay = (d = now()) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  const startOfMonth = (d = now()) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));

  describe('features', () => {
    it('creates, reads, lists, renames and archives a feature, each change announced through the outbox', async () => {
      const f = await feature('METERED', { metadata: { team: 'api' }, description: 'calls' });
      expect(f).toMatchObject({ id: expect.stringMatching(/^feat_/), type: 'METERED', meter_id: meterId, status: 'active', metadata: { team: 'api' }, tenant_id: 'tenant-a' });
      expect((await stack.api.get(`/v1/features/${f.id}`)).body).toEqual(f);
      expect((await stack.api.get(`/v1/features?lookup_key=${f.lookup_key}`)).body).toMatchObject({ items: [f], pagination: { total: 1, limit: 50, offset: 0 } });
      const renamed = await stack.api.put(`/v1/features/${f.id}`, { name: 'API calls' });
      expect(renamed.body).toMatchObject({ name: 'API calls', lookup_key: f.lookup_key, type: 'METERED' });
      const del = await stack.api.delete(`/v1/features/${f.id}`);
      expect([del.status, del.text]).toEqual([204, '']);
      expect((await stack.api.get(`/v1/features/${f.id}`)).body.status).toBe('archived');
      expect((await stack.api.get(`/v1/features?status=active&lookup_key=${f.lookup_key}`)).body.items).toEqual([]);
      expect(await outboxTypes(f.id)).toEqual(['feature.created', 'feature.updated', 'feature.deleted']);
      const payload = JSON.parse((await db('outbox').where({ message_key: f.id }).orderBy('seq'))[1].value).payload;
      expect(payload.feature).toEqual(renamed.body);
    });

    it('keeps lookup_key unique per tenant and environment (archived features included): 409', async () => {
      const f = await feature('BOOLEAN');
      const again = await stack.api.post('/v1/features', { name: 'x', lookup_key: f.lookup_key, type: 'STATIC' });
      expect([again.status, again.body.error.internal_error, again.body.error.details.field]).toEqual([409, 'already_exists', 'lookup_key']);
      await stack.api.delete(`/v1/features/${f.id}`);
      expect((await stack.api.post('/v1/features', { name: 'x', lookup_key: f.lookup_key, type: 'BOOLEAN' })).status).toBe(409);
      const other = stack.api.withKey(await stack.keyFor('tenant-other', 'production'));
      expect((await other.post('/v1/features', { name: 'x', lookup_key: f.lookup_key, type: 'BOOLEAN' })).status).toBe(201);
    });

    it('refuses bad input with a 4xx naming the field and writes nothing', async () => {
      const before = [await count('features'), await count('outbox')];
      const cases: Array<[Record<string, unknown>, number, string]> = [
        [{ name: 'x', lookup_key: 'k1', type: 'METERED' }, 400, 'meter_id'],
        [{ name: 'x', lookup_key: 'k1', type: 'BOOLEAN', meter_id: meterId }, 400, 'meter_id'],
        [{ name: 'x', lookup_key: 'k1', type: 'METERED', meter_id: 'meter_nope' }, 404, 'meter_id'],
        [{ name: 'x', lookup_key: 'k1', type: 'METERED', meter_id: otherTenantMeter }, 404, 'meter_id'],
        [{ name: 'x', lookup_key: 'k1', type: 'COUNTER' }, 400, 'type'],
        [{ name: 'x', type: 'BOOLEAN' }, 400, 'lookup_key'],
        [{ name: ' ', lookup_key: 'k1', type: 'BOOLEAN' }, 400, 'name'],
        [{ name: 'x', lookup_key: 'k1', type: 'BOOLEAN', colour: 'red' }, 400, 'colour'],
        [{ name: 'x', lookup_key: 'k1', type: 'BOOLEAN', metadata: { a: 1 } }, 400, 'metadata.a'],
      ];
      for (const [body, status, field] of cases) {
        const res = await stack.api.post('/v1/features', body);
        expect([JSON.stringify(body), res.status, res.body.error?.details?.field]).toEqual([JSON.stringify(body), status, field]);
      }
      const f = await feature('BOOLEAN');
      for (const body of [{ type: 'STATIC' }, { lookup_key: 'new' }, { meter_id: meterId }]) {
        const res = await stack.api.put(`/v1/features/${f.id}`, body);
        expect([res.status, res.body.error.details.field]).toEqual([400, Object.keys(body)[0]]);
      }
      expect((await stack.api.put('/v1/features/feat_nope', { name: 'x' })).status).toBe(404);
      expect((await stack.api.delete('/v1/features/feat_nope')).status).toBe(404);
      expect((await stack.api.get('/v1/features?type=OTHER')).body.error.details.field).toBe('type');
      expect([await count('features'), await count('outbox')]).toEqual([before[0] + 1, before[1] + 1]);
    });
  });

  describe('entitlements', () => {
    it('creates, lists by plan, reads, updates and deletes entitlements with their events', async () => {
      const planId = await plan();
      const [b, m, s] = [await feature('BOOLEAN'), await feature('METERED'), await feature('STATIC')];
      const eb = await entitle(planId, b.id);
      expect(eb).toMatchObject({ id: expect.stringMatching(/^ent_/), plan_id: planId, feature_id: b.id, feature_type: 'BOOLEAN', is_enabled: true, usage_limit: null, usage_reset_period: null, is_soft_limit: false, static_value: null });
      const em = await entitle(planId, m.id, { usage_limit: '1000.50' });
      expect(em).toMatchObject({ feature_type: 'METERED', usage_limit: '1000.5', usage_reset_period: 'BILLING_PERIOD', is_soft_limit: false });
      const es = await entitle(planId, s.id, { static_value: '5 seats' });
      expect(es).toMatchObject({ feature_type: 'STATIC', static_value: '5 seats', usage_limit: null });
      const listed = await stack.api.get(`/v1/entitlements?plan_id=${planId}`);
      expect(listed.body).toMatchObject({ items: [eb, em, es], pagination: { total: 3 } });
      expect((await stack.api.get(`/v1/entitlements/${em.id}`)).body).toEqual(em);
      const updated = await stack.api.put(`/v1/entitlements/${em.id}`, { usage_limit: null, usage_reset_period: 'DAILY', is_soft_limit: true });
      expect(updated.body).toMatchObject({ usage_limit: null, usage_reset_period: 'DAILY', is_soft_limit: true, is_enabled: true });
      const del = await stack.api.delete(`/v1/entitlements/${em.id}`);
      expect([del.status, del.text]).toEqual([204, '']);
      expect((await stack.api.get(`/v1/entitlements/${em.id}`)).status).toBe(404);
      expect((await stack.api.delete(`/v1/entitlements/${em.id}`)).status).toBe(404);
      expect(await outboxTypes(em.id)).toEqual(['entitlement.created', 'entitlement.updated', 'entitlement.deleted']);
      const created = JSON.parse((await db('outbox').where({ message_key: es.id }).first()).value);
      expect(created.payload.entitlement).toEqual(es);
    });

    it('validates the grant per feature type with a 4xx naming the field, and writes nothing', async () => {
      const planId = await plan();
      const [b, m, s] = [await feature('BOOLEAN'), await feature('METERED'), await feature('STATIC')];
      const archived = await feature('BOOLEAN');
      await stack.api.delete(`/v1/features/${archived.id}`);
      const before = [await count('entitlements'), await count('outbox')];
      const cases: Array<[Record<string, unknown>, number, string]> = [
        [{ feature_id: b.id, usage_limit: '10' }, 400, 'usage_limit'],
        [{ feature_id: b.id, is_soft_limit: true }, 400, 'is_soft_limit'],
        [{ feature_id: b.id, static_value: 'x' }, 400, 'static_value'],
        [{ feature_id: m.id }, 400, 'usage_limit'],
        [{ feature_id: m.id, usage_limit: '-1' }, 400, 'usage_limit'],
        [{ feature_id: m.id, usage_limit: 10 }, 400, 'usage_limit'],
        [{ feature_id: m.id, usage_limit: '1.1234567890123' }, 400, 'usage_limit'],
        [{ feature_id: m.id, usage_limit: '10', usage_reset_period: 'WEEKLY' }, 400, 'usage_reset_period'],
        [{ feature_id: m.id, usage_limit: '10', static_value: 'x' }, 400, 'static_value'],
        [{ feature_id: s.id }, 400, 'static_value'],
        [{ feature_id: s.id, static_value: 'x', usage_reset_period: 'DAILY' }, 400, 'usage_reset_period'],
        [{ feature_id: s.id, static_value: '' }, 400, 'static_value'],
        [{ feature_id: archived.id }, 400, 'feature_id'],
        [{ feature_id: 'feat_nope' }, 404, 'feature_id'],
        [{ feature_id: b.id, plan_id: 'plan_nope' }, 404, 'plan_id'],
        [{ feature_id: b.id, is_enabled: 'yes' }, 400, 'is_enabled'],
        [{ feature_id: b.id, colour: 'red' }, 400, 'colour'],
        [{ plan_id: planId }, 400, 'feature_id'],
      ];
      for (const [body, status, field] of cases) {
        const res = await stack.api.post('/v1/entitlements', { plan_id: planId, ...body });
        expect([JSON.stringify(body), res.status, res.body.error?.details?.field]).toEqual([JSON.stringify(body), status, field]);
      }
      const es = await entitle(planId, s.id, { static_value: 'gold' });
      const dup = await stack.api.post('/v1/entitlements', { plan_id: planId, feature_id: s.id, static_value: 'x' });
      expect([dup.status, dup.body.error.internal_error, dup.body.error.details.field]).toEqual([409, 'already_exists', 'feature_id']);
      for (const [body, field] of [
        [{ static_value: null }, 'static_value'],
        [{ usage_limit: '5' }, 'usage_limit'],
        [{ plan_id: planId }, 'plan_id'],
        [{ feature_id: b.id }, 'feature_id'],
      ] as Array<[Record<string, unknown>, string]>) {
        const res = await stack.api.put(`/v1/entitlements/${es.id}`, body);
        expect([JSON.stringify(body), res.status, res.body.error?.details?.field]).toEqual([JSON.stringify(body), 400, field]);
      }
      expect((await stack.api.put('/v1/entitlements/ent_nope', { is_enabled: false })).status).toBe(404);
      expect((await stack.api.get('/v1/entitlements?limit=0')).body.error.details.field).toBe('limit');
      expect([await count('entitlements'), await count('outbox')]).toEqual([before[0] + 1, before[1] + 1]);
      expect((await stack.api.get(`/v1/entitlements/${es.id}`)).body.static_value).toBe('gold');
    });

    it('needs plans:read to read and check, plans:write to change; other tenants see nothing', async () => {
      const planId = await plan();
      const f = await feature('BOOLEAN');
      const e = await entitle(planId, f.id);
      const c = await customer();
      const reader = stack.api.withKey(await stack.keyFor('tenant-a', 'production', ['plans:read']));
      expect((await reader.get(`/v1/features/${f.id}`)).status).toBe(200);
      expect((await reader.get(`/v1/entitlements/${e.id}`)).status).toBe(200);
      expect((await reader.get(`/v1/customers/${c.id}/entitlements`)).status).toBe(200);
      expect((await reader.post('/v1/entitlements/check', { customer_id: c.id, feature_lookup_key: f.lookup_key })).status).toBe(200);
      for (const res of [
        await reader.post('/v1/features', { name: 'x', lookup_key: unique('k'), type: 'BOOLEAN' }),
        await reader.put(`/v1/features/${f.id}`, { name: 'x' }),
        await reader.delete(`/v1/features/${f.id}`),
        await reader.post('/v1/entitlements', { plan_id: planId, feature_id: f.id }),
        await reader.put(`/v1/entitlements/${e.id}`, { is_enabled: false }),
        await reader.delete(`/v1/entitlements/${e.id}`),
      ]) {
        expect([res.status, res.body.error.internal_error]).toEqual([403, 'permission_denied']);
      }
      const customersOnly = stack.api.withKey(await stack.keyFor('tenant-a', 'production', ['customers:read', 'subscriptions:read']));
      expect((await customersOnly.post('/v1/entitlements/check', { customer_id: c.id, feature_lookup_key: f.lookup_key })).status).toBe(403);
      expect((await customersOnly.get(`/v1/customers/${c.id}/entitlements`)).status).toBe(403);
      expect((await customersOnly.get('/v1/features')).status).toBe(403);
      const other = stack.api.withKey(await stack.keyFor('tenant-other', 'production'));
      expect((await other.get(`/v1/features/${f.id}`)).status).toBe(404);
      expect((await other.get(`/v1/entitlements/${e.id}`)).status).toBe(404);
      expect((await other.get(`/v1/customers/${c.id}/entitlements`)).status).toBe(404);
      expect((await other.post('/v1/entitlements/check', { customer_id: c.id, feature_lookup_key: f.lookup_key })).status).toBe(404);
      expect((await other.delete(`/v1/entitlements/${e.id}`)).status).toBe(404);
      expect((await stack.api.get(`/v1/entitlements/${e.id}`)).status).toBe(200);
    });
  });

  describe('the check and the customer view', () => {
    it('refuses bad check input with a 4xx naming the field', async () => {
      const f = await feature('BOOLEAN');
      const c = await customer();
      const cases: Array<[Record<string, unknown>, number, string]> = [
        [{ feature_lookup_key: f.lookup_key }, 400, 'customer_id'],
        [{ customer_id: c.id, external_customer_id: c.external, feature_lookup_key: f.lookup_key }, 400, 'customer_id'],
        [{ customer_id: c.id }, 400, 'feature_lookup_key'],
        [{ customer_id: c.id, feature_lookup_key: f.lookup_key, quantity: '-1' }, 400, 'quantity'],
        [{ customer_id: c.id, feature_lookup_key: f.lookup_key, quantity: 1 }, 400, 'quantity'],
        [{ customer_id: c.id, feature_lookup_key: f.lookup_key, colour: 'red' }, 400, 'colour'],
        [{ customer_id: c.id, feature_lookup_key: 'no-such-feature' }, 404, 'feature_lookup_key'],
        [{ customer_id: 'cust_nope', feature_lookup_key: f.lookup_key }, 404, 'customer_id'],
        [{ external_customer_id: 'nobody-here', feature_lookup_key: f.lookup_key }, 404, 'external_customer_id'],
      ];
      for (const [body, status, field] of cases) {
        const res = await check(body);
        expect([JSON.stringify(body), res.status, res.body.error?.details?.field]).toEqual([JSON.stringify(body), status, field]);
      }
      expect((await stack.api.get('/v1/customers/cust_nope/entitlements')).status).toBe(404);
    });

    it('BOOLEAN and STATIC: enabled if any active or trialing subscription grants it; none: allowed false', async () => {
      const [on, off] = [await plan(), await plan()];
      const b = await feature('BOOLEAN');
      const s = await feature('STATIC');
      const eOn = await entitle(on, b.id);
      const eOff = await entitle(off, b.id, { is_enabled: false });
      await entitle(on, s.id, { static_value: 'gold' });
      const c = await customer();
      const none = await check({ customer_id: c.id, feature_lookup_key: b.lookup_key });
      expect(none.body).toEqual({ allowed: false, feature_lookup_key: b.lookup_key, type: 'BOOLEAN', usage: null, held: null, limit: null, remaining: null, is_soft_limit: false, period_start: null, period_end: null });
      expect((await stack.api.get(`/v1/customers/${c.id}/entitlements`)).body).toEqual({ items: [], pagination: { total: 0, limit: 50, offset: 0 } });
      const subOff = await subscribe(c.id, off);
      expect((await check({ external_customer_id: c.external, feature_lookup_key: b.lookup_key })).body.allowed).toBe(false);
      const subOn = await subscribe(c.id, on, { trial_period_days: 14 });
      expect(subOn.status).toBe('trialing');
      expect((await check({ external_customer_id: c.external, feature_lookup_key: b.lookup_key })).body.allowed).toBe(true);
      const staticCheck = await check({ customer_id: c.id, feature_lookup_key: s.lookup_key });
      expect(staticCheck.body).toMatchObject({ allowed: true, type: 'STATIC', usage: null, limit: null });
      const view = (await stack.api.get(`/v1/customers/${c.id}/entitlements`)).body.items;
      const byKey = Object.fromEntries(view.map((i: { feature_lookup_key: string }) => [i.feature_lookup_key, i]));
      expect(byKey[b.lookup_key]).toEqual({
        feature_id: b.id,
        feature_lookup_key: b.lookup_key,
        type: 'BOOLEAN',
        is_enabled: true,
        usage_limit: null,
        usage: null,
        is_soft_limit: false,
        static_value: null,
        usage_reset_period: null,
        period_start: null,
        period_end: null,
        sources: expect.arrayContaining([
          { subscription_id: subOff.id, entitlement_id: eOff.id },
          { subscription_id: subOn.id, entitlement_id: eOn.id },
        ]),
      });
      expect(byKey[b.lookup_key].sources).toHaveLength(2);
      expect(byKey[s.lookup_key]).toMatchObject({ type: 'STATIC', is_enabled: true, static_value: 'gold' });
      // A list like every other (ADR 0058): limit and offset page it, total counts every item.
      const paged = await stack.api.get(`/v1/customers/${c.id}/entitlements?limit=1&offset=1`);
      expect(paged.body).toEqual({ items: [view[1]], pagination: { total: view.length, limit: 1, offset: 1 } });
      expect((await stack.api.get(`/v1/customers/${c.id}/entitlements?limit=0`)).body.error.details.field).toBe('limit');
      expect((await stack.api.get(`/v1/customers/${c.id}/entitlements?feature=x`)).body.error.details.field).toBe('feature');
      // A cancelled subscription grants nothing; a paused one neither.
      expect((await stack.api.post(`/v1/subscriptions/${subOn.id}/cancel`, { cancel_at: 'immediately' })).status).toBe(200);
      await granting(c.id, subOn.id, false);
      expect((await check({ customer_id: c.id, feature_lookup_key: b.lookup_key })).body.allowed).toBe(false);
      const again = await subscribe(c.id, on);
      expect((await check({ customer_id: c.id, feature_lookup_key: b.lookup_key })).body.allowed).toBe(true);
      expect((await stack.api.post(`/v1/subscriptions/${again.id}/pause`, {})).status).toBe(200);
      await granting(c.id, again.id, false);
      expect((await check({ customer_id: c.id, feature_lookup_key: b.lookup_key })).body.allowed).toBe(false);
      // Entitlement changes count once billing-events bring them (ADR 0061).
      const boolCheck = { customer_id: c.id, feature_lookup_key: b.lookup_key };
      expect((await stack.api.put(`/v1/entitlements/${eOff.id}`, { is_enabled: true })).status).toBe(200);
      await checkShows(boolCheck, { allowed: true });
      expect((await stack.api.delete(`/v1/entitlements/${eOff.id}`)).status).toBe(204);
      await checkShows(boolCheck, { allowed: false });
    });

    it('an archived feature stops granting: the check gives 404 and the customer view leaves it out', async () => {
      const p = await plan();
      const f = await feature('BOOLEAN');
      await entitle(p, f.id);
      const c = await customer();
      await subscribe(c.id, p);
      expect((await check({ customer_id: c.id, feature_lookup_key: f.lookup_key })).body.allowed).toBe(true);
      expect((await stack.api.delete(`/v1/features/${f.id}`)).status).toBe(204);
      const res = await waitFor(async () => {
        const r = await check({ customer_id: c.id, feature_lookup_key: f.lookup_key });
        return r.status === 404 && r;
      }, { what: 'the archived feature gone from the check' });
      expect([res.status, res.body.error.internal_error, res.body.error.details.field]).toEqual([404, 'not_found', 'feature_lookup_key']);
      expect((await stack.api.get(`/v1/customers/${c.id}/entitlements`)).body.items).toEqual([]);
    });

    it('METERED hard limit: allowed while usage + quantity <= limit; remaining = limit − usage', async () => {
      const p = await plan();
      const f = await feature('METERED');
      await entitle(p, f.id, { usage_limit: '3', usage_reset_period: 'NEVER' });
      const c = await customer();
      const sub = await subscribe(c.id, p);
      const ask = (quantity?: string) => check({ customer_id: c.id, feature_lookup_key: f.lookup_key, ...(quantity ? { quantity } : {}) });
      const fresh = await ask();
      expect(fresh.body).toEqual({ allowed: true, feature_lookup_key: f.lookup_key, type: 'METERED', usage: '0', held: '0', limit: '3', remaining: '3', is_soft_limit: false, period_start: sub.start_date, period_end: null });
      await usage(c.external, [now(), now()]);
      expect((await checkShows({ customer_id: c.id, feature_lookup_key: f.lookup_key }, { usage: '2' })).body).toMatchObject({ allowed: true, usage: '2', limit: '3', remaining: '1' });
      expect((await ask('1.5')).body).toMatchObject({ allowed: false, usage: '2', remaining: '1' });
      expect((await ask('0')).body.allowed).toBe(true);
      await usage(c.external, [now()]);
      expect((await checkShows({ customer_id: c.id, feature_lookup_key: f.lookup_key }, { usage: '3' })).body).toMatchObject({ allowed: false, usage: '3', remaining: '0' });
      expect((await ask('0')).body.allowed).toBe(true);
    });

    it('METERED soft limit: always allowed, remaining goes below zero', async () => {
      const p = await plan();
      const f = await feature('METERED');
      await entitle(p, f.id, { usage_limit: '1', usage_reset_period: 'NEVER', is_soft_limit: true });
      const c = await customer();
      await subscribe(c.id, p);
      await usage(c.external, [now(), now(), now()]);
      expect((await check({ customer_id: c.id, feature_lookup_key: f.lookup_key, quantity: '5' })).body).toMatchObject({
        allowed: true,
        usage: '3',
        limit: '1',
        remaining: '-2',
        is_soft_limit: true,
      });
    });

    it('reset periods: usage counts from the start of the DAILY, MONTHLY, BILLING_PERIOD or NEVER window', async () => {
      const f = await feature('METERED');
      const plans = {
        DAILY: await plan(),
        MONTHLY: await plan(),
        BILLING_PERIOD: await plan(),
        NEVER: await plan(),
      };
      for (const [period, p] of Object.entries(plans)) await entitle(p, f.id, { usage_limit: '100', usage_reset_period: period });
      const c = await customer();
      const start = new Date(Date.now() - 40 * 86_400_000);
      const today = startOfDay();
      const month = startOfMonth();
      const times = [
        new Date(start.getTime() - 3_600_000), // before the subscription: never counts
        new Date(start.getTime() + 3_600_000),
        new Date(month.getTime() - 1000),
        month,
        new Date(today.getTime() - 1000),
        today,
        now(),
      ];
      await usage(c.external, times);
      const expected: Record<string, (sub: { current_period_start: string; current_period_end: string }) => [Date, Date | null]> = {
        DAILY: () => [today, new Date(today.getTime() + 86_400_000)],
        MONTHLY: () => [month, new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1))],
        BILLING_PERIOD: (sub) => [new Date(sub.current_period_start), new Date(sub.current_period_end)],
        NEVER: () => [start, null],
      };
      for (const [period, p] of Object.entries(plans)) {
        const sub = await subscribe(c.id, p, { start_date: start.toISOString() });
        const [from, to] = expected[period](sub);
        const counted = times.filter((t) => t >= from && (!to || t < to)).length;
        const res = await check({ customer_id: c.id, feature_lookup_key: f.lookup_key });
        expect([period, res.body]).toEqual([
          period,
          { allowed: true, feature_lookup_key: f.lookup_key, type: 'METERED', usage: String(counted), held: '0', limit: '100', remaining: String(100 - counted), is_soft_limit: false, period_start: from.toISOString(), period_end: to ? to.toISOString() : null },
        ]);
        await stack.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancel_at: 'immediately' });
        await granting(c.id, sub.id, false);
      }
    });

    it('several subscriptions: limits add up, usage counts from the latest start, one unlimited grant wins', async () => {
      const f = await feature('METERED');
      const [monthly, daily, unlimited] = [await plan(), await plan(), await plan()];
      const eMonthly = await entitle(monthly, f.id, { usage_limit: '10', usage_reset_period: 'MONTHLY' });
      const eDaily = await entitle(daily, f.id, { usage_limit: '2.5', usage_reset_period: 'DAILY' });
      await entitle(unlimited, f.id, { usage_limit: null, usage_reset_period: 'MONTHLY' });
      const c = await customer();
      const today = startOfDay();
      const times = [new Date(today.getTime() - 1000), now(), now()];
      await usage(c.external, times);
      const sMonthly = await subscribe(c.id, monthly);
      const sDaily = await subscribe(c.id, daily);
      const res = await check({ customer_id: c.id, feature_lookup_key: f.lookup_key, quantity: '10.5' });
      expect(res.body).toEqual({
        allowed: true,
        feature_lookup_key: f.lookup_key,
        type: 'METERED',
        usage: '2',
        held: '0',
        limit: '12.5',
        remaining: '10.5',
        is_soft_limit: false,
        period_start: today.toISOString(),
        period_end: new Date(today.getTime() + 86_400_000).toISOString(),
      });
      expect((await check({ customer_id: c.id, feature_lookup_key: f.lookup_key, quantity: '10.6' })).body.allowed).toBe(false);
      const view = (await stack.api.get(`/v1/customers/${c.id}/entitlements`)).body.items;
      expect(view).toEqual([
        {
          feature_id: f.id,
          feature_lookup_key: f.lookup_key,
          type: 'METERED',
          is_enabled: true,
          usage_limit: '12.5',
          usage: '2',
          is_soft_limit: false,
          static_value: null,
          usage_reset_period: 'DAILY',
          period_start: today.toISOString(),
          period_end: new Date(today.getTime() + 86_400_000).toISOString(),
          sources: expect.arrayContaining([
            { subscription_id: sMonthly.id, entitlement_id: eMonthly.id },
            { subscription_id: sDaily.id, entitlement_id: eDaily.id },
          ]),
        },
      ]);
      await subscribe(c.id, unlimited);
      // A MONTHLY window starts before today: the DAILY one still sets where usage counts from.
      const unl = await check({ customer_id: c.id, feature_lookup_key: f.lookup_key, quantity: '1000000' });
      expect(unl.body).toMatchObject({ allowed: true, usage: '2', limit: null, remaining: null });
      const unlView = (await stack.api.get(`/v1/customers/${c.id}/entitlements`)).body.items[0];
      expect(unlView).toMatchObject({ usage_limit: null, usage: '2', usage_reset_period: 'DAILY' });
      expect(unlView.sources).toHaveLength(3);
    });

    it('concurrent checks of many customers (their reads batched together, ADR 0025) each get their own answer', async () => {
      const f = await feature('METERED');
      const b = await feature('BOOLEAN');
      const plans = [await plan(), await plan(), await plan()];
      for (const [i, p] of plans.entries()) await entitle(p, f.id, { usage_limit: String(10 * (i + 1)), usage_reset_period: 'NEVER' });
      await entitle(plans[0], b.id);
      const customers: Array<{ id: string; external: string; plan: number | null; used: number }> = [];
      for (let i = 0; i < 12; i += 1) {
        const c = await customer();
        const planIndex = i % 4 === 3 ? null : i % 3;
        if (planIndex !== null) await subscribe(c.id, plans[planIndex]);
        customers.push({ ...c, plan: planIndex, used: i % 5 });
      }
      const events = customers.flatMap((c) => Array.from({ length: c.used }, () => ({ event_id: unique('e'), event_name: 'api_call', external_customer_id: c.external, timestamp: now().toISOString() })));
      expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
      for (const c of customers) {
        await waitFor(async () => (await stack.api.post('/v1/events/query', { external_customer_id: c.external })).body.total_count >= c.used, { what: 'events stored' });
      }
      const expected = (c: (typeof customers)[number]) =>
        c.plan === null
          ? [{ allowed: false, usage: null, limit: '0', remaining: '0' }, { allowed: false }]
          : [{ allowed: true, usage: String(c.used), limit: String(10 * (c.plan + 1)), remaining: String(10 * (c.plan + 1) - c.used) }, { allowed: c.plan === 0 }];
      // Twice: once with nothing cached, once with the grants and usage just read.
      for (let round = 0; round < 2; round += 1) {
        const asked = customers.flatMap((c, i) => {
          const ref = i % 2 === 0 ? { customer_id: c.id } : { external_customer_id: c.external };
          return [check({ ...ref, feature_lookup_key: f.lookup_key }), check({ ...ref, feature_lookup_key: b.lookup_key })];
        });
        const unknown = [check({ customer_id: 'cust_nope', feature_lookup_key: f.lookup_key }), check({ external_customer_id: 'nobody-here', feature_lookup_key: f.lookup_key })];
        const answers = await Promise.all(asked);
        customers.forEach((c, i) => {
          const [metered, boolean] = expected(c);
          expect([c.external, answers[2 * i].status, answers[2 * i].body]).toEqual([c.external, 200, expect.objectContaining(metered)]);
          expect([c.external, answers[2 * i + 1].status, answers[2 * i + 1].body]).toEqual([c.external, 200, expect.objectContaining(boolean)]);
        });
        expect((await Promise.all(unknown)).map((r) => [r.status, r.body.error?.details?.field])).toEqual([
          [404, 'customer_id'],
          [404, 'external_customer_id'],
        ]);
      }
    });

    it('an entitlement, feature or subscription change reaches the check (through billing-events, ADR 0061); new usage within the usage lifetime', async () => {
      const f = await feature('METERED');
      const [p, q] = [await plan(), await plan()];
      const e = await entitle(p, f.id, { usage_limit: '5', usage_reset_period: 'NEVER' });
      const c = await customer();
      const sub = await subscribe(c.id, p);
      const body = { customer_id: c.id, feature_lookup_key: f.lookup_key };
      const ask = () => check(body);
      expect((await ask()).body).toMatchObject({ allowed: true, limit: '5' });
      expect((await ask()).body).toMatchObject({ allowed: true, limit: '5' });
      expect((await stack.api.put(`/v1/entitlements/${e.id}`, { usage_limit: '0' })).status).toBe(200);
      expect((await checkShows(body, { limit: '0' })).body).toMatchObject({ allowed: false, limit: '0', remaining: '0' });
      await entitle(q, f.id, { usage_limit: '7', usage_reset_period: 'NEVER' });
      expect((await ask()).body).toMatchObject({ allowed: false, limit: '0' });
      const second = await subscribe(c.id, q);
      expect((await ask()).body).toMatchObject({ allowed: true, limit: '7' });
      expect((await stack.api.post(`/v1/subscriptions/${second.id}/cancel`, { cancel_at: 'immediately' })).status).toBe(200);
      expect((await checkShows(body, { limit: '0' })).body).toMatchObject({ allowed: false, limit: '0' });
      expect((await stack.api.put(`/v1/entitlements/${e.id}`, { usage_limit: '5' })).status).toBe(200);
      await usage(c.external, [now()]);
      expect((await checkShows(body, { usage: '1', limit: '5' })).body).toMatchObject({ allowed: true, limit: '5', remaining: '4' });
      expect((await stack.api.post(`/v1/subscriptions/${sub.id}/pause`, {})).status).toBe(200);
      expect((await checkShows(body, { limit: '0' })).body).toMatchObject({ allowed: false, usage: null, limit: '0' });
      expect((await stack.api.post(`/v1/subscriptions/${sub.id}/resume`, {})).status).toBe(200);
      expect((await checkShows(body, { limit: '5' })).body).toMatchObject({ allowed: true, limit: '5' });
      expect((await stack.api.delete(`/v1/features/${f.id}`)).status).toBe(204);
      await waitFor(async () => (await ask()).status === 404, { what: 'the archived feature gone from the check' });
    });

    it('cache (ADR 0026): kept usage is dropped by the aggregator\'s usage-recorded notice, a kept customer by its deletion', async () => {
      const f = await feature('METERED');
      const b = await feature('BOOLEAN');
      const p = await plan();
      await entitle(p, f.id, { usage_limit: '10', usage_reset_period: 'NEVER' });
      await entitle(p, b.id);
      const c = await customer();
      await subscribe(c.id, p);
      const metered = { external_customer_id: c.external, feature_lookup_key: f.lookup_key };
      // Usage is now kept 30 s while notices are heard: twice the same answer, from the cache.
      expect((await check(metered)).body).toMatchObject({ usage: '0', remaining: '10' });
      expect((await check(metered)).body).toMatchObject({ usage: '0', remaining: '10' });
      for (let i = 1; i <= 2; i += 1) {
        await usage(c.external, [now()]);
        // Stored: the notice follows within moments, far within the 30 s the usage is kept.
        const shown = await waitFor(async () => {
          const res = await check(metered);
          return res.body.usage === String(i) && res;
        }, { timeoutMs: 10_000, what: `usage ${i} shown` });
        expect(shown.body).toMatchObject({ remaining: String(10 - i) });
      }
      // The customer is kept too (by id and by external id); its deletion reaches the projection and drops it.
      const byId = { customer_id: c.id, feature_lookup_key: b.lookup_key };
      expect((await check(byId)).body.allowed).toBe(true);
      expect((await stack.api.delete(`/v1/customers/${c.id}`)).status).toBe(204);
      // A customer with no subscription (nothing else of it changes when it is deleted) too.
      const bare = await customer();
      const bareCheck = { external_customer_id: bare.external, feature_lookup_key: b.lookup_key };
      expect((await check(bareCheck)).body.allowed).toBe(false);
      expect((await check(bareCheck)).body.allowed).toBe(false);
      expect((await stack.api.delete(`/v1/customers/${bare.id}`)).status).toBe(204);
      // Within 10 s: the customer is kept up to 15 s when no notice drops it.
      for (const body of [byId, metered, bareCheck]) {
        await waitFor(async () => (await check(body)).status === 404, { timeoutMs: 10_000, what: 'the deleted customer gone from the check' });
      }
    });
  });
});
