import { Client } from 'pg';
import winston from 'winston';
import { Writable } from 'node:stream';
import { createLogger } from '@billstream/logger';
import { waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';
import { fixedPrice, usagePrice } from '../billing/prices';

/**
 * The customer portal (docs/api/portal.md, ADR 0069) as a client and its customer meet it:
 * sessions opened through the gateway, the portal API with their tokens, on the whole stack with
 * real Postgres and Kafka. Tree A (root A, child A1) and an outsider B, each with a subscription,
 * an invoice, a wallet and usage; every portal route is asked for B's records with A's token.
 */
describe('customer portal through the gateway (real Postgres and Kafka)', () => {
  let stack: IntegrationStack;
  const logLines: string[] = [];
  const run = `${Date.now()}`;
  let n = 0;
  const tree = {} as Record<'a' | 'a1' | 'b', { id: string; external: string; sub: string; invoice: string; wallet: string }>;
  let featureKey: string;

  beforeAll(async () => {
    // Every line the stack logs, at http level too (one line per request), kept as written.
    const logger = createLogger({ service: 'stack', level: 'debug' });
    logger.clear();
    logger.add(new winston.transports.Stream({ stream: new Writable({ write(chunk, _enc, done) { logLines.push(chunk.toString()); done(); } }) }));
    stack = await startIntegrationStack({
      extra: { logger, env: { BILLING_INTERVAL_MS: '0', WALLET_EXPIRY_INTERVAL_MS: '0', UNBILLED_SWEEP_MS: '0', UNBILLED_DEBOUNCE_MS: '100' } },
    });
    const meter = await stack.api.post('/v1/meters', { name: 'calls', event_name: `p_call_${run}`, aggregation: { type: 'COUNT' } });
    const plan = await stack.api.post('/v1/plans', { name: 'Portal Team', prices: [fixedPrice, usagePrice(meter.body.id)] });
    expect([meter.status, plan.status]).toEqual([201, 201]);
    featureKey = `p-seats-${run}`;
    const feature = await stack.api.post('/v1/features', { name: 'Seats', lookup_key: featureKey, type: 'METERED', meter_id: meter.body.id });
    if (feature.status === 201) await stack.api.post('/v1/entitlements', { plan_id: plan.body.id, feature_id: feature.body.id, usage_limit: '100', usage_reset_period: 'MONTHLY' });
    for (const [name, parent] of [['a', undefined], ['a1', 'a'], ['b', undefined]] as const) {
      const external = `p-${name}-${++n}-${run}`;
      const c = await stack.api.post('/v1/customers', { external_customer_id: external, name: `Buyer ${name}`, ...(parent ? { parent_customer_id: tree[parent].id } : {}) });
      expect([c.status, c.body.error]).toEqual([201, undefined]);
      const sub = await stack.api.post('/v1/subscriptions', { customer_id: c.body.id, plan_id: plan.body.id });
      const wallet = await stack.api.post('/v1/wallets', { customer_id: c.body.id, currency: 'usd', initial_credits_to_load: '25', config: { allowed_price_types: ['ALL'] } });
      expect([sub.status, wallet.status]).toEqual([201, 201]);
      const draft = (await stack.api.get(`/v1/invoices?subscription_id=${sub.body.id}`)).body.items[0];
      expect((await stack.api.post(`/v1/invoices/${draft.id}/finalize`, {})).status).toBe(200);
      tree[name] = { id: c.body.id, external, sub: sub.body.id, invoice: draft.id, wallet: wallet.body.id };
    }
    const events = (external: string, count: number) => Array.from({ length: count }, () => ({ event_name: `p_call_${run}`, external_customer_id: external, timestamp: new Date().toISOString(), event_id: `p-${++n}-${run}` }));
    expect((await stack.api.post('/v1/events/bulk', { events: [...events(tree.a1.external, 3), ...events(tree.b.external, 5)] })).status).toBe(202);
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
  });

  const open = async (customerId: string, body: Record<string, unknown> = {}) => {
    const res = await stack.api.post(`/v1/customers/${customerId}/portal_sessions`, body);
    expect([res.status, res.body.error]).toEqual([201, undefined]);
    return { ...res.body, token: new URL(res.body.url).hash.replace('#token=', '') } as { id: string; url: string; expires_at: string; token: string };
  };
  const portal = (token: string) => stack.api.withKey(token);

  it('opens a session: 201 {psess_ id, url with its id in the path and the token in the fragment only, expires_at}; bad input 400 naming the field; unknown customer 404', async () => {
    const before = Date.now();
    const s = await open(tree.a.id, { expires_in: 600, return_url: 'https://app.example.com/account' });
    expect(s.id).toMatch(/^psess_/);
    const url = new URL(s.url);
    expect([url.pathname, url.search, url.hash.startsWith('#token=bsp_')]).toEqual([`/portal/s/${s.id}`, '', true]);
    expect(Date.parse(s.expires_at) - before).toBeGreaterThanOrEqual(599_000);
    expect(Date.parse(s.expires_at) - before).toBeLessThanOrEqual(601_000 + (Date.now() - before));
    const defaults = await open(tree.a.id);
    expect(Math.round((Date.parse(defaults.expires_at) - Date.now()) / 60_000)).toBe(60);
    for (const [body, field] of [
      [{ expires_in: 59 }, 'expires_in'],
      [{ expires_in: 86_401 }, 'expires_in'],
      [{ expires_in: 'soon' }, 'expires_in'],
      [{ return_url: 'http://app.example.com/' }, 'return_url'],
      [{ return_url: 'javascript:alert(1)' }, 'return_url'],
      [{ other: 1 }, 'other'],
    ] as const) {
      const res = await stack.api.post(`/v1/customers/${tree.a.id}/portal_sessions`, body);
      expect([res.status, res.body.error?.details?.field]).toEqual([400, field]);
    }
    const unknown = await stack.api.post('/v1/customers/cust_nope/portal_sessions', {});
    expect([unknown.status, unknown.body.error.internal_error]).toEqual([404, 'not_found']);
    // A key without portal:write cannot open one; another tenant's key does not find the customer.
    const reader = stack.api.withKey(await stack.keyFor('tenant-a', 'production', ['customers:read']));
    expect((await reader.post(`/v1/customers/${tree.a.id}/portal_sessions`, {})).status).toBe(403);
    const other = stack.api.withKey(await stack.keyFor('tenant-b', 'production', ['portal:write']));
    expect((await other.post(`/v1/customers/${tree.a.id}/portal_sessions`, {})).status).toBe(404);
  });

  it("answers the session's tree only: invoices, credit notes, subscriptions with plan names and upcoming invoices, usage, wallets, ledger, entitlements, branding", async () => {
    expect((await stack.api.put('/v1/settings/billing', { invoice_settings: { company_name: 'Seller Ltd', address: '1 Market St', logo_url: 'https://cdn.example.com/logo.png', accent_color: '#0b6e4f' } })).status).toBe(200);
    const { token } = await open(tree.a.id);
    const api = portal(token);
    const session = await api.get('/v1/portal/session');
    expect(session.status).toBe(200);
    expect(session.body.customer.id).toBe(tree.a.id);
    expect(session.body.customers.map((c: { id: string }) => c.id).sort()).toEqual([tree.a.id, tree.a1.id].sort());
    expect(session.body.branding).toEqual({ company_name: 'Seller Ltd', logo_url: 'https://cdn.example.com/logo.png', accent_color: '#0b6e4f' });
    const badColour = await stack.api.put('/v1/settings/billing', { invoice_settings: { accent_color: 'red' } });
    expect([badColour.status, badColour.body.error.details.field]).toEqual([400, 'invoice_settings.accent_color']);

    // 49 usd in advance, 25 of each wallet's credits applied at finalization.
    const invoices = await api.get('/v1/portal/invoices');
    expect(invoices.body.items.map((i: { id: string }) => i.id).sort()).toEqual([tree.a.invoice, tree.a1.invoice].sort());
    expect(invoices.body.pagination.total).toBe(2);
    for (const i of invoices.body.items) {
      expect(i).toMatchObject({ status: 'finalized', subtotal: 4900, total_prepaid_credits_applied: 2500, total: 2400, amount_due: 2400, currency: 'usd', hosted_invoice_url: expect.stringContaining('/v1/hosted/invoices/'), invoice_pdf_url: expect.stringContaining('/pdf?token=') });
      expect(i.tenant_id).toBeUndefined();
    }
    expect((await api.get(`/v1/portal/invoices/${tree.a1.invoice}`)).body.id).toBe(tree.a1.invoice);
    expect((await api.get('/v1/portal/credit_notes')).body).toMatchObject({ items: [], pagination: { total: 0 } });

    const subs = (await api.get('/v1/portal/subscriptions')).body.items;
    expect(subs.map((s: { id: string }) => s.id).sort()).toEqual([tree.a.sub, tree.a1.sub].sort());
    for (const s of subs) expect(s).toMatchObject({ plan_name: 'Portal Team', upcoming_invoice: expect.objectContaining({ currency: 'usd' }) });

    // A1's 3 calls at 0.5 usd: 150 cents this period; B's 5 are not here.
    const usage = await waitFor(async () => {
      const body = (await api.get('/v1/portal/usage')).body;
      return body.totals?.[0]?.amount === 150 && body;
    }, { timeoutMs: 15_000, what: "A1's usage in the portal" });
    expect(usage.subscriptions.map((s: { customer_id: string }) => s.customer_id).sort()).toEqual([tree.a.id, tree.a1.id].sort());
    expect(usage.totals).toEqual([{ currency: 'usd', amount: 150 }]);

    const wallets = (await api.get('/v1/portal/wallets')).body.items;
    expect(wallets.map((w: { id: string }) => w.id).sort()).toEqual([tree.a.wallet, tree.a1.wallet].sort());
    for (const w of wallets) expect(w.balance).toMatchObject({ wallet_id: w.id, real_time_balance: expect.any(String) });
    const ledger = await api.get(`/v1/portal/wallets/${tree.a.wallet}/transactions`);
    expect([ledger.status, ledger.body.items.length > 0]).toEqual([200, true]);

    const ents = (await api.get('/v1/portal/entitlements')).body.items;
    for (const e of ents) expect([tree.a.id, tree.a1.id]).toContain(e.customer_id);
  });

  it("pages every list (limit, offset, pagination.total) across the session's customers, and lists the live holds of its wallets only", async () => {
    const api = portal((await open(tree.a.id)).token);
    for (const list of ['invoices', 'subscriptions', 'wallets']) {
      const pages = await Promise.all([0, 1, 2].map((offset) => api.get(`/v1/portal/${list}?limit=1&offset=${offset}`)));
      expect(pages.map((p) => [p.status, p.body.items.length, p.body.pagination])).toEqual([
        [200, 1, { total: 2, limit: 1, offset: 0 }],
        [200, 1, { total: 2, limit: 1, offset: 1 }],
        [200, 0, { total: 2, limit: 1, offset: 2 }],
      ]);
      expect(new Set(pages.flatMap((p) => p.body.items.map((r: { id: string }) => r.id))).size).toBe(2);
    }
    expect((await api.get('/v1/portal/entitlements?limit=1')).body.pagination).toMatchObject({ limit: 1, offset: 0 });
    for (const bad of ['limit=0', 'limit=1001', 'offset=-1', 'limit=two']) {
      const res = await api.get(`/v1/portal/wallets?${bad}`);
      expect([bad, res.status, res.body.error.internal_error]).toEqual([bad, 400, 'validation_error']);
    }
    // Holds on A1's wallet and on B's: A's session sees A1's live one only; a released hold is gone.
    const hold = async (customer: string, credits: string) => {
      const res = await stack.api.post('/v1/reservations', { customer_id: customer, currency: 'usd', credits, expires_in: 3600, idempotency_key: `portal-hold-${++n}-${run}` });
      expect([res.status, res.body.error]).toEqual([201, undefined]);
      return res.body as { id: string; wallet_id: string };
    };
    for (const w of [tree.a1.wallet, tree.b.wallet]) expect((await stack.api.post(`/v1/wallets/${w}/topup`, { credits_to_add: '20' })).status).toBe(201);
    const [mine, released, theirs] = [await hold(tree.a1.id, '3'), await hold(tree.a1.id, '4'), await hold(tree.b.id, '5')];
    expect((await stack.api.post(`/v1/reservations/${released.id}/release`, {})).status).toBe(200);
    const holds = await api.get('/v1/portal/holds');
    expect(holds.status).toBe(200);
    expect(holds.body.items.map((h: { id: string }) => h.id)).toEqual([mine.id]);
    expect(holds.body.items[0]).toMatchObject({ wallet_id: tree.a1.wallet, customer_id: tree.a1.id, status: 'held', credits_held: '3' });
    expect(holds.body.items[0].tenant_id).toBeUndefined();
    expect(holds.body.pagination.total).toBe(1);
    expect(holds.text).not.toContain(theirs.id);
    expect((await portal((await open(tree.b.id)).token).get('/v1/portal/holds')).body.items.map((h: { id: string }) => h.id)).toEqual([theirs.id]);
  });

  it("another customer's record by any id in any portal route is 404, and no list holds one", async () => {
    const { token } = await open(tree.a1.id);
    const api = portal(token);
    // A1's session reaches A1 only: its parent A is another customer too.
    for (const other of [tree.b, tree.a]) {
      for (const path of [`/v1/portal/invoices/${other.invoice}`, `/v1/portal/wallets/${other.wallet}/transactions`, `/v1/portal/invoices/${other.wallet}`, `/v1/portal/wallets/${other.invoice}/transactions`]) {
        const res = await api.get(path);
        expect([path, res.status, res.body.error.internal_error]).toEqual([path, 404, 'not_found']);
        expect(res.text).not.toContain(other.id);
      }
    }
    const everything = await Promise.all(['session', 'invoices', 'credit_notes', 'subscriptions', 'usage', 'wallets', 'holds', 'entitlements'].map((p) => api.get(`/v1/portal/${p}`)));
    for (const res of everything) {
      expect(res.status).toBe(200);
      for (const other of [tree.b, tree.a]) for (const id of [other.id, other.invoice, other.sub, other.wallet]) expect(res.text).not.toContain(id);
    }
    // A caller's filter is no way out: unknown query parameters are refused, ids in a query too.
    expect((await api.get(`/v1/portal/invoices?customer_id=${tree.b.id}`)).status).toBe(400);
    expect((await api.get(`/v1/portal/subscriptions?customer_id=${tree.b.id}`)).status).toBe(400);
    expect((await api.get('/v1/portal/nothing')).status).toBe(404);
    expect((await api.post('/v1/portal/invoices', {})).status).toBe(404);
  });

  it('expired and revoked tokens are 401 in the envelope; an API key cannot call the portal, a portal token no admin route', async () => {
    const expired = await open(tree.a.id, { expires_in: 60 });
    const sql = new Client({ connectionString: stack.database.url });
    await sql.connect();
    try {
      await sql.query("UPDATE gateway.portal_sessions SET expires_at = now() - interval '1 second' WHERE id = $1", [expired.id]);
    } finally {
      await sql.end();
    }
    const revoked = await open(tree.a.id);
    expect((await portal(revoked.token).get('/v1/portal/invoices')).status).toBe(200);
    expect((await stack.api.delete(`/v1/portal_sessions/${revoked.id}`)).status).toBe(204);
    expect((await stack.api.delete('/v1/portal_sessions/psess_nope')).status).toBe(404);
    // The envelope of a refused API key (the spec's 401).
    const refusedKey = (await stack.api.withKey('bsk_made_up_0123456789').get('/v1/customers')).body.error.internal_error;
    for (const token of [expired.token, revoked.token, 'bsp_made_up', '']) {
      const res = await stack.api.withKey(token).get('/v1/portal/invoices');
      expect([res.status, res.body.error.internal_error, typeof res.body.error.message]).toEqual([401, refusedKey, 'string']);
    }
    // The stack's * key is no portal token.
    expect((await stack.api.get('/v1/portal/session')).status).toBe(401);
    const live = await open(tree.a.id);
    for (const path of ['/v1/customers', `/v1/invoices/${tree.a.invoice}`, '/v1/api-keys', `/v1/wallets/${tree.a.wallet}`]) {
      expect([path, (await portal(live.token).get(path)).status]).toEqual([path, 401]);
    }
    expect((await portal(live.token).post(`/v1/customers/${tree.a.id}/portal_sessions`, {})).status).toBe(401);
  });

  it("the portal page's policy: strict CSP, no referrer; frame-ancestors from the session's snapshot of its tenant's portal.frame_ancestors, 'none' otherwise; and no token in any log line", async () => {
    const headersOf = async (url: string) => {
      const res = await fetch(url);
      const csp = res.headers.get('content-security-policy')!;
      expect([res.status, res.headers.get('referrer-policy'), res.headers.get('x-content-type-options'), res.headers.get('cache-control') !== null]).toEqual([200, 'no-referrer', 'nosniff', true]);
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("default-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      return { ancestors: /frame-ancestors ([^;]+)/.exec(csp)?.[1], xfo: res.headers.get('x-frame-options'), body: await res.text() };
    };
    const none = { ancestors: "'none'", xfo: 'DENY' };
    const plain = await headersOf(`${stack.embedded.url}/portal/`);
    expect(plain).toMatchObject(none);
    // Bad settings: 400 naming the field, nothing saved.
    const ancestorsNow = async () => (await stack.api.get('/v1/settings/billing')).body.portal;
    expect(await ancestorsNow()).toEqual({ frame_ancestors: [] });
    const eleven = Array.from({ length: 11 }, (_, i) => `https://app${i}.example.com`);
    for (const [list, field] of [
      [['http://app.example.com'], 'portal.frame_ancestors.0'],
      [['https://app.example.com', 'https://app.example.com/account'], 'portal.frame_ancestors.1'],
      [['https://*.example.com'], 'portal.frame_ancestors.0'],
      [["'self'"], 'portal.frame_ancestors.0'],
      [['https://app.example.com https://evil.example'], 'portal.frame_ancestors.0'],
      [eleven, 'portal.frame_ancestors'],
      ['https://app.example.com', 'portal.frame_ancestors'],
    ] as const) {
      const res = await stack.api.put('/v1/settings/billing', { portal: { frame_ancestors: list } });
      expect([res.status, res.body.error?.details?.field]).toEqual([400, field]);
    }
    expect(await ancestorsNow()).toEqual({ frame_ancestors: [] });
    // A session opened with none allowed keeps none after the setting changes (a snapshot).
    const before = await open(tree.a.id);
    const allowed = await stack.api.put('/v1/settings/billing', { portal: { frame_ancestors: ['https://App.example.com', 'https://admin.example.com:8443'] } });
    expect([allowed.status, allowed.body.portal]).toEqual([200, { frame_ancestors: ['https://app.example.com', 'https://admin.example.com:8443'] }]);
    // Per tenant and environment: another tenant's settings allow none.
    const otherTenant = stack.api.withKey(await stack.keyFor('tenant-b', 'production', ['settings:read']));
    expect((await otherTenant.get('/v1/settings/billing')).body.portal).toEqual({ frame_ancestors: [] });
    const framed = await open(tree.a.id);
    const url = new URL(framed.url);
    expect([url.pathname, url.search]).toEqual([`/portal/s/${framed.id}`, '']);
    const page = await headersOf(framed.url);
    expect(page).toMatchObject({ ancestors: 'https://app.example.com https://admin.example.com:8443', xfo: null });
    expect(await headersOf(before.url)).toMatchObject(none);
    // Unknown, malformed, expired or revoked: the same page, framed nowhere (never a 404 telling whether an id exists).
    const expired = await open(tree.a.id);
    const sql = new Client({ connectionString: stack.database.url });
    await sql.connect();
    try {
      await sql.query("UPDATE gateway.portal_sessions SET expires_at = now() - interval '1 second' WHERE id = $1", [expired.id]);
    } finally {
      await sql.end();
    }
    const revoked = await open(tree.a.id);
    expect((await stack.api.delete(`/v1/portal_sessions/${revoked.id}`)).status).toBe(204);
    for (const id of [expired.id, revoked.id, 'psess_01JH0000000000000000000000', 'psess_01jh0000000000000000000000', 'nope']) {
      const other = await headersOf(`${stack.embedded.url}/portal/s/${id}`);
      expect([id, other.ancestors, other.xfo, other.body]).toEqual([id, none.ancestors, none.xfo, page.body]);
    }
    expect(plain.body).toBe(page.body);
    // Cleared: sessions opened from now on are framed nowhere.
    expect((await stack.api.put('/v1/settings/billing', { portal: { frame_ancestors: [] } })).body.portal).toEqual({ frame_ancestors: [] });
    expect(await headersOf((await open(tree.a.id)).url)).toMatchObject(none);
    // Every token this file made: none in what the stack logged (request lines included).
    const s = await open(tree.b.id);
    await portal(s.token).get('/v1/portal/invoices');
    await portal(s.token).get(`/v1/portal/invoices/${tree.a.invoice}`);
    expect(logLines.some((l) => l.includes('/v1/portal/invoices'))).toBe(true);
    const all = logLines.join('\n');
    expect(all).not.toMatch(/bsp_[A-Za-z0-9_-]{20,}/);
    expect(all).not.toContain(s.token.slice(4));
  });
});
