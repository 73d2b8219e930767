import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ApiClient, waitFor } from '@billstream/testing';

/**
 * Smoke suite of a running stack (the docker-compose one in CI: deploy/compose/ci.sh), as a client
 * meets it through the gateway at BASE_URL: customers, wallets (top-up, debit), usage events and
 * the usage of a meter, a webhook endpoint receiving a signed delivery, billing (a plan, a
 * subscription pricing the usage). The webhook receiver listens on WEBHOOK_LISTEN (host:port,
 * default 127.0.0.1:0) and registers WEBHOOK_URL (default http://<that address>/hooks): with
 * docker compose, ci.sh relays a loopback port of the dispatcher's container to it, since the
 * dispatcher allows plain http to loopback hosts only (WEBHOOK_ALLOW_INSECURE=true).
 */
const BASE_URL = (process.env.BASE_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const KEY = apiKey();
const [WEBHOOK_HOST, WEBHOOK_PORT] = (process.env.WEBHOOK_LISTEN ?? '127.0.0.1:0').split(':');
const run = `smoke-${Date.now().toString(36)}`;

/** BILLSTREAM_API_KEY, else the one in the .env of `npm run compose:env`; there is no default key (ADR 0034). */
function apiKey(): string {
  if (process.env.BILLSTREAM_API_KEY) return process.env.BILLSTREAM_API_KEY;
  const file = path.resolve(__dirname, '..', '..', '.env');
  const line = existsSync(file) ? readFileSync(file, 'utf8').split('\n').find((l) => l.startsWith('BILLSTREAM_API_KEY=')) : undefined;
  const key = line?.slice('BILLSTREAM_API_KEY='.length).trim();
  if (!key) throw new Error('No API key: set BILLSTREAM_API_KEY, or run beside the .env of `npm run compose:env`');
  return key;
}

interface Delivery {
  event_name: string;
  payload: Record<string, any>;
  headers: http.IncomingHttpHeaders;
}

async function startReceiver() {
  const received: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      received.push({ event_name: body.event_name, payload: body.payload, headers: req.headers });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(Number(WEBHOOK_PORT), WEBHOOK_HOST, () => r()));
  return {
    received,
    url: process.env.WEBHOOK_URL ?? `http://${WEBHOOK_HOST}:${(server.address() as AddressInfo).port}/hooks`,
    close: () => new Promise((r) => server.close(r)),
  };
}

describe(`the running stack at ${BASE_URL} (smoke)`, () => {
  const api = new ApiClient(BASE_URL, KEY);
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let endpointId: string | undefined;

  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    if (endpointId) await api.delete(`/v1/webhook-endpoints/${endpointId}`);
    await receiver?.close();
  });

  it('is ready, and refuses a call without a key in the error envelope', async () => {
    expect((await api.get('/readyz')).status).toBe(200);
    const anonymous = await new ApiClient(BASE_URL).get('/v1/customers');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ success: false, error: { message: expect.any(String), internal_error: 'permission_denied' } });
  });

  it('delivers a signed webhook to an endpoint, for a customer created through the gateway', async () => {
    const endpoint = await api.post('/v1/webhook-endpoints', { url: receiver.url, events: ['customer.created'] });
    expect(endpoint.status).toBe(201);
    endpointId = endpoint.body.id;

    const external = `${run}-hook`;
    const customer = await api.post('/v1/customers', { external_customer_id: external, name: 'Smoke Hook' });
    expect(customer.status).toBe(201);
    const delivery = await waitFor(() => receiver.received.find((d) => d.payload?.customer?.id === customer.body.id), {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: `the customer.created webhook of ${customer.body.id}`,
    });
    expect(delivery.event_name).toBe('customer.created');
    expect(delivery.payload.customer).toMatchObject({ id: customer.body.id, external_id: external });
    expect(Object.keys(delivery.headers).some((h) => /signature/i.test(h))).toBe(true);
  });

  it('creates a customer, finds it by its external id, and answers a bad one with a 400', async () => {
    const created = await api.post('/v1/customers', { external_customer_id: `${run}-c`, name: 'Smoke Co', email: 'smoke@example.com' });
    expect(created.status).toBe(201);
    const byId = await api.get(`/v1/customers/${created.body.id}`);
    expect(byId.body).toMatchObject({ id: created.body.id, external_id: `${run}-c`, name: 'Smoke Co' });
    expect((await api.get(`/v1/customers/external/${run}-c`)).body.id).toBe(created.body.id);
    const bad = await api.post('/v1/customers', { external_customer_id: 42 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ success: false, error: { internal_error: 'validation_error' } });
  });

  it('loads a wallet, tops it up, debits it, and refuses a debit beyond the balance', async () => {
    const customer = await api.post('/v1/customers', { external_customer_id: `${run}-w` });
    const wallet = await api.post('/v1/wallets', { customer_id: customer.body.id, currency: 'usd', initial_credits_to_load: '10' });
    expect(wallet.status).toBe(201);
    const topup = await api.post(`/v1/wallets/${wallet.body.id}/topup`, { credits_to_add: '5', transaction_reason: 'FREE_CREDIT_GRANT' });
    expect(topup.status).toBe(201);
    const debit = await api.post(`/v1/wallets/${wallet.body.id}/debit`, { credits: '12', idempotency_key: `${run}-d1` });
    expect(debit.status).toBe(201);
    expect(debit.body).toMatchObject({ credit_balance_before: '15', credit_balance_after: '3' });
    const again = await api.post(`/v1/wallets/${wallet.body.id}/debit`, { credits: '12', idempotency_key: `${run}-d1` });
    expect(again.body).toMatchObject({ credit_balance_after: '3' });
    const over = await api.post(`/v1/wallets/${wallet.body.id}/debit`, { credits: '4', idempotency_key: `${run}-d2` });
    expect(over.status).toBeGreaterThanOrEqual(400);
    expect(over.status).toBeLessThan(500);
    expect((await api.get(`/v1/wallets/${wallet.body.id}/balance`)).body).toMatchObject({ credit_balance: '3' });
  });

  it('ingests usage events and answers the usage of a meter over them', async () => {
    const meter = await api.post('/v1/meters', { name: `${run} tokens`, event_name: `${run}_tokens`, aggregation: { type: 'SUM', field: 'tokens' } });
    expect(meter.status).toBe(201);
    const external = `${run}-u`;
    await api.post('/v1/customers', { external_customer_id: external });
    const events = Array.from({ length: 20 }, (_, i) => ({
      event_id: `${run}-e${i}`,
      event_name: `${run}_tokens`,
      external_customer_id: external,
      timestamp: new Date(Date.UTC(2026, 9, 10, 12, 0, i)).toISOString(),
      properties: { tokens: i + 1 },
    }));
    const accepted = await api.post('/v1/events/bulk', { events });
    expect(accepted.status).toBe(202);
    const usage = await waitFor(
      async () => {
        const res = await api.post(`/v1/meters/${meter.body.id}/usage`, { external_customer_id: external, start_time: '2026-10-01T00:00:00Z', end_time: '2026-11-01T00:00:00Z' });
        return res.status === 200 && res.body.value === '210' ? res.body : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: 'the usage of 20 events (1 + ... + 20 = 210 tokens)' },
    );
    expect(usage.value).toBe('210');
  });

  it('subscribes a customer to a plan and prices its usage', async () => {
    const meter = await api.post('/v1/meters', { name: `${run} calls`, event_name: `${run}_call`, aggregation: { type: 'COUNT' } });
    const plan = await api.post('/v1/plans', {
      name: `Smoke ${run}`,
      lookup_key: `smoke-${run}`,
      prices: [
        { type: 'FIXED', currency: 'usd', amount: '20', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' },
        { type: 'USAGE', currency: 'usd', amount: '0.5', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', meter_id: meter.body.id },
      ],
    });
    expect(plan.status).toBe(201);
    const external = `${run}-b`;
    const customer = await api.post('/v1/customers', { external_customer_id: external });
    const sub = await api.post('/v1/subscriptions', { customer_id: customer.body.id, plan_id: plan.body.id });
    expect(sub.status).toBe(201);
    expect(sub.body).toMatchObject({ status: 'active', currency: 'usd' });
    const at = new Date(Date.parse(sub.body.current_period_start) + 1000).toISOString();
    const events = Array.from({ length: 4 }, (_, i) => ({ event_id: `${run}-b${i}`, event_name: `${run}_call`, external_customer_id: external, timestamp: at }));
    expect((await api.post('/v1/events/bulk', { events })).status).toBe(202);
    const usage = await waitFor(
      async () => {
        const res = await api.get(`/v1/subscriptions/${sub.body.id}/usage`);
        return res.body.items?.[0]?.quantity === '4' ? res.body : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: 'the priced usage of 4 calls' },
    );
    // 4 x 0.50 usd = 200 cents
    expect(usage).toMatchObject({ amount: 200, items: [{ quantity: '4', amount: 200 }] });
    const invoices = await api.get(`/v1/invoices?customer_id=${customer.body.id}`);
    expect(invoices.status).toBe(200);
    expect(Array.isArray(invoices.body.items)).toBe(true);
  });
});
