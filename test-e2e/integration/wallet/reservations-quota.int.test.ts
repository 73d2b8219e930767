import { Exact } from '@billstream/money';
import { waitFor } from '@billstream/testing';
import { usagePrice } from '../billing/prices';
import { startReservationWorld, type ReservationWorld } from './reservations-support';

/**
 * Holds of METERED hard-limit entitlements and commits by quantity and by usage event
 * (docs/api/reservations.md, ADR 0070), through the gateway on real Postgres and Kafka: the
 * event of a commit goes through usage-events to the real aggregator, and the hold counts until
 * the check (or the real-time balance) counts it.
 */
describe('reservations of entitlements and commits by usage event through the gateway (real Postgres and Kafka)', () => {
  let w: ReservationWorld;
  let meterId: string;
  let seq = 0;
  const unique = (p: string) => `${p}-${(seq += 1)}-${Date.now()}`;

  beforeAll(async () => {
    w = await startReservationWorld('resv-quota', { UNBILLED_DEBOUNCE_MS: '100', BILLING_INTERVAL_MS: '0' });
    meterId = (await w.stack.api.post('/v1/meters', { name: 'tokens', event_name: unique('tokens'), aggregation: { type: 'SUM', field: 'tokens' } })).body.id;
  });
  afterAll(async () => {
    await w?.stop();
  });

  const api = () => w.stack.api;
  const meterEvent = async () => (await api().get(`/v1/meters/${meterId}`)).body.event_name as string;

  /** A customer subscribed to a plan granting a new METERED feature of the tokens meter, limited to `limit` (hard unless told). */
  async function entitled(limit: string, grant: Record<string, unknown> = {}, prices: unknown[] = []) {
    const feature = (await api().post('/v1/features', { name: 'Tokens', lookup_key: unique('tokens'), type: 'METERED', meter_id: meterId })).body;
    const plan = (await api().post('/v1/plans', { name: 'P', prices: prices.length ? prices : [{ type: 'FIXED', currency: 'usd', amount: '0', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }] })).body;
    expect((await api().post('/v1/entitlements', { plan_id: plan.id, feature_id: feature.id, usage_limit: limit, usage_reset_period: 'NEVER', ...grant })).status).toBe(201);
    const c = await w.customer();
    const sub = await api().post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id });
    expect(sub.status).toBe(201);
    const body = { customer_id: c.id, feature_lookup_key: feature.lookup_key, quantity: '0' };
    await waitFor(async () => (await api().post('/v1/entitlements/check', body)).body.limit === limit, { what: 'the grant in the check' });
    return { customer: c, feature, check: async () => (await api().post('/v1/entitlements/check', body)).body };
  }
  const hold = (customerId: string, featureId: string, quantity: string, extra: Record<string, unknown> = {}) =>
    api().post('/v1/reservations', { customer_id: customerId, feature_id: featureId, quantity, idempotency_key: unique('k'), ...extra });
  /** The check shows `held` within its freshness (1 s; the hold's event drops it sooner). */
  const heldShows = (check: () => Promise<{ held: string }>, held: string) =>
    waitFor(async () => (await check()).held === held, { timeoutMs: 2000, intervalMs: 20, what: `held ${held} on the check` });
  const usageOf = async (external: string, tokens: number) => {
    const name = await meterEvent();
    expect((await api().post('/v1/events', { event_name: name, external_customer_id: external, timestamp: new Date().toISOString(), event_id: unique('ev'), properties: { tokens } })).status).toBe(202);
  };

  it('200 parallel holds of 3 on a remaining 70: exactly floor(70 / 3) = 23 succeed, the others 402 insufficient_quota; the check shows held', async () => {
    const e = await entitled('100');
    await usageOf(e.customer.external, 30);
    await waitFor(async () => (await e.check()).usage === '30', { what: 'usage 30 in the check' });
    const answers = await Promise.all(Array.from({ length: 200 }, () => hold(e.customer.id, e.feature.id, '3', { expires_in: 600 })));
    const ok = answers.filter((a) => a.status === 201);
    expect(ok.length).toBe(23);
    expect(answers.filter((a) => a.status === 402).length).toBe(177);
    for (const refused of answers.filter((a) => a.status === 402)) {
      expect(refused.body.error.internal_error).toBe('insufficient_quota');
      expect(['1', '4', '7']).toContain(refused.body.error.details.available);
    }
    expect(ok[0].body).toMatchObject({
      status: 'held',
      wallet_id: null,
      credits_held: null,
      quantity_held: '3',
      entitlement: { feature_id: e.feature.id, feature_lookup_key: e.feature.lookup_key, meter_id: meterId, entitlement_ids: [expect.any(String)] },
    });
    // The check keeps `held` at most 1 s, dropped by the hold's reservation.* event (docs/api/entitlements.md, "Freshness").
    await heldShows(e.check, '69');
    expect(await e.check()).toMatchObject({ usage: '30', held: '69', limit: '100', remaining: '1' });
    expect((await api().post('/v1/entitlements/check', { customer_id: e.customer.id, feature_lookup_key: e.feature.lookup_key, quantity: '2' })).body.allowed).toBe(false);
    expect((await w.walletDb('reservations').where({ customer_id: e.customer.id })).length).toBe(23);
    const listed = (await api().get(`/v1/reservations?customer_id=${e.customer.id}&status=held&limit=100`)).body;
    expect(listed.pagination.total).toBe(23);
    // A release gives its quantity back at once to holds (the wallet decides), and to the check within its freshness.
    expect((await api().post(`/v1/reservations/${ok[0].body.id}/release`, {})).body.status).toBe('released');
    expect((await hold(e.customer.id, e.feature.id, '4')).status).toBe(201);
    await heldShows(e.check, '70');
    expect(await e.check()).toMatchObject({ held: '70', remaining: '0' });
  });

  it('refuses bad holds with a clear 4xx and writes nothing', async () => {
    const e = await entitled('10');
    const soft = await entitled('10', { is_soft_limit: true });
    const before = (await w.walletDb('reservations').count({ n: '*' }))[0].n;
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ customer_id: e.customer.id, feature_id: e.feature.id, quantity: '1', currency: 'usd' }, 400, 'currency'],
      [{ customer_id: e.customer.id, feature_id: e.feature.id, quantity: '1', credits: '1' }, 400, 'credits'],
      [{ customer_id: e.customer.id, feature_id: e.feature.id }, 400, 'quantity'],
      [{ customer_id: e.customer.id, quantity: '1' }, 400, 'feature_id'],
      [{ customer_id: e.customer.id, feature_id: e.feature.id, quantity: '0' }, 400, 'quantity'],
      [{ customer_id: e.customer.id, feature_id: 'feat_nope', quantity: '1' }, 404, 'feature_id'],
      [{ customer_id: soft.customer.id, feature_id: soft.feature.id, quantity: '1' }, 400, 'feature_id'],
      [{ customer_id: e.customer.id, feature_id: e.feature.id, quantity: '11' }, 402, 'quantity'],
    ];
    for (const [body, status, field] of cases) {
      const res = await api().post('/v1/reservations', { idempotency_key: unique('bad'), ...body });
      expect([res.status, res.body.error?.details?.field]).toEqual([status, field]);
    }
    expect((await w.walletDb('reservations').count({ n: '*' }))[0].n).toBe(before);
  });

  it('commit by quantity: one usage event (event_id = the reservation id); the committed quantity counts until the check counts the event, so remaining never rises above its final value', async () => {
    const e = await entitled('100');
    const r = (await hold(e.customer.id, e.feature.id, '10')).body;
    await heldShows(e.check, '10');
    expect(await e.check()).toMatchObject({ usage: '0', held: '10', remaining: '90' });
    const committed = await api().post(`/v1/reservations/${r.id}/commit`, { quantity: '4' });
    expect(committed.body).toMatchObject({ status: 'committed', quantity_committed: '4', event_id: r.id, settled_at: null });
    // A retry answers it unchanged and sends nothing more.
    expect((await api().post(`/v1/reservations/${r.id}/commit`, { quantity: '4' })).body).toMatchObject({ status: 'committed', quantity_committed: '4' });
    expect((await api().post(`/v1/reservations/${r.id}/commit`, { quantity: '5' })).body.error.details.field).toBe('status');
    const seen: string[] = [];
    await waitFor(
      async () => {
        const c = await e.check();
        seen.push(c.remaining);
        return (await api().get(`/v1/reservations/${r.id}`)).body.settled_at !== null && c.held === '0' && c.usage === '4';
      },
      { timeoutMs: 10_000, intervalMs: 20, what: 'the commit settled' },
    );
    // Counted twice for a moment (usage and the committed hold: 92), never once too few.
    expect(seen.filter((v) => new Exact(v).gt('96'))).toEqual([]);
    expect(await e.check()).toMatchObject({ usage: '4', held: '0', remaining: '96' });
    const stored = (await api().post('/v1/events/query', { external_customer_id: e.customer.external })).body.events;
    expect(stored.map((x: { id: string }) => x.id)).toEqual([r.id]);
  });

  it('a hold of an entitlement past expires_at stops counting at once and is written expired within 1 s', async () => {
    const e = await entitled('5');
    const r = (await hold(e.customer.id, e.feature.id, '5', { expires_in: 1 })).body;
    expect((await hold(e.customer.id, e.feature.id, '1')).status).toBe(402);
    const row = await waitFor(
      async () => {
        const x = await w.walletDb('reservations').where({ id: r.id }).first();
        return x.status === 'expired' ? x : undefined;
      },
      { timeoutMs: 5000, intervalMs: 20, what: 'the hold written expired' },
    );
    expect(new Date(row.ended_at).getTime() - Date.parse(r.expires_at)).toBeLessThan(1000);
    expect(await e.check()).toMatchObject({ held: '0', remaining: '5' });
  });

  it('commit by usage event of a hold of credits: ingested once, the hold kept until the real-time balance counts it, available never above its final value', async () => {
    // 0.5 usd a token (a SUM meter), credits at 1 usd: the event of 6 tokens costs 3 credits.
    const e = await entitled('1000', {}, [usagePrice(meterId)]);
    const walletRes = await api().post('/v1/wallets', { customer_id: e.customer.id, currency: 'USD', initial_credits_to_load: '20' });
    const walletId = walletRes.body.id as string;
    const r = (await w.reserve({ customer_id: e.customer.id, credits: '8' })).body;
    const balance = async () => (await api().get(`/v1/wallets/${walletId}/balance?include_real_time_balance=true`)).body;
    expect(await balance()).toMatchObject({ credits_held: '8', credits_available: '12' });
    const event = { event_name: await meterEvent(), external_customer_id: e.customer.external, timestamp: new Date().toISOString(), properties: { tokens: 6 } };
    const commits = await Promise.all([0, 1, 2].map(() => api().post(`/v1/reservations/${r.id}/commit`, { event })));
    for (const c of commits) expect(c.body).toMatchObject({ status: 'committed', event_id: r.id, transaction_id: null });
    const seen: string[] = [];
    await waitFor(
      async () => {
        const b = await balance();
        seen.push(b.credits_available);
        return (await api().get(`/v1/reservations/${r.id}`)).body.settled_at !== null && b.credits_held === '0';
      },
      { timeoutMs: 20_000, intervalMs: 20, what: 'the event commit settled' },
    );
    const final = await balance();
    expect(final).toMatchObject({ credit_balance: '20', real_time_credit_balance: '17', credits_held: '0', credits_available: '17' });
    expect(seen.filter((v) => new Exact(v).gt('17'))).toEqual([]);
    const stored = (await api().post('/v1/events/query', { external_customer_id: e.customer.external })).body.events;
    expect(stored.map((x: { id: string }) => x.id)).toEqual([r.id]);
    // A commit of another event is refused; a commit by event of a bad event names the field.
    expect((await api().post(`/v1/reservations/${r.id}/commit`, { event: { ...event, properties: { tokens: 7 } } })).body.error.details.field).toBe('status');
    const other = (await w.reserve({ customer_id: e.customer.id, credits: '1' })).body;
    expect((await api().post(`/v1/reservations/${other.id}/commit`, { event: { ...event, event_id: 'x' } })).body.error.details.field).toBe('event.event_id');
    expect((await api().post(`/v1/reservations/${other.id}/commit`, { event: { ...event, external_customer_id: 'someone-else' } })).body.error.details.field).toBe('event.external_customer_id');
    expect((await api().post(`/v1/reservations/${other.id}/commit`, { event: { ...event, timestamp: 'x' } })).body.error.details.field).toBe('event.timestamp');
  });
});
