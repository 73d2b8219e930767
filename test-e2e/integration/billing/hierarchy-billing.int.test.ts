import { createDb, type Db } from '@billstream/db';
import { waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { usagePrice } from './prices';

/**
 * Customer hierarchy billing (docs/api/hierarchy-billing.md, ADR 0047) as a client meets it: through the
 * gateway on the whole stack with real Postgres and Kafka. The hierarchy: root R, its children C
 * and S, C's child G, and an outsider O. The plan bills 10 usd a month in advance and 0.5 usd a
 * call in arrear, with a one-time grant of 7 credits and a boolean feature.
 */
const ENV = { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0', UNBILLED_SWEEP_MS: '0', UNBILLED_DEBOUNCE_MS: '100' };

interface Invoice {
  id: string;
  customer_id: string;
  subscription_id: string | null;
  subscription_customer_id: string | null;
  status: string;
  total: number;
  total_prepaid_credits_applied: number;
  amount_due: number;
  currency: string;
}

describe('customer hierarchy billing through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  let billingDb: Db;
  let meterId: string;
  let planId: string;
  let featureKey: string;
  const run = `${Date.now()}`;
  let n = 0;

  beforeAll(async () => {
    stack = await startIntegrationStack({ extra: { env: ENV } });
    billingDb = createDb({ databaseUrl: stack.database.url, schema: 'billing', poolMax: 2 });
    meterId = (await stack.api.post('/v1/meters', { name: 'calls', event_name: 'h_call', aggregation: { type: 'COUNT' } })).body.id;
    const fixed = { type: 'FIXED', currency: 'usd', amount: '10', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' };
    const plan = await stack.api.post('/v1/plans', { name: 'Team', prices: [fixed, usagePrice(meterId)] });
    expect(plan.status).toBe(201);
    planId = plan.body.id;
    expect((await stack.api.post('/v1/credit_grants', { plan_id: planId, name: 'Welcome', credits: '7', cadence: 'ONETIME' })).status).toBe(201);
    featureKey = `h-sso-${run}`;
    const feature = await stack.api.post('/v1/features', { name: 'SSO', lookup_key: featureKey, type: 'BOOLEAN' });
    expect(feature.status).toBe(201);
    expect((await stack.api.post('/v1/entitlements', { plan_id: planId, feature_id: feature.body.id })).status).toBe(201);
  });
  afterAll(async () => {
    await billingDb?.destroy();
    await stack?.stop();
  });

  async function customer(name: string, parent?: string): Promise<{ id: string; external: string }> {
    const external = `h-${name}-${++n}-${run}`;
    const res = await stack.api.post('/v1/customers', { external_customer_id: external, ...(parent ? { parent_customer_id: parent } : {}) });
    expect([res.status, res.body.error]).toEqual([201, undefined]);
    return { id: res.body.id, external };
  }
  async function wallet(customerId: string, credits: string): Promise<string> {
    const res = await stack.api.post('/v1/wallets', { customer_id: customerId, currency: 'usd', initial_credits_to_load: credits, config: { allowed_price_types: ['ALL'] } });
    expect(res.status).toBe(201);
    return res.body.id;
  }
  const cron = async () => expect((await stack.api.post('/v1/cron/bill-subscriptions', {})).status).toBe(200);
  const subscribe = (customerId: string, extra: Record<string, unknown> = {}) => stack.api.post('/v1/subscriptions', { customer_id: customerId, plan_id: planId, ...extra });
  const balance = async (walletId: string) => (await stack.api.get(`/v1/wallets/${walletId}/balance?include_real_time_balance=true`)).body as { balance: string; real_time_balance: string; unbilled_usage: number };
  const invoicesOf = async (query: string): Promise<{ items: Invoice[]; total: number }> => {
    const res = await stack.api.get(`/v1/invoices?${query}&limit=100`);
    expect([res.status, res.body.error]).toEqual([200, undefined]);
    return { items: res.body.items, total: res.body.pagination.total };
  };
  async function ingest(externalId: string, count: number): Promise<void> {
    const events = Array.from({ length: count }, () => ({ event_name: 'h_call', external_customer_id: externalId, timestamp: new Date().toISOString(), event_id: `h-${++n}-${run}` }));
    expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
  }

  it('an ancestor pays: its invoices, wallets, grants and real-time balance; usage and entitlements stay the child\'s', async () => {
    const r = await customer('root');
    const c = await customer('child', r.id);
    const g = await customer('grandchild', c.id);
    const rootWallet = await wallet(r.id, '100');
    const childWallet = await wallet(g.id, '50');

    const made = await subscribe(g.id, { invoicing_customer_id: r.id });
    expect([made.status, made.body.error]).toEqual([201, undefined]);
    expect(made.body).toMatchObject({ customer_id: g.id, invoicing_customer_id: r.id, status: 'active' });
    expect((await stack.api.get(`/v1/subscriptions/${made.body.id}`)).body.invoicing_customer_id).toBe(r.id);

    // The first period's fee: the payer's invoice, paid from the payer's wallet at finalization.
    await cron();
    const { items: [created] } = await invoicesOf(`subscription_id=${made.body.id}`);
    expect(created).toMatchObject({ customer_id: r.id, subscription_customer_id: g.id, status: 'paid', total_prepaid_credits_applied: 1000, total: 0, amount_due: 0 });
    // The grant went to the payer's wallet (7 credits), not the child's.
    await waitFor(async () => (await balance(rootWallet)).balance === '97', { timeoutMs: 10_000, what: 'the payer wallet at 100 - 10 + 7' });
    expect((await balance(childWallet)).balance).toBe('50');
    const applications = await stack.api.get(`/v1/credit_grants?plan_id=${planId}`);
    const grantId = applications.body.items[0].id;
    const applied = (await stack.api.get(`/v1/credit_grants/${grantId}/applications?subscription_id=${made.body.id}`)).body.items;
    expect(applied).toEqual([expect.objectContaining({ customer_id: r.id, status: 'applied', credits: '7' })]);

    // Usage is the child's (its external id), counted in real time against the payer.
    await ingest(g.external, 4);
    await waitFor(async () => (await balance(rootWallet)).real_time_balance === '95', { timeoutMs: 10_000, what: 'the payer real-time balance at 97 - 2' });
    expect(await balance(rootWallet)).toMatchObject({ balance: '97', real_time_balance: '95', unbilled_usage: 200 });
    expect(await balance(childWallet)).toMatchObject({ balance: '50', real_time_balance: '50', unbilled_usage: 0 });
    const usage = (await stack.api.get(`/v1/subscriptions/${made.body.id}/usage`)).body;
    expect(usage).toMatchObject({ customer_id: g.id, amount: 200 });

    // Entitlements are the child's (the subscription reaches the check through billing-events, ADR 0061).
    const childGrants = await waitFor(async () => {
      const items = (await stack.api.get(`/v1/customers/${g.id}/entitlements`)).body.items;
      return items?.length > 0 && items;
    }, { what: "the child's entitlements in the check" });
    expect(childGrants.map((e: { feature_lookup_key: string; is_enabled: boolean }) => [e.feature_lookup_key, e.is_enabled])).toEqual([[featureKey, true]]);
    expect((await stack.api.get(`/v1/customers/${r.id}/entitlements`)).body.items).toEqual([]);
    expect((await stack.api.post('/v1/entitlements/check', { customer_id: g.id, feature_lookup_key: featureKey })).body.allowed).toBe(true);
    expect((await stack.api.post('/v1/entitlements/check', { customer_id: r.id, feature_lookup_key: featureKey })).body.allowed).toBe(false);

    // Cancelling now bills the usage to the payer too.
    expect((await stack.api.post(`/v1/subscriptions/${made.body.id}/cancel`, { cancel_at: 'immediately' })).status).toBe(200);
    await cron();
    const all = (await invoicesOf(`subscription_id=${made.body.id}`)).items;
    expect(all).toHaveLength(2);
    for (const i of all) expect([i.customer_id, i.subscription_customer_id]).toEqual([r.id, g.id]);
    expect(all.find((i) => i.id !== created.id)).toMatchObject({ status: 'paid', total_prepaid_credits_applied: 200, amount_due: 0 });
    expect((await balance(rootWallet)).balance).toBe('95');
    expect((await balance(childWallet)).balance).toBe('50');
  });

  it('refuses a payer that is not an ancestor with a 400 naming invoicing_customer_id, and writes nothing', async () => {
    const r = await customer('root');
    const c = await customer('child', r.id);
    const s = await customer('sibling', r.id);
    const g = await customer('grandchild', c.id);
    const o = await customer('outsider');
    for (const payer of [s.id, g.id, o.id, 'cust_nobody']) {
      const res = await subscribe(c.id, { invoicing_customer_id: payer });
      expect([res.status, res.body.error?.details?.field]).toEqual([400, 'invoicing_customer_id']);
    }
    // A customer is not its own payer; a descendant does not pay its ancestor.
    expect((await subscribe(c.id, { invoicing_customer_id: c.id })).status).toBe(400);
    expect((await subscribe(r.id, { invoicing_customer_id: c.id })).status).toBe(400);
    const none = await stack.api.get(`/v1/subscriptions?customer_id=${c.id}`);
    expect(none.body.pagination.total).toBe(0);
    expect(await billingDb('invoices').whereIn('customer_id', [r.id, c.id, s.id, g.id, o.id]).count({ n: '*' })).toEqual([{ n: 0 }]);
    // The grandparent pays the grandchild's subscription; a parent set a moment ago counts.
    expect((await subscribe(g.id, { invoicing_customer_id: r.id })).status).toBe(201);
    const moved = await stack.api.put(`/v1/customers/${o.id}`, { parent_customer_id: s.id });
    expect(moved.status).toBe(200);
    expect((await subscribe(o.id, { invoicing_customer_id: r.id })).status).toBe(201);
    // Another tenant's customer is unknown there.
    const other = stack.api.withKey(await stack.keyFor('tenant-other', 'production'));
    const elsewhere = await other.post('/v1/subscriptions', { customer_id: g.id, plan_id: planId, invoicing_customer_id: r.id });
    expect(elsewhere.status).toBe(404);
  });

  it('lists invoices and credit notes of a customer with include_children, each once; usage with totals per currency', async () => {
    const r = await customer('root');
    const c = await customer('child', r.id);
    const g = await customer('grandchild', c.id);
    const o = await customer('outsider');
    const own = await subscribe(c.id); // C pays its own
    const paid = await subscribe(g.id, { invoicing_customer_id: r.id }); // R pays G's
    const rootOwn = await subscribe(r.id);
    const outsider = await subscribe(o.id);
    for (const res of [own, paid, rootOwn, outsider]) expect(res.status).toBe(201);

    const rootOnly = await invoicesOf(`customer_id=${r.id}`);
    expect(rootOnly.items.map((i) => i.subscription_id).sort()).toEqual([paid.body.id, rootOwn.body.id].sort());
    expect(rootOnly.total).toBe(2);
    const withChildren = await invoicesOf(`customer_id=${r.id}&include_children=true`);
    expect(withChildren.items.map((i) => i.subscription_id).sort()).toEqual([own.body.id, paid.body.id, rootOwn.body.id].sort());
    expect(withChildren.total).toBe(3);
    expect(new Set(withChildren.items.map((i) => i.id)).size).toBe(3);
    expect((await invoicesOf(`customer_id=${c.id}&include_children=true`)).items.map((i) => i.subscription_id)).toEqual([own.body.id]);
    expect((await invoicesOf(`customer_id=${r.id}&include_children=false`)).total).toBe(2);
    const paged = await stack.api.get(`/v1/invoices?customer_id=${r.id}&include_children=true&limit=2&offset=2`);
    expect([paged.body.items.length, paged.body.pagination.total]).toEqual([1, 3]);

    // include_children needs customer_id; a bad flag is a 400 too.
    for (const query of ['include_children=true', `customer_id=${r.id}&include_children=yes`]) {
      const bad = await stack.api.get(`/v1/invoices?${query}`);
      expect(bad.status).toBe(400);
      const badNotes = await stack.api.get(`/v1/credit_notes?${query}`);
      expect(badNotes.status).toBe(400);
    }
    expect((await stack.api.get('/v1/invoices?include_children=true')).body.error.details.field).toBe('customer_id');

    // A credit note on the child's own invoice shows under the root with include_children.
    await cron();
    const [childInvoice] = (await invoicesOf(`subscription_id=${own.body.id}`)).items;
    const note = await stack.api.post('/v1/credit_notes', { invoice_id: childInvoice.id, reason: 'OTHER', amount: 100 });
    expect([note.status, note.body.error]).toEqual([201, undefined]);
    const notes = async (q: string) => (await stack.api.get(`/v1/credit_notes?${q}`)).body as { items: Array<{ id: string }>; pagination: { total: number } };
    expect((await notes(`customer_id=${r.id}`)).items).toEqual([]);
    const rootNotes = await notes(`customer_id=${r.id}&include_children=true`);
    expect([rootNotes.items.map((x) => x.id), rootNotes.pagination.total]).toEqual([[note.body.id], 1]);

    // Usage: the root's own subscription, then its descendants' too; totals per currency.
    await ingest(g.external, 6);
    await ingest(c.external, 2);
    await ingest(o.external, 9);
    await waitFor(async () => (await stack.api.get(`/v1/subscriptions/${paid.body.id}/usage`)).body.amount === 300, { timeoutMs: 10_000, what: "the grandchild's 6 calls" });
    await waitFor(async () => (await stack.api.get(`/v1/subscriptions/${own.body.id}/usage`)).body.amount === 100, { timeoutMs: 10_000, what: "the child's 2 calls" });
    const mine = await stack.api.get(`/v1/customers/${r.id}/usage`);
    expect([mine.status, mine.body.error]).toEqual([200, undefined]);
    expect(mine.body).toMatchObject({ customer_id: r.id, subscriptions: [{ subscription_id: rootOwn.body.id, customer_id: r.id, currency: 'usd', amount: 0 }], totals: [{ currency: 'usd', amount: 0 }] });
    const tree = (await stack.api.get(`/v1/customers/${r.id}/usage?include_children=true`)).body;
    expect(tree.subscriptions.map((s: { subscription_id: string; customer_id: string; amount: number }) => [s.subscription_id, s.customer_id, s.amount])).toEqual(
      [
        [own.body.id, c.id, 100],
        [paid.body.id, g.id, 300],
        [rootOwn.body.id, r.id, 0],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    expect(tree.totals).toEqual([{ currency: 'usd', amount: 400 }]);
    expect(tree.subscriptions[0].items[0]).toMatchObject({ meter_id: meterId });
    // A eur subscription is totalled apart.
    const eurPlan = await stack.api.post('/v1/plans', { name: 'Team EUR', prices: [usagePrice(meterId, { currency: 'eur', amount: '1' })] });
    const eur = await stack.api.post('/v1/subscriptions', { customer_id: g.id, plan_id: eurPlan.body.id });
    expect(eur.status).toBe(201);
    // Calls before the eur subscription started are not its usage; 2 more are both subscriptions' (1 eur and 0.5 usd each).
    await ingest(g.external, 2);
    await waitFor(async () => (await stack.api.get(`/v1/subscriptions/${eur.body.id}/usage`)).body.amount === 200, { timeoutMs: 10_000, what: 'the eur usage' });
    const twoCurrencies = (await stack.api.get(`/v1/customers/${r.id}/usage?include_children=true`)).body.totals;
    expect(twoCurrencies).toEqual([
      { currency: 'eur', amount: 200 },
      { currency: 'usd', amount: 500 },
    ]);
    for (const bad of [`/v1/customers/cust_nobody/usage`, `/v1/customers/${r.id}/usage?include_children=maybe`, `/v1/customers/${r.id}/usage?other=1`]) {
      const res = await stack.api.get(bad);
      expect([404, 400]).toContain(res.status);
      expect(res.body.error).toBeDefined();
    }
    expect((await stack.api.get('/v1/customers/cust_nobody/usage')).status).toBe(404);
  });

  it('refuses to delete a payer of live subscriptions (400), and deletes it once they are cancelled', async () => {
    const p = await customer('payer');
    const k = await customer('kid', p.id);
    const sub = await subscribe(k.id, { invoicing_customer_id: p.id });
    expect(sub.status).toBe(201);
    // Detached: the payer has no children left, but still pays the subscription.
    expect((await stack.api.put(`/v1/customers/${k.id}`, { parent_customer_id: null })).status).toBe(200);
    const refused = await stack.api.delete(`/v1/customers/${p.id}`);
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toMatchObject({ field: 'id', subscription_ids: [sub.body.id], subscriptions: 1 });
    expect((await stack.api.get(`/v1/customers/${p.id}`)).status).toBe(200);
    expect((await stack.api.post(`/v1/subscriptions/${sub.body.id}/cancel`, { cancel_at: 'immediately' })).status).toBe(200);
    expect((await stack.api.delete(`/v1/customers/${p.id}`)).status).toBe(204);
    expect((await stack.api.get(`/v1/customers/${p.id}`)).status).toBe(404);
    // A customer paying only for itself is deleted as before.
    const alone = await customer('alone');
    expect((await subscribe(alone.id)).status).toBe(201);
    expect((await stack.api.delete(`/v1/customers/${alone.id}`)).status).toBe(204);
  });
});
