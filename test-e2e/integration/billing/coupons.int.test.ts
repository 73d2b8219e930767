import { createDb, type Db } from '@billstream/db';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

/**
 * Coupons and discounts (docs/api/coupons.md, ADR 0040) as a client meets them: through the
 * gateway, on the whole stack with real Postgres and Kafka. The period job's schedule is off;
 * the tests run it with POST /v1/cron/bill-subscriptions. A "next period" is made real by
 * DAILY subscriptions started a day minus a few seconds ago (their second period starts a few
 * seconds into the test), earlier periods by backdated ones.
 */
const DAY = 86_400_000;
const monthly = (amount: string) => ({ type: 'FIXED', currency: 'usd', amount, billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' });
const daily = { type: 'FIXED', currency: 'usd', amount: '1', billing_model: 'FLAT_FEE', billing_period: 'DAILY', invoice_cadence: 'ADVANCE' };

interface Line {
  id: string;
  price_id: string;
  amount: number;
  discount_amount: number;
  net_amount: number;
  period_start: string;
}
interface Invoice {
  id: string;
  billing_reason: string;
  period_start: string;
  status: string;
  subtotal: number;
  total_discount: number;
  discounts: Array<{ discount_id: string; amount: number }>;
  total: number;
  amount_due: number;
  line_items: Line[];
}
interface Discount {
  id: string;
  coupon_id: string;
  periods_remaining: number | null;
  status: string;
}

describe('coupons and discounts through the gateway (real Postgres and Kafka)', () => {
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
    const res = await stack.api.post('/v1/customers', { external_customer_id: `coupons-${++n}-${Date.now()}` });
    expect(res.status).toBe(201);
    return res.body.id;
  }
  async function plan(prices: unknown[]): Promise<{ id: string; priceIds: string[] }> {
    const res = await stack.api.post('/v1/plans', { name: 'Coupons', prices });
    expect(res.status).toBe(201);
    return { id: res.body.id, priceIds: (res.body.prices as Array<{ id: string; amount: string }>).map((p) => p.id) };
  }
  async function coupon(body: Record<string, unknown>) {
    const res = await stack.api.post('/v1/coupons', { name: 'Launch', type: 'PERCENTAGE', percent_off: '10', duration: 'FOREVER', ...body });
    expect(res.status).toBe(201);
    return res.body as { id: string; code: string | null; times_redeemed: number; status: string };
  }
  async function subscribe(planId: string, extra: Record<string, unknown> = {}) {
    const res = await stack.api.post('/v1/subscriptions', { customer_id: await customer(), plan_id: planId, ...extra });
    expect(res.status).toBe(201);
    return res.body as { id: string; customer_id: string; status: string };
  }
  const invoicesOf = async (subscriptionId: string): Promise<Invoice[]> => {
    const res = await stack.api.get(`/v1/invoices?subscription_id=${subscriptionId}&limit=100`);
    expect(res.status).toBe(200);
    return (res.body.items as Invoice[]).sort((a, b) => a.line_items[0]!.period_start.localeCompare(b.line_items[0]!.period_start));
  };
  const discountsOf = async (subscriptionId: string): Promise<Discount[]> => {
    const res = await stack.api.get(`/v1/subscriptions/${subscriptionId}/discounts`);
    expect(res.status).toBe(200);
    return res.body.items;
  };
  const attach = (subscriptionId: string, body: Record<string, unknown>) => stack.api.post(`/v1/subscriptions/${subscriptionId}/discounts`, body);
  const fieldOf = (res: { status: number; body: { error?: { internal_error: string; details?: { field?: string } } } }) => [res.status, res.body.error?.internal_error, res.body.error?.details?.field];

  describe('the coupon API', () => {
    it('creates, reads, lists, updates with If-Match and archives a coupon', async () => {
      const made = await stack.api.post('/v1/coupons', { name: 'Spring', code: `SPRING-${Date.now()}`, type: 'PERCENTAGE', percent_off: '12.5000', duration: 'REPEATING', duration_in_periods: 3, metadata: { team: 'growth' } });
      expect([made.status, made.headers.etag]).toEqual([201, '"1"']);
      expect(made.body).toMatchObject({ type: 'PERCENTAGE', percent_off: '12.5', amount_off: null, currency: null, duration: 'REPEATING', duration_in_periods: 3, times_redeemed: 0, status: 'active', metadata: { team: 'growth' } });
      expect(made.body.id).toMatch(/^coup_/);
      const url = `/v1/coupons/${made.body.id}`;
      expect((await stack.api.get(url)).body).toEqual(made.body);
      const listed = await stack.api.get(`/v1/coupons?code=${made.body.code}`);
      expect(listed.body.items.map((c: { id: string }) => c.id)).toEqual([made.body.id]);

      const updated = await stack.api.put(url, { name: 'Spring sale' }, { 'If-Match': '"1"' });
      expect([updated.status, updated.headers.etag, updated.body.name, updated.body.percent_off]).toEqual([200, '"2"', 'Spring sale', '12.5']);
      const stale = await stack.api.put(url, { name: 'Stale' }, { 'If-Match': '"1"' });
      expect([stale.status, stale.body.error.internal_error]).toEqual([409, 'version_conflict']);
      expect((await stack.api.get(url)).body.name).toBe('Spring sale');
      expect(fieldOf(await stack.api.put(url, { percent_off: '50' }))).toEqual([400, 'validation_error', 'percent_off']);

      expect((await stack.api.delete(url)).status).toBe(204);
      expect((await stack.api.get(url)).body).toMatchObject({ status: 'archived' });
      expect((await stack.api.get(`/v1/coupons?status=archived&code=${made.body.code}`)).body.items).toHaveLength(1);
      expect((await stack.api.delete(url)).status).toBe(204);
      expect((await stack.api.get('/v1/coupons/coup_missing')).status).toBe(404);
      expect((await stack.api.delete('/v1/coupons/coup_missing')).status).toBe(404);
      expect((await stack.api.put('/v1/coupons/coup_missing', { name: 'x' })).status).toBe(404);
    });

    it('refuses mismatched fields naming the field, a taken code (409) and an unknown price (404), writing nothing', async () => {
      const before = Number((await billingDb('coupons').count({ n: '*' }))[0]!.n);
      const base = { name: 'Bad', duration: 'ONCE' };
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...base, type: 'PERCENTAGE' }, 'percent_off'],
        [{ ...base, type: 'PERCENTAGE', percent_off: '0' }, 'percent_off'],
        [{ ...base, type: 'PERCENTAGE', percent_off: '100.01' }, 'percent_off'],
        [{ ...base, type: 'PERCENTAGE', percent_off: '1.23456' }, 'percent_off'],
        [{ ...base, type: 'PERCENTAGE', percent_off: 10 }, 'percent_off'],
        [{ ...base, type: 'PERCENTAGE', percent_off: '10', amount_off: 100 }, 'amount_off'],
        [{ ...base, type: 'PERCENTAGE', percent_off: '10', currency: 'usd' }, 'currency'],
        [{ ...base, type: 'FIXED_AMOUNT', amount_off: 100 }, 'currency'],
        [{ ...base, type: 'FIXED_AMOUNT', currency: 'usd' }, 'amount_off'],
        [{ ...base, type: 'FIXED_AMOUNT', amount_off: 1.5, currency: 'usd' }, 'amount_off'],
        [{ ...base, type: 'FIXED_AMOUNT', amount_off: 100, currency: 'usd', percent_off: '5' }, 'percent_off'],
        [{ ...base, type: 'PERCENTAGE', percent_off: '10', duration_in_periods: 2 }, 'duration_in_periods'],
        [{ ...base, type: 'PERCENTAGE', percent_off: '10', duration: 'REPEATING' }, 'duration_in_periods'],
        [{ ...base, type: 'PERCENTAGE', percent_off: '10', duration: 'REPEATING', duration_in_periods: 1001 }, 'duration_in_periods'],
        [{ ...base, type: 'PERCENTAGE', percent_off: '10', duration: 'WEEKLY' }, 'duration'],
        [{ ...base, type: 'PERCENTAGE', percent_off: '10', max_redemptions: 0 }, 'max_redemptions'],
        [{ ...base, type: 'PERCENTAGE', percent_off: '10', redeem_by: 'tomorrow' }, 'redeem_by'],
        [{ ...base, type: 'PERCENTAGE', percent_off: '10', code: 'has space' }, 'code'],
        [{ ...base, type: 'PERCENTAGE', percent_off: '10', applies_to_price_ids: [] }, 'applies_to_price_ids'],
      ];
      for (const [body, field] of cases) expect([body, ...fieldOf(await stack.api.post('/v1/coupons', body))]).toEqual([body, 400, 'validation_error', field]);

      const code = `ONLY-${Date.now()}`;
      await coupon({ code });
      const taken = await stack.api.post('/v1/coupons', { name: 'Again', code, type: 'FIXED_AMOUNT', amount_off: 100, currency: 'usd', duration: 'ONCE' });
      expect(fieldOf(taken)).toEqual([409, 'already_exists', 'code']);
      const unknownPrice = await stack.api.post('/v1/coupons', { ...base, type: 'PERCENTAGE', percent_off: '10', applies_to_price_ids: ['price_missing'] });
      expect(fieldOf(unknownPrice)).toEqual([404, 'not_found', 'applies_to_price_ids']);
      expect(Number((await billingDb('coupons').count({ n: '*' }))[0]!.n)).toBe(before + 1);
    });
  });

  describe('attaching', () => {
    it('refuses archived, expired, used-up, other-currency coupons and cancelled subscriptions (400 coupon_id), a second attach (409), unknown ones (404)', async () => {
      const { id: planId } = await plan([monthly('10')]);
      const sub = await subscribe(planId);
      const archived = await coupon({});
      expect((await stack.api.delete(`/v1/coupons/${archived.id}`)).status).toBe(204);
      const expired = await coupon({ redeem_by: new Date(Date.now() - 60_000).toISOString() });
      const usedUp = await coupon({ max_redemptions: 1 });
      expect((await attach((await subscribe(planId)).id, { coupon_id: usedUp.id })).status).toBe(201);
      const euros = await coupon({ type: 'FIXED_AMOUNT', percent_off: undefined, amount_off: 500, currency: 'eur' });
      for (const c of [archived, expired, usedUp, euros]) expect([c.id, ...fieldOf(await attach(sub.id, { coupon_id: c.id }))]).toEqual([c.id, 400, 'validation_error', 'coupon_id']);

      const good = await coupon({ code: `GOOD-${Date.now()}` });
      const first = await attach(sub.id, { code: good.code });
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ coupon_id: good.id, periods_remaining: null, status: 'active' });
      expect(first.body.id).toMatch(/^disc_/);
      expect(fieldOf(await attach(sub.id, { coupon_id: good.id }))).toEqual([409, 'already_exists', 'coupon_id']);
      expect((await stack.api.get(`/v1/coupons/${good.id}`)).body.times_redeemed).toBe(1);
      const events = await billingDb('outbox').where({ message_key: sub.id }).orderBy('id');
      expect(events.map((e: { value: string }) => JSON.parse(e.value).type)).toEqual(['subscription.created', 'subscription.updated']);

      expect(fieldOf(await attach(sub.id, { coupon_id: 'coup_missing' }))).toEqual([404, 'not_found', 'coupon_id']);
      expect(fieldOf(await attach(sub.id, { code: 'NO-SUCH-CODE' }))).toEqual([404, 'not_found', 'code']);
      expect(fieldOf(await attach(sub.id, {}))).toEqual([400, 'validation_error', 'coupon_id']);
      expect(fieldOf(await attach('sub_missing', { coupon_id: good.id }))).toEqual([404, 'not_found', 'id']);

      const cancelled = await subscribe(planId);
      expect((await stack.api.post(`/v1/subscriptions/${cancelled.id}/cancel`, {})).status).toBe(200);
      expect(fieldOf(await attach(cancelled.id, { coupon_id: (await coupon({})).id }))).toEqual([400, 'validation_error', 'coupon_id']);

      // On create, a refused coupon refuses the subscription: nothing written.
      const cust = await customer();
      const refused = await stack.api.post('/v1/subscriptions', { customer_id: cust, plan_id: planId, discounts: [{ coupon_id: good.id }, { coupon_id: archived.id }] });
      expect(fieldOf(refused)).toEqual([400, 'validation_error', 'coupon_id']);
      expect((await stack.api.get(`/v1/subscriptions?customer_id=${cust}`)).body.items).toEqual([]);
      expect((await stack.api.get(`/v1/coupons/${good.id}`)).body.times_redeemed).toBe(1);
    });

    it('lets exactly max_redemptions of 20 concurrent attaches succeed', async () => {
      const { id: planId } = await plan([monthly('10')]);
      const subs = await Promise.all(Array.from({ length: 20 }, () => subscribe(planId)));
      const limited = await coupon({ max_redemptions: 7 });
      const results = await Promise.all(subs.map((s) => attach(s.id, { coupon_id: limited.id })));
      expect(results.filter((r) => r.status === 201)).toHaveLength(7);
      expect(results.filter((r) => r.status !== 201).map(fieldOf)).toEqual(Array.from({ length: 13 }, () => [400, 'validation_error', 'coupon_id']));
      expect((await stack.api.get(`/v1/coupons/${limited.id}`)).body.times_redeemed).toBe(7);
      expect(Number((await billingDb('subscription_discounts').where({ coupon_id: limited.id }).count({ n: '*' }))[0]!.n)).toEqual(7);
    });

    it('removes a discount: invoices made afterwards leave it out', async () => {
      const { id: planId } = await plan([daily]);
      const c = await coupon({ percent_off: '50' });
      const sub = await subscribe(planId, { start_date: new Date(Date.now() - DAY + 4_000).toISOString() });
      const d = await attach(sub.id, { coupon_id: c.id });
      expect(d.status).toBe(201);
      expect((await stack.api.delete(`/v1/subscriptions/${sub.id}/discounts/${d.body.id}`)).status).toBe(204);
      expect((await stack.api.delete(`/v1/subscriptions/${sub.id}/discounts/disc_missing`)).status).toBe(404);
      expect((await discountsOf(sub.id)).map((x) => x.status)).toEqual(['removed']);
      await new Promise((r) => setTimeout(r, 5_000));
      await cron();
      const invoices = await invoicesOf(sub.id);
      expect(invoices.map((i) => i.total_discount)).toEqual([0, 0]);
    });
  });

  describe('on invoices', () => {
    it('takes a PERCENTAGE coupon off the lines, rounded once, spread by largest remainder', async () => {
      const { id: planId } = await plan([monthly('19.99'), monthly('9.99')]);
      const c = await coupon({ percent_off: '15', code: `PCT-${Date.now()}` });
      const sub = await subscribe(planId, { discounts: [{ code: c.code }] });
      const [d] = await discountsOf(sub.id);
      expect(d).toMatchObject({ coupon_id: c.id, periods_remaining: null, status: 'active' });
      const [invoice] = await invoicesOf(sub.id);
      // 15% of 2998 = 449.7 -> 450; 450 x 1999 / 2998 = 300.05, 450 x 999 / 2998 = 149.95: the unit goes to the larger remainder.
      expect(invoice.line_items.map((l) => [l.amount, l.discount_amount, l.net_amount])).toEqual([
        [1999, 300, 1699],
        [999, 150, 849],
      ]);
      expect(invoice).toMatchObject({ subtotal: 2998, total_discount: 450, discounts: [{ discount_id: d!.id, amount: 450 }], total: 2548, amount_due: 2548 });
      expect((await stack.api.get(`/v1/coupons/${c.id}`)).body.times_redeemed).toBe(1);
    });

    it('caps a FIXED_AMOUNT coupon at what the lines have left', async () => {
      const { id: planId } = await plan([monthly('19.99'), monthly('9.99')]);
      const c = await coupon({ type: 'FIXED_AMOUNT', percent_off: undefined, amount_off: 5000, currency: 'usd' });
      const small = await coupon({ type: 'FIXED_AMOUNT', percent_off: undefined, amount_off: 1000, currency: 'usd' });
      const capped = await subscribe(planId, { discounts: [{ coupon_id: c.id }] });
      const [all] = await invoicesOf(capped.id);
      expect(all.line_items.map((l) => [l.discount_amount, l.net_amount])).toEqual([
        [1999, 0],
        [999, 0],
      ]);
      expect(all).toMatchObject({ subtotal: 2998, total_discount: 2998, total: 0, amount_due: 0 });
      const part = await subscribe(planId, { discounts: [{ coupon_id: small.id }] });
      const [some] = await invoicesOf(part.id);
      // 1000 x 1999 / 2998 = 666.78, 1000 x 999 / 2998 = 333.22: 667 and 333.
      expect(some.line_items.map((l) => [l.discount_amount, l.net_amount])).toEqual([
        [667, 1332],
        [333, 666],
      ]);
      expect(some).toMatchObject({ total_discount: 1000, total: 1998 });
    });

    it('discounts only the lines of applies_to_price_ids; several discounts apply in attach order', async () => {
      const { id: planId, priceIds } = await plan([monthly('19.99'), monthly('9.99')]);
      const half = await coupon({ percent_off: '50', applies_to_price_ids: [priceIds[1]] });
      const tenth = await coupon({ percent_off: '10' });
      const sub = await subscribe(planId, { discounts: [{ coupon_id: half.id }, { coupon_id: tenth.id }] });
      const [invoice] = await invoicesOf(sub.id);
      const [dHalf, dTenth] = await discountsOf(sub.id);
      // 50% of 999 = 499.5 -> 500 on the second line only; then 10% of what is left (1999 + 499 = 2498) = 249.8 -> 250,
      // spread: 250 x 1999 / 2498 = 200.06, 250 x 499 / 2498 = 49.94 -> 200 and 50.
      const byPrice = new Map(invoice.line_items.map((l) => [l.price_id, [l.discount_amount, l.net_amount]]));
      expect(byPrice.get(priceIds[0]!)).toEqual([200, 1799]);
      expect(byPrice.get(priceIds[1]!)).toEqual([550, 449]);
      expect(invoice).toMatchObject({
        total_discount: 750,
        discounts: [
          { discount_id: dHalf!.id, amount: 500 },
          { discount_id: dTenth!.id, amount: 250 },
        ],
        total: 2248,
      });
    });

    it('lists discounts like every other list (ADR 0058): {items, pagination} with limit and offset, in attach order', async () => {
      const { id: planId } = await plan([monthly('19.99')]);
      const coupons = [await coupon({ percent_off: '5' }), await coupon({ percent_off: '6' }), await coupon({ percent_off: '7' })];
      const sub = await subscribe(planId, { discounts: coupons.map((c) => ({ coupon_id: c.id })) });
      const all = await stack.api.get(`/v1/subscriptions/${sub.id}/discounts`);
      expect(all.status).toBe(200);
      expect(all.body.pagination).toEqual({ total: 3, limit: 50, offset: 0 });
      expect(all.body.items.map((d: Discount & { coupon_id: string }) => d.coupon_id)).toEqual(coupons.map((c) => c.id));
      const page = await stack.api.get(`/v1/subscriptions/${sub.id}/discounts?limit=1&offset=1`);
      expect(page.body).toEqual({ items: [all.body.items[1]], pagination: { total: 3, limit: 1, offset: 1 } });
      expect((await stack.api.get(`/v1/subscriptions/${sub.id}/discounts?offset=3`)).body).toEqual({ items: [], pagination: { total: 3, limit: 50, offset: 3 } });
      for (const [query, field] of [
        ['limit=0', 'limit'],
        ['limit=1001', 'limit'],
        ['offset=-1', 'offset'],
        ['status=active', 'status'],
      ]) {
        expect({ query, answer: fieldOf(await stack.api.get(`/v1/subscriptions/${sub.id}/discounts?${query}`)) }).toEqual({ query, answer: [400, 'validation_error', field] });
      }
      expect(fieldOf(await stack.api.get('/v1/subscriptions/sub_unknown/discounts?limit=1'))[0]).toBe(404);
    });

    it('covers a REPEATING coupon for 2 billed periods, the period job included, then ends it; re-runs store one amount per (invoice, discount)', async () => {
      const { id: planId } = await plan([daily]);
      const c = await coupon({ percent_off: '50', duration: 'REPEATING', duration_in_periods: 2 });
      // Backdated three days: its first period and the next three are invoiced at once.
      const backdated = await subscribe(planId, { start_date: new Date(Date.now() - 3 * DAY - 60_000).toISOString(), discounts: [{ coupon_id: c.id }] });
      expect((await invoicesOf(backdated.id)).map((i) => i.total_discount)).toEqual([50, 50, 0, 0]);
      expect(await discountsOf(backdated.id)).toMatchObject([{ periods_remaining: 0, status: 'ended' }]);

      // Its second period starts a few seconds from now: the period job bills it.
      const sub = await subscribe(planId, { start_date: new Date(Date.now() - DAY + 4_000).toISOString(), discounts: [{ coupon_id: c.id }] });
      expect((await invoicesOf(sub.id)).map((i) => [i.billing_reason, i.total_discount, i.total])).toEqual([['SUBSCRIPTION_CREATE', 50, 50]]);
      expect(await discountsOf(sub.id)).toMatchObject([{ periods_remaining: 1, status: 'active' }]);
      await new Promise((r) => setTimeout(r, 5_000));
      // Three runs at once (replicas) and two more: one invoice per period, one amount per (invoice, discount).
      await Promise.all([cron(), cron(), cron()]);
      await cron();
      await cron();
      const invoices = await invoicesOf(sub.id);
      expect(invoices.map((i) => [i.billing_reason, i.total_discount, i.total, i.status])).toEqual([
        ['SUBSCRIPTION_CREATE', 50, 50, 'finalized'],
        ['SUBSCRIPTION_CYCLE', 50, 50, 'finalized'],
      ]);
      const [d] = await discountsOf(sub.id);
      expect(d).toMatchObject({ periods_remaining: 0, status: 'ended' });
      const stored = await billingDb('invoice_discounts').whereIn(
        'invoice_id',
        invoices.map((i) => i.id),
      );
      expect(stored.map((r: { discount_id: string; amount: string | number }) => [r.discount_id, Number(r.amount)])).toEqual([
        [d!.id, 50],
        [d!.id, 50],
      ]);
      // The upcoming invoice shows what the next period would take (nothing: the coupon ended) and stores nothing.
      const upcoming = await stack.api.get(`/v1/subscriptions/${sub.id}/upcoming-invoice`);
      expect([upcoming.status, upcoming.body.total_discount]).toEqual([200, 0]);
      expect(Number((await billingDb('invoice_discounts').where({ discount_id: d!.id }).count({ n: '*' }))[0]!.n)).toEqual(2);
    });

    it('shows a discount on the upcoming invoice without using or storing it', async () => {
      const { id: planId } = await plan([monthly('10')]);
      const c = await coupon({ percent_off: '25', duration: 'ONCE' });
      const sub = await subscribe(planId);
      const d = await attach(sub.id, { coupon_id: c.id });
      const upcoming = await stack.api.get(`/v1/subscriptions/${sub.id}/upcoming-invoice`);
      expect(upcoming.status).toBe(200);
      expect(upcoming.body).toMatchObject({ subtotal: 1000, total_discount: 250, discounts: [{ discount_id: d.body.id, amount: 250 }], total: 750 });
      expect(Number((await billingDb('invoice_discounts').where({ discount_id: d.body.id }).count({ n: '*' }))[0]!.n)).toEqual(0);
      expect(await discountsOf(sub.id)).toMatchObject([{ periods_remaining: 1, status: 'active' }]);
    });
  });
});
