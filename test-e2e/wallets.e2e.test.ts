import { KafkaBus, TOPICS, type Subscription } from '@billstream/bus';
import { createDb, type Db } from '@billstream/db';
import { kafkaBrokers, testLogger, waitFor, type ApiClient } from '@billstream/testing';
import { startProcessStack, type ProcessStack } from './support/stack';
import { RESERVATION_POINTS, reservationCrash } from './support/reservations';
import { QUOTA_POINTS, quotaCrash } from './support/reservations-quota';

interface SeenEvent {
  type: string;
  key: string;
  payload: Record<string, any>;
}

describe('wallets through the gateway, the services as separate processes (real Postgres and Kafka)', () => {
  let stack: ProcessStack;
  let api: ApiClient;
  let bus: KafkaBus;
  let subscription: Subscription;
  let walletDb: Db;
  let ingestionDb: Db;
  const seen: SeenEvent[] = [];
  const run = Date.now().toString(36);
  let seq = 0;

  beforeAll(async () => {
    stack = await startProcessStack();
    api = stack.api;
    walletDb = createDb({ databaseUrl: stack.database.url, schema: 'wallet', poolMax: 2 });
    ingestionDb = createDb({ databaseUrl: stack.database.url, schema: 'ingestion', poolMax: 1 });
    bus = new KafkaBus({ brokers: kafkaBrokers(), clientId: 'wallets-e2e', logger: testLogger(), topicPrefix: stack.topicPrefix });
    await bus.start();
    subscription = await bus.subscribe({
      groupId: 'wallets-e2e',
      topics: [TOPICS.walletEvents],
      handler: async (messages) => {
        for (const m of messages) {
          const event = JSON.parse(m.value);
          seen.push({ type: event.type, key: m.key, payload: event.payload });
        }
      },
    });
  }, 180_000);
  afterAll(async () => {
    await subscription?.stop();
    await bus?.stop();
    await walletDb?.destroy();
    await ingestionDb?.destroy();
    await stack?.stop();
  }, 120_000);

  const newCustomer = async () => {
    const res = await api.post('/v1/customers', { external_customer_id: `wallet-e2e-${run}-${(seq += 1)}` });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const eventsOf = (walletId: string) => seen.filter((e) => e.key === walletId).map((e) => e.type);

  it('accepts a wallet for a customer created a moment ago and publishes its events through the outbox to Kafka', async () => {
    const customerId = await newCustomer();
    const created = await api.post('/v1/wallets', {
      customer_id: customerId,
      currency: 'usd',
      initial_credits_to_load: '10',
      alert_settings: { alert_enabled: true, warning: { threshold: '5' } },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const debit = await api.post(`/v1/wallets/${id}/debit`, { credits: '6', idempotency_key: 'e2e-1' });
    expect(debit.body).toMatchObject({ credit_balance_before: '10', credit_balance_after: '4' });
    await waitFor(() => eventsOf(id).length >= 5, { what: 'wallet events on Kafka', timeoutMs: 20_000 });
    expect(eventsOf(id)).toEqual([
      'wallet.created',
      'wallet.transaction.created',
      'wallet.transaction.created',
      'wallet.credit_balance.dropped',
      'wallet.ongoing_balance.dropped',
    ]);
    const dropped = seen.find((e) => e.key === id && e.type === 'wallet.credit_balance.dropped')!;
    expect(dropped.payload.alert).toMatchObject({ state: 'warning', previous_state: 'ok', threshold: '5', balance: '4' });
    const unknown = await api.post('/v1/wallets', { customer_id: 'cust_does_not_exist', currency: 'usd' });
    expect([unknown.status, unknown.body.error.details.field]).toEqual([404, 'customer_id']);
  });

  it('keeps exactly 50 of 100 parallel debits on a 50-credit wallet, and survives a wallet service restart', async () => {
    const customerId = await newCustomer();
    const w = await api.post('/v1/wallets', { customer_id: customerId, currency: 'eur', initial_credits_to_load: '50' });
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => api.post(`/v1/wallets/${w.body.id}/debit`, { credits: '1', idempotency_key: `p-${i}` })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(50);
    expect(results.filter((r) => r.status === 400).every((r) => r.body.error.details.available_credits === '0')).toBe(true);
    await stack.kill('wallet');
    await stack.restart('wallet');
    const replay = await api.post(`/v1/wallets/${w.body.id}/debit`, { credits: '1', idempotency_key: 'p-0' });
    expect([201, 400]).toContain(replay.status);
    const balance = await api.get(`/v1/wallets/${w.body.id}/balance`);
    expect(balance.body).toMatchObject({ credit_balance: '0', balance: '0' });
    const txns = await api.get(`/v1/wallets/${w.body.id}/transactions?type=DEBIT&limit=100`);
    expect(txns.body.pagination.total).toBe(50);
  });

  it('closes the wallets of a deleted customer and publishes wallet.terminated', async () => {
    const customerId = await newCustomer();
    const w = await api.post('/v1/wallets', { customer_id: customerId, currency: 'usd', initial_credits_to_load: '3.5' });
    expect(w.status).toBe(201);
    expect((await api.delete(`/v1/customers/${customerId}`)).status).toBe(204);
    await waitFor(async () => (await api.get(`/v1/wallets/${w.body.id}`)).body.wallet_status === 'closed', {
      what: 'the wallet to close',
      timeoutMs: 20_000,
    });
    await waitFor(() => eventsOf(w.body.id).includes('wallet.terminated'), { what: 'wallet.terminated', timeoutMs: 20_000 });
    const terminated = seen.find((e) => e.key === w.body.id && e.type === 'wallet.terminated')!;
    expect(terminated.payload.wallet).toMatchObject({ wallet_status: 'closed', credit_balance: '0' });
    const debits = await api.get(`/v1/wallets/${w.body.id}/transactions?transaction_reason=WALLET_TERMINATION`);
    expect(debits.body.items.map((t: { credit_amount: string }) => t.credit_amount)).toEqual(['3.5']);
  });

  // ---------------------------------------------------------------- reservations and crashes
  // docs/api/reservations.md, ADR 0068: a wallet process killed at any point loses or doubles no
  // hold, debit or release. Each point of ADR 0017's table kills the wallet once; restarted, the
  // client's retry (same key, same call) lands on exactly one hold, debit or end
  // (test-e2e/support/reservations.ts).

  it('the wallet SIGKILLed at each reservation failpoint, restarted, the same call retried: one hold, one RESERVATION_CAPTURE debit, the right status, balance and credits_held, a ledger that adds up', async () => {
    const started = Date.now();
    await reservationCrash(stack, walletDb).runAll(RESERVATION_POINTS, newCustomer);
    console.log(`reservation failpoints: ${RESERVATION_POINTS.length} kills and retries in ${Date.now() - started} ms`);
  }, 300_000);

  // ADR 0070: the same for holds of a METERED hard-limit entitlement, commits by quantity and by
  // usage event, and the settlement that ends a committed hold's count
  // (test-e2e/support/reservations-quota.ts).
  it('the wallet SIGKILLed at each entitlement hold, usage commit and settlement failpoint, restarted, the same call retried: one hold, its usage event stored once (event_id = the reservation id), settled once, the check right', async () => {
    const t = await quotaCrash(stack, { wallet: walletDb, ingestion: ingestionDb }).runAll(QUOTA_POINTS);
    console.log(`entitlement hold failpoints: set-up ${t.setupMs} ms, ${QUOTA_POINTS.length} kills and retries in ${t.killsMs} ms, settlements ${t.settleMs} ms`);
  }, 300_000);

  it('commits and releases racing the expiry of their holds: each hold ends once (committed, released or expired), a debit only for a committed one', async () => {
    const customerId = await newCustomer();
    const outcome = await reservationCrash(stack, walletDb).raceExpiry(customerId, 24);
    // Both sides of the instant happen (the calls are spread from 2 s before expires_at to 0.5 s after).
    expect(outcome.won).toBeGreaterThan(0);
    expect(outcome.expired).toBeGreaterThan(0);
  }, 60_000);
});
