import { createDb, type Db } from '@billstream/db';
import type { ApiClient } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { fixedPrice } from './prices';

/**
 * The billing API contract of issue #30 (ADR 0035) as a client meets it, through the gateway
 * on the whole stack with real Postgres and Kafka: the cron endpoint runs the caller's tenant
 * and environment only; the Idempotency-Key header works wherever a body idempotency_key does;
 * billing's PUTs honour If-Match; a prorated FIXED line carries its proration_factor.
 */
describe('the billing API contract (issue #30, ADR 0035)', () => {
  let stack: IntegrationStack;
  let billingDb: Db;
  let walletDb: Db;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0' } } });
    billingDb = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    walletDb = createDb({ databaseUrl: stack.database.url, schema: 'wallet', poolMax: 2 });
  });
  afterAll(async () => {
    await billingDb?.destroy();
    await walletDb?.destroy();
    await stack?.stop();
  });

  const client = async (tenantId: string, environmentId: string) => stack.api.withKey(await stack.keyFor(tenantId, environmentId));
  async function created(api: ApiClient, path: string, body: unknown): Promise<{ id: string } & Record<string, unknown>> {
    const res = await api.post(path, body);
    expect([res.status, res.body]).toEqual([201, expect.anything()]);
    return res.body;
  }

  describe('POST /v1/cron/bill-subscriptions runs the caller’s tenant and environment only', () => {
    interface Scoped {
      api: ApiClient;
      subscriptionId: string;
    }

    /** A DAILY subscription whose first period ends `endsInMs` from now, its first invoice a draft due for finalization. */
    async function dueSoon(api: ApiClient, name: string, endsInMs: number): Promise<Scoped> {
      const customer = await created(api, '/v1/customers', { external_customer_id: name });
      const plan = await created(api, '/v1/plans', { name, prices: [{ ...fixedPrice, amount: '10', billing_period: 'DAILY' }] });
      const start = new Date(Math.ceil((Date.now() - 86_400_000 + endsInMs) / 1000) * 1000).toISOString();
      const sub = await created(api, '/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, start_date: start });
      return { api, subscriptionId: sub.id };
    }
    const invoicesOf = async (s: Scoped) => (await s.api.get(`/v1/invoices?subscription_id=${s.subscriptionId}`)).body.items as Array<{ status: string; billing_reason: string }>;
    const periodOf = async (s: Scoped) => (await s.api.get(`/v1/subscriptions/${s.subscriptionId}`)).body.current_period_start as string;
    const cron = async (s: Scoped) => {
      const res = await s.api.post('/v1/cron/bill-subscriptions', {});
      expect(res.status).toBe(200);
      return res.body as { invoices_created: number; subscriptions_billed: number; invoices_finalized: number; invoices_marked_overdue: number };
    };

    it("bills and finalizes tenant A's only, answers A's counts, and leaves another tenant and another environment untouched", async () => {
      const a = await dueSoon(await client('cron-a', 'production'), 'cron-a', 6_000);
      const b = await dueSoon(await client('cron-b', 'production'), 'cron-b', 6_000);
      const staging = await dueSoon(await client('cron-a', 'staging'), 'cron-a-staging', 6_000);
      const before = { b: await periodOf(b), staging: await periodOf(staging), a: await periodOf(a) };
      for (const s of [a, b, staging]) expect((await invoicesOf(s)).map((i) => [i.billing_reason, i.status])).toEqual([['SUBSCRIPTION_CREATE', 'draft']]);
      // Every first period has ended.
      const ends = new Date(before.a).getTime() + 86_400_000;
      await new Promise((r) => setTimeout(r, Math.max(0, Math.max(...[before.b, before.staging].map((p) => new Date(p).getTime() + 86_400_000)), ends) - Date.now() + 500));

      const counts = await cron(a);
      const mine = await invoicesOf(a);
      expect(counts).toEqual({
        subscriptions_billed: 1,
        invoices_created: 1,
        invoices_finalized: mine.filter((i) => i.status !== 'draft').length,
        invoices_marked_overdue: expect.any(Number),
      });
      expect(counts.invoices_finalized).toBeGreaterThanOrEqual(1);
      expect(mine).toHaveLength(2);
      expect(await periodOf(a)).not.toBe(before.a);

      // B and A's staging environment: not billed, not finalized, no renewal notice.
      for (const [s, period] of [[b, before.b], [staging, before.staging]] as const) {
        expect(await periodOf(s)).toBe(period);
        expect((await invoicesOf(s)).map((i) => i.status)).toEqual(['draft']);
        expect(await billingDb('renewal_notices').where({ subscription_id: s.subscriptionId })).toEqual([]);
      }

      // Their own calls bill them, and count them alone.
      expect(await cron(b)).toMatchObject({ subscriptions_billed: 1, invoices_created: 1 });
      expect(await cron(staging)).toMatchObject({ subscriptions_billed: 1, invoices_created: 1 });
      expect(await cron(a)).toMatchObject({ subscriptions_billed: 0, invoices_created: 0, invoices_finalized: 0 });
    });
  });

  describe('the Idempotency-Key header', () => {
    let api: ApiClient;
    let customerId: string;

    beforeAll(async () => {
      api = await client('idem', 'production');
      customerId = (await created(api, '/v1/customers', { external_customer_id: 'idem-1' })).id;
    });

    const balance = async (walletId: string) => (await api.get(`/v1/wallets/${walletId}/balance`)).body.credit_balance as string;
    const transactionsOf = (walletId: string) => walletDb('transactions').where({ wallet_id: walletId });
    let wallets = 0;
    /** A usd wallet of a new customer (one wallet per customer and currency). */
    const wallet = async (credits = '0') => {
      const owner = (await created(api, '/v1/customers', { external_customer_id: `idem-wallet-${++wallets}` })).id;
      return (await created(api, '/v1/wallets', { customer_id: owner, currency: 'usd', ...(credits === '0' ? {} : { initial_credits_to_load: credits }) })).id;
    };

    it('credits a top-up retried with the same header once, alone or beside an equal body key', async () => {
      const w = await wallet();
      const first = await api.post(`/v1/wallets/${w}/topup`, { credits_to_add: '10' }, { 'Idempotency-Key': 'topup-1' });
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ credit_amount: '10', idempotency_key: 'topup-1' });
      const retry = await api.post(`/v1/wallets/${w}/topup`, { credits_to_add: '10' }, { 'Idempotency-Key': 'topup-1' });
      expect([retry.status, retry.body.id]).toEqual([201, first.body.id]);
      // The same key in the body, or in both: the same top-up.
      expect((await api.post(`/v1/wallets/${w}/topup`, { credits_to_add: '10', idempotency_key: 'topup-1' })).body.id).toBe(first.body.id);
      const both = await api.post(`/v1/wallets/${w}/topup`, { credits_to_add: '10', idempotency_key: 'topup-1' }, { 'Idempotency-Key': 'topup-1' });
      expect([both.status, both.body.id]).toEqual([201, first.body.id]);
      // The header's key with another body: 409, as the body's key.
      const other = await api.post(`/v1/wallets/${w}/topup`, { credits_to_add: '11' }, { 'Idempotency-Key': 'topup-1' });
      expect([other.status, other.body.error?.internal_error]).toEqual([409, 'idempotency_conflict']);
      expect(await balance(w)).toBe('10');
      expect(await transactionsOf(w)).toHaveLength(1);
    });

    it('refuses a header and a body key that differ with a 400 in the envelope, writing nothing', async () => {
      const w = await wallet();
      const res = await api.post(`/v1/wallets/${w}/topup`, { credits_to_add: '5', idempotency_key: 'body-key' }, { 'Idempotency-Key': 'header-key' });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        success: false,
        error: { internal_error: 'validation_error', message: expect.stringMatching(/Idempotency-Key header and body field idempotency_key differ/), details: { field: 'Idempotency-Key' } },
      });
      expect(await balance(w)).toBe('0');
      expect(await transactionsOf(w)).toEqual([]);
    });

    it("holds the header to the body field's rules: 255 characters pass, 256 are a 400 either way", async () => {
      const w = await wallet();
      const long = 'k'.repeat(256);
      const viaHeader = await api.post(`/v1/wallets/${w}/topup`, { credits_to_add: '1' }, { 'Idempotency-Key': long });
      const viaBody = await api.post(`/v1/wallets/${w}/topup`, { credits_to_add: '1', idempotency_key: long });
      expect([viaHeader.status, viaHeader.body.error.internal_error, viaHeader.body.error.details.field]).toEqual([400, 'validation_error', 'Idempotency-Key']);
      expect([viaBody.status, viaBody.body.error.internal_error, viaBody.body.error.details.field]).toEqual([400, 'validation_error', 'idempotency_key']);
      expect(await transactionsOf(w)).toEqual([]);
      const max = await api.post(`/v1/wallets/${w}/topup`, { credits_to_add: '1' }, { 'Idempotency-Key': 'k'.repeat(255) });
      expect([max.status, max.body.idempotency_key]).toEqual([201, 'k'.repeat(255)]);
    });

    it('debits a debit retried with the same header once', async () => {
      const w = await wallet('20');
      const first = await api.post(`/v1/wallets/${w}/debit`, { credits: '3' }, { 'Idempotency-Key': 'debit-1' });
      expect(first.status).toBe(201);
      const retry = await api.post(`/v1/wallets/${w}/debit`, { credits: '3' }, { 'Idempotency-Key': 'debit-1' });
      expect([retry.status, retry.body.id]).toEqual([201, first.body.id]);
      expect(await balance(w)).toBe('17');
      const mismatch = await api.post(`/v1/wallets/${w}/debit`, { credits: '3', idempotency_key: 'debit-2' }, { 'Idempotency-Key': 'debit-1' });
      expect([mismatch.status, mismatch.body.error.details.field]).toEqual([400, 'Idempotency-Key']);
      expect(await balance(w)).toBe('17');
    });

    it('records a payment retried with the same header once; a differing body key is a 400 that records nothing', async () => {
      const plan = await created(api, '/v1/plans', { name: 'Pay', prices: [fixedPrice] });
      const sub = await created(api, '/v1/subscriptions', { customer_id: customerId, plan_id: plan.id });
      const [draft] = (await api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.items;
      expect((await api.post(`/v1/invoices/${draft.id}/finalize`, {})).status).toBe(200);
      const body = { invoice_id: draft.id, amount: 900, payment_method_type: 'OFFLINE' };
      const mismatch = await api.post('/v1/payments', { ...body, idempotency_key: 'pay-b' }, { 'Idempotency-Key': 'pay-h' });
      expect([mismatch.status, mismatch.body.error.details.field]).toEqual([400, 'Idempotency-Key']);
      expect((await api.get(`/v1/payments?invoice_id=${draft.id}`)).body.items).toEqual([]);

      const first = await api.post('/v1/payments', body, { 'Idempotency-Key': 'pay-h' });
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ amount: 900, idempotency_key: 'pay-h' });
      const retry = await api.post('/v1/payments', body, { 'Idempotency-Key': 'pay-h' });
      expect(retry.body.id).toBe(first.body.id);
      expect((await api.post('/v1/payments', { ...body, idempotency_key: 'pay-h' })).body.id).toBe(first.body.id);
      expect((await api.get(`/v1/invoices/${draft.id}`)).body).toMatchObject({ amount_paid: 900, amount_remaining: 4000 });
      expect((await api.get(`/v1/payments?invoice_id=${draft.id}`)).body.items).toHaveLength(1);
    });

    it('is ignored where no body takes an idempotency key, as on a GET', async () => {
      const headers = { 'Idempotency-Key': 'x'.repeat(300) };
      const one = await api.post('/v1/customers', { external_customer_id: 'idem-plain-1' }, headers);
      const two = await api.post('/v1/customers', { external_customer_id: 'idem-plain-2' }, headers);
      expect([one.status, two.status]).toEqual([201, 201]);
      expect(one.body.id).not.toBe(two.body.id);
      expect((await api.get(`/v1/customers/${one.body.id}`, headers)).status).toBe(200);
    });
  });

  describe("billing's PUTs honour If-Match", () => {
    let api: ApiClient;

    beforeAll(async () => {
      api = await client('etags', 'production');
    });

    /** Create, read, update with the ETag, refuse a stale one (nothing written), update without one. */
    async function honoursIfMatch(path: string, createBody: unknown, changes: [Record<string, unknown>, Record<string, unknown>], read: (body: Record<string, unknown>) => unknown) {
      const made = await api.post(path, createBody);
      expect([made.status, made.headers.etag]).toEqual([201, '"1"']);
      const url = `${path}/${made.body.id}`;
      const got = await api.get(url);
      expect([got.status, got.headers.etag]).toEqual([200, '"1"']);

      const updated = await api.put(url, changes[0], { 'If-Match': '"1"' });
      expect([updated.status, updated.headers.etag]).toEqual([200, '"2"']);
      const stale = await api.put(url, changes[1], { 'If-Match': '"1"' });
      expect(stale.status).toBe(409);
      expect(stale.body).toMatchObject({ success: false, error: { internal_error: 'version_conflict', details: { field: 'If-Match', current_etag: '"2"' } } });
      const after = await api.get(url);
      expect([after.headers.etag, read(after.body)]).toEqual(['"2"', read(updated.body)]);

      const malformed = await api.put(url, changes[1], { 'If-Match': '2' });
      expect([malformed.status, malformed.body.error.details.field]).toEqual([400, 'If-Match']);
      expect((await api.put(url, changes[1], { 'If-Match': '"1", "2"' })).headers.etag).toBe('"3"');
      expect((await api.put(url, changes[0], { 'If-Match': '*' })).headers.etag).toBe('"4"');
      const unconditional = await api.put(url, changes[1]);
      expect([unconditional.status, unconditional.headers.etag, read(unconditional.body)]).toEqual([200, '"5"', read({ ...updated.body, ...changes[1] })]);
      return made.body;
    }

    it('on plans', async () => {
      await honoursIfMatch('/v1/plans', { name: 'Basic', prices: [fixedPrice] }, [{ name: 'Basic 2' }, { name: 'Basic 3' }], (p) => p.name);
    });

    it('on features', async () => {
      await honoursIfMatch('/v1/features', { name: 'SSO', lookup_key: 'sso', type: 'BOOLEAN' }, [{ name: 'Single sign-on' }, { name: 'SAML' }], (f) => f.name);
    });

    it('on entitlements', async () => {
      const plan = await created(api, '/v1/plans', { name: 'Ent', prices: [fixedPrice] });
      const feature = await created(api, '/v1/features', { name: 'Audit', lookup_key: 'audit', type: 'BOOLEAN' });
      await honoursIfMatch('/v1/entitlements', { plan_id: plan.id, feature_id: feature.id, is_enabled: true }, [{ is_enabled: false }, { is_enabled: true }], (e) => e.is_enabled);
    });
  });

  describe('proration_factor on invoice lines', () => {
    it('shows the factor of a FIXED ADVANCE line of a partial first period, its amount the rounded product, and none on whole periods', async () => {
      const api = await client('prorate', 'production');
      const customer = await created(api, '/v1/customers', { external_customer_id: 'prorate-1' });
      const plan = await created(api, '/v1/plans', { name: 'Calendar', prices: [fixedPrice] });
      // Calendar months, started on September 11th: the first period is 20 of September's 30 days.
      const sub = await created(api, '/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, billing_cycle: 'calendar', start_date: '2026-09-11T00:00:00Z' });
      const items = (await api.get(`/v1/invoices?subscription_id=${sub.id}&limit=100`)).body.items as Array<{ id: string; billing_reason: string; period_start: string; line_items: Array<Record<string, unknown>> }>;
      const first = items.find((i) => i.billing_reason === 'SUBSCRIPTION_CREATE')!;
      expect(first.line_items).toEqual([
        expect.objectContaining({ price_type: 'FIXED', quantity: '1', unit_amount: '49', proration_factor: '0.666666666667', amount: 3267, period_start: '2026-09-11T00:00:00.000Z', period_end: '2026-10-01T00:00:00.000Z' }),
      ]);
      // 49 x 0.666666666667 = 32.666666666683 usd: 3267 cents, rounded once.
      expect(Math.round(4900 * 0.666666666667)).toBe(3267);
      const whole = items.filter((i) => i.billing_reason === 'SUBSCRIPTION_CYCLE').flatMap((i) => i.line_items);
      expect(whole.length).toBeGreaterThan(0);
      for (const line of whole) {
        expect(line).toMatchObject({ price_type: 'FIXED', amount: 4900 });
        expect(line).not.toHaveProperty('proration_factor');
      }
      // Stored with the line: a single read and the finalized invoice show it too.
      const finalized = await api.post(`/v1/invoices/${first.id}/finalize`, {});
      expect(finalized.body.line_items[0]).toMatchObject({ proration_factor: '0.666666666667', amount: 3267 });
      expect((await api.get(`/v1/invoices/${first.id}`)).body.line_items[0].proration_factor).toBe('0.666666666667');
      const stored = await billingDb('invoice_line_items').where({ invoice_id: first.id });
      expect(stored.map((l: { proration_factor: string | null }) => l.proration_factor)).toEqual(['0.666666666667']);
    });
  });
});
