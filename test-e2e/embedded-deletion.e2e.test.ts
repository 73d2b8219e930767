import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiClient, freePort, waitFor } from '@billstream/testing';
import { usagePrice } from './integration/billing/prices';
import { npmStart, stop, type Started } from './support/npm-start';


async function running(started: Started): Promise<void> {
  await waitFor(() => started.output().includes('Billstream is running'), { timeoutMs: 540_000, intervalMs: 250, what: 'the start' }).catch((err) => {
    throw new Error(`${String(err)}\n${started.output()}`);
  });
}

/** The time `call` takes, in ms, and its answer. */
async function timed<T>(call: () => Promise<T>): Promise<{ ms: number; answer: T }> {
  const started = Date.now();
  const answer = await call();
  return { ms: Date.now() - started, answer };
}

// A first start runs initdb inside WebAssembly: allow a slow, busy machine.
jest.setTimeout(900_000);

/**
 * Issue #47 item 1 (ADR 0055): billing's `customer.deleted` read usage from the aggregator
 * inside its transaction, holding PGlite's one session: every request of every tenant waited
 * about 55 s, the message was retried for ever and a restart timed out.
 */
describe('npm start: deleting a customer with a live usage subscription (the embedded default)', () => {
  let dataDir: string;
  let current: Started | undefined;

  beforeAll(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'billstream-embedded-deletion-'));
  });
  afterAll(async () => {
    if (current) await stop(current, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('cancels it with its closing invoice while another tenant is answered in normal time, and the server restarts on the same data', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    // A key of another tenant: a first start with it as the bootstrap key stores it.
    const otherKey = `bsk_other_${randomBytes(24).toString('base64url')}`;
    current = npmStart(dataDir, port, { BOOTSTRAP_API_KEY: otherKey, BOOTSTRAP_TENANT_ID: 'other', BOOTSTRAP_ENVIRONMENT_ID: 'production' });
    await running(current);
    await stop(current);
    current = npmStart(dataDir, port);
    const devKey = await waitFor(() => /API key:\s+(bsk_\S+)/.exec(current!.output())?.[1], { timeoutMs: 540_000, intervalMs: 250, what: 'the printed API key' });
    const api = new ApiClient(base, devKey);
    const other = new ApiClient(base, otherKey);
    expect((await other.get('/v1/api-keys')).body.items[0]).toMatchObject({ tenant_id: 'other' });

    // The default tenant: a live subscription with a USAGE price on a COUNT meter that has no events.
    const meter = await api.post('/v1/meters', { name: 'calls', event_name: 'api_call', aggregation: { type: 'COUNT' } });
    expect(meter.status).toBe(201);
    const plan = await api.post('/v1/plans', {
      name: 'Usage',
      prices: [usagePrice(meter.body.id)],
    });
    expect(plan.status).toBe(201);
    const customer = await api.post('/v1/customers', { external_customer_id: 'deleted-with-usage' });
    const sub = await api.post('/v1/subscriptions', { customer_id: customer.body.id, plan_id: plan.body.id });
    expect([sub.status, sub.body.status]).toEqual([201, 'active']);
    // The other tenant: a customer with a wallet and a subscription, deleted after the first one.
    const otherPlan = await other.post('/v1/plans', {
      name: 'Usage',
      prices: [usagePrice((await other.post('/v1/meters', { name: 'calls', event_name: 'api_call', aggregation: { type: 'COUNT' } })).body.id)],
    });
    const otherCustomer = await other.post('/v1/customers', { external_customer_id: 'other-deleted' });
    const otherSub = await other.post('/v1/subscriptions', { customer_id: otherCustomer.body.id, plan_id: otherPlan.body.id });
    expect(otherSub.body.status).toBe('active');
    const otherWallet = await other.post('/v1/wallets', { customer_id: otherCustomer.body.id, currency: 'usd' });
    expect(otherWallet.status).toBe(201);
    const usual = await timed(() => other.get('/v1/customers?limit=20'));
    expect(usual.answer.status).toBe(200);

    expect((await api.delete(`/v1/customers/${customer.body.id}`)).status).toBe(204);
    // While the deletion is applied, and after: every read of another tenant answers in normal time.
    const reads: number[] = [];
    let cancelled: { status: string; cancelled_at: string | null } | undefined;
    for (const until = Date.now() + 60_000; !cancelled && Date.now() < until; ) {
      const read = await timed(() => other.get('/v1/customers?limit=20'));
      expect(read.answer.status).toBe(200);
      reads.push(read.ms);
      const s = await api.get(`/v1/subscriptions/${sub.body.id}`);
      if (s.body.status === 'cancelled') cancelled = s.body;
      else await new Promise((r) => setTimeout(r, 200));
    }
    // The deletion is applied: the subscription cancelled, with the closing invoice of its running period.
    expect(cancelled).toBeDefined();
    for (let i = 0; i < 5; i += 1) reads.push((await timed(() => other.get('/v1/customers?limit=20'))).ms);
    expect(Math.max(...reads)).toBeLessThan(5000);
    expect(cancelled!.cancelled_at).toBeTruthy();
    const invoices = await api.get(`/v1/invoices?subscription_id=${sub.body.id}`);
    expect(invoices.body.items.map((i: { billing_reason: string }) => i.billing_reason)).toEqual(['SUBSCRIPTION_CANCEL']);
    expect(invoices.body.items[0]).toMatchObject({ customer_id: customer.body.id, amount_due: 0 });

    // The other tenant's deletion is applied too, by billing and by the wallet service.
    const otherDelete = await timed(() => other.delete(`/v1/customers/${otherCustomer.body.id}`));
    expect(otherDelete.answer.status).toBe(204);
    expect(otherDelete.ms).toBeLessThan(5000);
    await waitFor(async () => (await other.get(`/v1/subscriptions/${otherSub.body.id}`)).body.status === 'cancelled', { timeoutMs: 30_000, what: "the other tenant's subscription cancelled" });
    await waitFor(async () => (await other.get(`/v1/wallets/${otherWallet.body.id}`)).body.wallet_status === 'closed', { timeoutMs: 30_000, what: "the other tenant's wallet closed" });
    expect(current.output()).not.toMatch(/KnexTimeoutError|dead-lettered/);

    // Killed, then started again on the same DATA_DIR: it answers /healthz and reads.
    await stop(current, 'SIGKILL');
    current = npmStart(dataDir, port);
    await running(current);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const read = await timed(() => other.get('/v1/customers?limit=20'));
    expect(read.answer.status).toBe(200);
    expect(read.ms).toBeLessThan(5000);
    expect((await api.get(`/v1/subscriptions/${sub.body.id}`)).body.status).toBe('cancelled');
    expect((await api.get(`/v1/invoices?subscription_id=${sub.body.id}`)).body.items).toHaveLength(1);
    expect(current.output()).not.toMatch(/KnexTimeoutError/);
  });
});
