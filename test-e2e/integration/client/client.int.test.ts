import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo, Socket } from 'node:net';
import { Client } from 'pg';
import {
  BillstreamError,
  createClient,
  isTestPayload,
  verifyWebhook,
  WebhookVerificationError,
  type BillstreamClient,
  type RetryInfo,
  type UsageEvent,
} from '@billstream/client';
import { startEmbedded, type Embedded } from '@billstream/standalone';
import { createTestDatabase, freePort, randomKey, sleep, testLogger, waitFor } from '@billstream/testing';
import { startIntegrationStack, TEST_ENVIRONMENT, TEST_TENANT, type IntegrationStack } from '../../support/stack';

// @billstream/client against a real Billstream: the embedded default (all services in this
// process, startEmbedded) on a database of its own; no mock server anywhere.

const FAST_RETRY = { baseDelayMs: 20, maxDelayMs: 200 };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function thrown(promise: Promise<unknown>): Promise<BillstreamError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BillstreamError);
  return err as BillstreamError;
}

async function eventCount(client: BillstreamClient, externalCustomerId: string): Promise<number> {
  const page = await client.POST('/v1/events/query', { body: { external_customer_id: externalCustomerId, page_size: 1 } });
  return page.total_count;
}

const usage = (customer: string, n: number): UsageEvent => ({
  event_name: 'tokens',
  external_customer_id: customer,
  timestamp: new Date().toISOString(),
  properties: { tokens: n },
});

describe('@billstream/client: typed calls, errors, idempotency, timeouts, the batcher and webhooks', () => {
  let stack: IntegrationStack;
  let key: string;
  let client: BillstreamClient;

  beforeAll(async () => {
    stack = await startIntegrationStack({ inProcessBus: true, extra: { env: { WEBHOOK_ALLOW_INSECURE: 'true' } } });
    key = await stack.keyFor(TEST_TENANT, TEST_ENVIRONMENT);
    client = createClient({ apiKey: key, baseUrl: stack.embedded.url, retry: FAST_RETRY });
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    await stack?.stop();
  });

  it('makes typed calls: a customer, a wallet with credits, its balance, a filtered list, a delete', async () => {
    const run = Date.now().toString(36);
    const customer = await client.POST('/v1/customers', { body: { external_customer_id: `typed-${run}`, name: 'Typed Ltd', email: 'ap@typed.example' } });
    expect(customer).toMatchObject({ external_id: `typed-${run}`, name: 'Typed Ltd' });
    const wallet = await client.POST('/v1/wallets', { body: { customer_id: customer.id, currency: 'USD', initial_credits_to_load: '25.5' } });
    expect(wallet.currency).toBe('usd');
    const balance = await client.GET('/v1/wallets/{id}/balance', { params: { path: { id: wallet.id } } });
    expect(balance.credit_balance).toBe('25.5');
    const list = await client.GET('/v1/customers', { params: { query: { external_ids: [`typed-${run}`, 'nobody'], limit: 5 } } });
    expect(list.items.map((c) => c.id)).toEqual([customer.id]);
    const other = await client.POST('/v1/customers', { body: { external_customer_id: `typed-${run}-2` } });
    expect(await client.DELETE('/v1/customers/{id}', { params: { path: { id: other.id } } })).toBeUndefined();
  });

  it('throws one error class carrying status, internal_error, message, details and the request id', async () => {
    const missing = await thrown(client.GET('/v1/wallets/{id}', { params: { path: { id: 'wallet_01JDQ8Z6Y4K2M9N3P5R7T9V1X3' } }, requestId: 'client-test-404' }));
    expect(missing).toMatchObject({ status: 404, internal_error: 'not_found', requestId: 'client-test-404', attempts: 1 });
    expect(missing.message).toMatch(/wallet/i);

    const invalid = await thrown(client.POST('/v1/customers', { body: { external_customer_id: 'bad-email', email: 'not-an-address' } }));
    expect(invalid).toMatchObject({ status: 400, internal_error: 'validation_error', details: expect.objectContaining({ field: 'email' }) });
    expect(invalid.requestId).toMatch(UUID);

    const run = Date.now().toString(36);
    await client.POST('/v1/customers', { body: { external_customer_id: `dup-${run}` } });
    const duplicate = await thrown(client.POST('/v1/customers', { body: { external_customer_id: `dup-${run}` } }));
    expect(duplicate).toMatchObject({ status: 409, internal_error: 'already_exists', attempts: 1 });

    const anonymous = createClient({ apiKey: randomKey(), baseUrl: stack.embedded.url });
    expect(await thrown(anonymous.GET('/v1/api-keys'))).toMatchObject({ status: 401, internal_error: 'permission_denied' });

    const badEvent = await thrown(client.POST('/v1/events/bulk', { body: { events: [usage('x', 1), { ...usage('x', 2), timestamp: 'yesterday' }] } }));
    expect(badEvent).toMatchObject({ status: 400, details: expect.objectContaining({ index: 1 }) });
    expect(badEvent.hint).toEqual(expect.any(String));
  });

  it('keys every top-up and debit (a given key makes a repeat return the first transaction)', async () => {
    const customer = await client.POST('/v1/customers', { body: { external_customer_id: `idem-${Date.now().toString(36)}` } });
    const wallet = await client.POST('/v1/wallets', { body: { customer_id: customer.id, currency: 'usd' } });
    const path = { path: { id: wallet.id } };
    const topup = await client.POST('/v1/wallets/{id}/topup', { params: path, body: { credits_to_add: '10' } });
    expect(topup.idempotency_key).toMatch(UUID);
    const debit = await client.POST('/v1/wallets/{id}/debit', { params: path, body: { credits: '1' } });
    expect(debit.idempotency_key).toMatch(UUID);
    expect(debit.idempotency_key).not.toBe(topup.idempotency_key);

    const first = await client.POST('/v1/wallets/{id}/debit', { params: path, body: { credits: '2', idempotency_key: 'order-42' } });
    const again = await client.POST('/v1/wallets/{id}/debit', { params: path, body: { credits: '2', idempotency_key: 'order-42' } });
    expect(again.id).toBe(first.id);
    expect((await client.GET('/v1/wallets/{id}/balance', { params: path })).credit_balance).toBe('7');
    const conflict = await thrown(client.POST('/v1/wallets/{id}/debit', { params: path, body: { credits: '3', idempotency_key: 'order-42' } }));
    expect(conflict).toMatchObject({ status: 409, internal_error: 'idempotency_conflict' });

    // A key given as the Idempotency-Key header (ADR 0035) is the key: a repeat is the first top-up.
    const byHeader = { params: { ...path, header: { 'Idempotency-Key': 'order-43' } }, body: { credits_to_add: '5' } };
    const credited = await client.POST('/v1/wallets/{id}/topup', byHeader);
    expect(credited.idempotency_key).toBe('order-43');
    expect((await client.POST('/v1/wallets/{id}/topup', byHeader)).id).toBe(credited.id);
    expect((await client.GET('/v1/wallets/{id}/balance', { params: path })).credit_balance).toBe('12');
  });

  it('times out each attempt; retries a GET after a timeout or a network error, never an unsafe POST', async () => {
    const retries: RetryInfo[] = [];
    const impatient = createClient({ apiKey: key, baseUrl: stack.embedded.url, timeoutMs: 1, retry: { ...FAST_RETRY, maxAttempts: 3 }, onRetry: (r) => retries.push(r) });
    const slow = await thrown(impatient.GET('/v1/events/monitoring'));
    expect(slow).toMatchObject({ status: 0, internal_error: 'timeout', attempts: 3 });
    expect(retries.map((r) => r.error.internal_error)).toEqual(['timeout', 'timeout']);

    const closedPort = await freePort();
    retries.length = 0;
    const nowhere = createClient({ apiKey: key, baseUrl: `http://127.0.0.1:${closedPort}`, retry: { ...FAST_RETRY, maxAttempts: 3 }, onRetry: (r) => retries.push(r) });
    expect(await thrown(nowhere.GET('/v1/api-keys'))).toMatchObject({ status: 0, internal_error: 'network_error', attempts: 3 });
    expect(retries).toHaveLength(2);
    retries.length = 0;
    expect(await thrown(nowhere.POST('/v1/customers', { body: { external_customer_id: 'never' } }))).toMatchObject({ internal_error: 'network_error', attempts: 1 });
    expect(retries).toHaveLength(0);
    // A debit is keyed, so it is safe to repeat: retried.
    expect(await thrown(nowhere.POST('/v1/wallets/{id}/debit', { params: { path: { id: 'wallet_x' } }, body: { credits: '1' } }))).toMatchObject({ attempts: 3 });
  });

  it('batches 5,000 usage events with back-pressure: each stored once, a bad one handed to onError', async () => {
    const customer = `batch-${Date.now().toString(36)}`;
    const refused: Array<{ id: string; field: unknown }> = [];
    const batching = createClient({
      apiKey: key,
      baseUrl: stack.embedded.url,
      events: {
        maxBatchSize: 500,
        flushIntervalMs: 50,
        maxBufferedEvents: 1500,
        onError: (err, info) => {
          if (!info.willRetry) refused.push(...info.events.map((e) => ({ id: e.event_id, field: err.details?.field })));
        },
      },
    });
    let mostPending = 0;
    const ids: string[] = [];
    for (let i = 0; i < 5000; i++) {
      ids.push(await batching.events.enqueue(usage(customer, i)));
      mostPending = Math.max(mostPending, batching.events.pending);
      if (i === 2500) await batching.events.enqueue({ ...usage(customer, -1), event_id: 'bad-one', timestamp: 'not a time' });
    }
    await batching.close();
    expect(new Set(ids).size).toBe(5000);
    expect(mostPending).toBeLessThanOrEqual(1500);
    expect(refused).toEqual([{ id: 'bad-one', field: expect.stringMatching(/timestamp$/) }]);
    expect(batching.events.stats).toMatchObject({ enqueued: 5001, sent: 5000, refused: 1 });
    expect(batching.events.stats.batches).toBeGreaterThanOrEqual(10);
    await waitFor(async () => (await eventCount(client, customer)) === 5000, { timeoutMs: 30_000, what: '5,000 events stored' });
    await expect(batching.events.enqueue(usage(customer, 0))).rejects.toThrow('closed');
  });

  it('verifies real deliveries: a test delivery and a customer.created, both signatures; refuses tampering and replays', async () => {
    const receiver = await startReceiver();
    try {
      const endpoint = await client.POST('/v1/webhook-endpoints', { body: { url: receiver.url, events: ['customer.created'] } });
      const delivery = await client.POST('/v1/webhook-endpoints/{id}/test', { params: { path: { id: endpoint.id } }, body: { event_name: 'customer.created' } });
      expect(delivery.status).toBe('succeeded');
      const test = receiver.received[0];
      const envelope = verifyWebhook(test.raw, test.headers, endpoint.secret);
      expect(isTestPayload(envelope.payload)).toBe(true);

      const customer = await client.POST('/v1/customers', { body: { external_customer_id: `hooked-${Date.now().toString(36)}` } });
      const real = await waitFor(() => receiver.received.find((r) => r.raw.includes(customer.id)), { timeoutMs: 10_000, what: 'customer.created' });
      const event = verifyWebhook(real.raw, real.headers, endpoint.secret, { toleranceSeconds: 60 });
      if (event.event_name !== 'customer.created' || isTestPayload(event.payload)) throw new Error(`unexpected ${event.event_name}`);
      expect(event.payload.customer.id).toBe(customer.id);
      expect(event.payload.customer.external_id).toBe(customer.external_id);

      const reason = (fn: () => unknown) => {
        try {
          fn();
        } catch (err) {
          expect(err).toBeInstanceOf(WebhookVerificationError);
          return (err as WebhookVerificationError).reason;
        }
        return 'accepted';
      };
      const tampered = Buffer.from(real.raw.toString('utf8').replace(customer.id, 'cust_someone_else'));
      expect(reason(() => verifyWebhook(tampered, real.headers, endpoint.secret))).toBe('bad_signature');
      expect(reason(() => verifyWebhook(real.raw, real.headers, `whsec_${Buffer.alloc(24, 7).toString('base64')}`))).toBe('bad_signature');
      const later = new Date(Date.now() + 10 * 60_000);
      expect(reason(() => verifyWebhook(real.raw, real.headers, endpoint.secret, { now: later }))).toBe('timestamp_out_of_tolerance');
      const moved = { ...real.headers, 'webhook-timestamp': String(Math.floor(later.getTime() / 1000)) };
      expect(reason(() => verifyWebhook(real.raw, moved, endpoint.secret, { now: later }))).toBe('bad_signature');
    } finally {
      await receiver.close();
    }
  });
});

describe('@billstream/client under the gateway rate limit (1 request/s, burst 2)', () => {
  let stack: IntegrationStack;
  let key: string;

  beforeAll(async () => {
    stack = await startIntegrationStack({ inProcessBus: true, rateLimitRps: 1, rateLimitBurst: 2 });
    key = await stack.keyFor(TEST_TENANT, TEST_ENVIRONMENT);
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('waits for Retry-After after a real 429 and succeeds; an unsafe POST gets the 429 as an error', async () => {
    const retries: RetryInfo[] = [];
    const client = createClient({ apiKey: key, baseUrl: stack.embedded.url, retry: { maxAttempts: 5 }, onRetry: (r) => retries.push(r) });
    await sleep(2100); // a full bucket
    await client.GET('/v1/api-keys');
    await client.GET('/v1/api-keys');
    const started = Date.now();
    const third = await client.GET('/v1/api-keys');
    expect(third.items.length).toBeGreaterThan(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(retries[0]).toMatchObject({ method: 'GET', attempt: 1, error: { status: 429, internal_error: 'service_unavailable', retryAfterSeconds: 1 } });
    expect(retries[0].delayMs).toBeGreaterThanOrEqual(1000);

    retries.length = 0;
    const limited = await thrown(client.POST('/v1/customers', { body: { external_customer_id: 'rate-limited' } }));
    expect(limited).toMatchObject({ status: 429, internal_error: 'service_unavailable', attempts: 1 });
    expect(limited.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(retries).toHaveLength(0);

    // A usage event carries its event_id: safe to repeat, so it waits out the 429 too.
    await sleep(2100);
    await client.GET('/v1/api-keys');
    await client.GET('/v1/api-keys');
    const accepted = await client.POST('/v1/events', { body: usage('rate-limited', 1) });
    expect(accepted.event_id).toMatch(UUID);
    expect(retries.map((r) => r.error.status)).toContain(429);

    // A Retry-After longer than the client will wait is thrown at once, even for a GET.
    const hurried = createClient({ apiKey: key, baseUrl: stack.embedded.url, retry: { maxRetryAfterMs: 500 } });
    await sleep(2100);
    await hurried.GET('/v1/api-keys');
    await hurried.GET('/v1/api-keys');
    expect(await thrown(hurried.GET('/v1/api-keys'))).toMatchObject({ status: 429, attempts: 1, retryAfterSeconds: 1 });
  });
});

describe('@billstream/client when the database goes away for a moment (a real 503)', () => {
  let stack: IntegrationStack;
  let key: string;

  beforeAll(async () => {
    stack = await startIntegrationStack({ inProcessBus: true });
    key = await stack.keyFor(TEST_TENANT, TEST_ENVIRONMENT);
  }, 120_000);
  afterAll(async () => {
    await setConnections(stack.database.name, true).catch(() => undefined);
    await stack?.stop();
  });

  it('retries a usage event through 503 service_unavailable until it is stored, once', async () => {
    const retries: RetryInfo[] = [];
    const client = createClient({ apiKey: key, baseUrl: stack.embedded.url, retry: { maxAttempts: 30, baseDelayMs: 100, maxDelayMs: 300 }, onRetry: (r) => retries.push(r) });
    const customer = `outage-${Date.now().toString(36)}`;
    await client.POST('/v1/events', { body: usage(customer, 0) }); // the key is resolved and cached

    // knex prints each refused connection with console.log: keep the run's output readable.
    const quiet = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    await setConnections(stack.database.name, false);
    const during = client.POST('/v1/events', { body: { ...usage(customer, 1), event_id: 'during-outage' } });
    await waitFor(() => retries.some((r) => r.error.status === 503), { timeoutMs: 4000, what: 'a 503 while the database is away' });
    await setConnections(stack.database.name, true);
    expect((await during).event_id).toBe('during-outage');
    quiet.mockRestore();
    expect(retries.find((r) => r.error.status === 503)?.error).toMatchObject({ internal_error: 'service_unavailable', details: expect.objectContaining({ event_ids: ['during-outage'] }) });
    await waitFor(async () => (await eventCount(client, customer)) === 2, { timeoutMs: 15_000, what: 'both events stored' });
  });
});

/** Lets no new connection into the database and ends the open ones (or lets them in again). */
async function setConnections(database: string, allowed: boolean): Promise<void> {
  const admin = new Client({ connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  try {
    await admin.query(`ALTER DATABASE "${database}" WITH ALLOW_CONNECTIONS ${allowed ? 'true' : 'false'}`);
    if (!allowed) await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
  } finally {
    await admin.end();
  }
}

describe('@billstream/client batcher across a restart of the embedded default on the same port', () => {
  it('buffers while the gateway is down, retries the failed batches with the same event ids, and close() loses nothing', async () => {
    const database = await createTestDatabase();
    const port = await freePort();
    const apiKey = randomKey();
    const start = () =>
      startEmbedded({
        logger: testLogger('client-restart'),
        dataDir: path.join(os.tmpdir(), `billstream-test-${database.name}`),
        port,
        host: '127.0.0.1',
        databaseUrl: database.url,
        rateLimitRps: 100_000,
        rateLimitBurst: 100_000,
        bootstrap: { key: apiKey, tenantId: TEST_TENANT, environmentId: TEST_ENVIRONMENT },
      });
    let embedded: Embedded | undefined = await start();
    const failures: BillstreamError[] = [];
    const client = createClient({
      apiKey,
      baseUrl: `http://127.0.0.1:${port}`,
      retry: { maxAttempts: 2, baseDelayMs: 20, maxDelayMs: 100 },
      events: {
        maxBatchSize: 200,
        flushIntervalMs: 20,
        maxBufferedEvents: 5000,
        retryBaseDelayMs: 50,
        retryMaxDelayMs: 300,
        onError: (err, info) => (info.willRetry ? failures.push(err) : expect(info.willRetry).toBe(true)),
      },
    });
    const customer = `restart-${Date.now().toString(36)}`;
    try {
      for (let i = 0; i < 1000; i++) await client.events.enqueue(usage(customer, i));
      const stopping = embedded.stop(); // batches may be in flight: the gateway finishes or drops them
      embedded = undefined;
      for (let i = 1000; i < 1500; i++) await client.events.enqueue(usage(customer, i));
      await stopping;
      for (let i = 1500; i < 2000; i++) await client.events.enqueue(usage(customer, i));
      await waitFor(() => failures.some((f) => f.status === 0), { timeoutMs: 10_000, what: 'a batch to fail while the gateway is down' });
      expect(client.events.pending).toBeGreaterThan(0);

      embedded = await start();
      await client.close({ timeoutMs: 60_000 });
      expect(client.events.stats).toMatchObject({ enqueued: 2000, sent: 2000, refused: 0 });
      expect(client.events.stats.retries).toBeGreaterThan(0);
      const reader = createClient({ apiKey, baseUrl: embedded.url });
      await waitFor(async () => (await eventCount(reader, customer)) === 2000, { timeoutMs: 30_000, what: '2,000 events stored once' });
      await sleep(500);
      expect(await eventCount(reader, customer)).toBe(2000);
    } finally {
      await embedded?.stop();
      await database.drop();
    }
  }, 180_000);
});

interface Received {
  raw: Buffer;
  headers: http.IncomingHttpHeaders;
}

/** A real local HTTP receiver that keeps each request's raw bytes and headers. */
async function startReceiver() {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ raw: Buffer.concat(chunks), headers: req.headers });
      res.writeHead(200).end('ok');
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: async () => {
      sockets.forEach((s) => s.destroy());
      await new Promise((r) => server.close(r));
    },
  };
}
