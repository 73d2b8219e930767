import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { KafkaBus, TOPICS } from '@billstream/bus';
import type { DomainEvent, WebhookEventName } from '@billstream/contracts';
import { newDomainEvent } from '@billstream/outbox';
import { kafkaBrokers, sleep, testLogger, waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

interface Received {
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  envelope: { id: string; event_name: string; tenant_id: string; environment_id: string; user_id: string; timestamp: string; payload: any };
}

type Reply = (req: http.IncomingMessage, res: http.ServerResponse, count: number) => void;

/** A real local HTTP receiver that keeps each request's raw bytes and answers with `reply`. */
async function startReceiver(reply: Reply = (_q, res) => res.writeHead(200).end('ok')) {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      received.push({ headers: req.headers, raw, envelope: JSON.parse(raw.toString('utf8')) });
      reply(req, res, received.length);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    ids: () => received.map((r) => r.envelope.id),
    close: async () => {
      sockets.forEach((s) => s.destroy());
      await new Promise((r) => server.close(r));
    },
  };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

describe('webhook dispatch (real receivers, Kafka and Postgres)', () => {
  let stack: IntegrationStack;
  let producer: KafkaBus;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    stack = await startIntegrationStack({
      extra: {
        env: {
          WEBHOOK_ALLOW_INSECURE: 'true',
          WEBHOOK_RETRY_SCHEDULE: '1s,1s',
          WEBHOOK_TIMEOUT_MS: '8000',
          WEBHOOK_CONCURRENCY: '8',
          WEBHOOK_ENDPOINT_CONCURRENCY: '4',
          WEBHOOK_POLL_MS: '100',
        },
      },
    });
    producer = new KafkaBus({ brokers: kafkaBrokers(), clientId: 'webhook-test-producer', logger: testLogger(), topicPrefix: stack.topicPrefix });
    await producer.start();
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await producer?.stop();
    await stack?.stop();
  });

  const receiver = async (reply?: Reply) => {
    const r = await startReceiver(reply);
    receivers.push(r);
    return r;
  };
  const endpoint = async (url: string, events: string[], extra: Record<string, unknown> = {}, api = stack.api) => {
    const res = await api.post('/v1/webhook-endpoints', { url, events, ...extra });
    expect(res.status).toBe(201);
    return res.body as { id: string; secret: string };
  };
  /** Publishes domain events the way the customer and wallet services' relays do. */
  const publish = async (topic: string, events: DomainEvent[]) => {
    await producer.publish(
      topic,
      events.map((e) => ({
        key: (Object.values(e.payload)[0] as { id: string }).id,
        value: JSON.stringify(e),
        headers: { 'message-id': e.id, 'event-type': e.type },
      })),
    );
  };
  const scope = (tenantId = 'tenant-a', environmentId = 'production') => ({ tenantId, environmentId, actor: 'key_TEST' });
  const customerEvent = (type: WebhookEventName, id: string, s = scope()) => newDomainEvent(type, s, { customer: { id, external_id: `ext-${id}`, name: 'Zoë' } });
  const walletEvent = (type: WebhookEventName, id: string, s = scope()) => newDomainEvent(type, s, { wallet: { id, balance: '10.50', currency: 'usd' } });

  it('delivers the envelope as raw bytes whose signatures verify', async () => {
    const r = await receiver();
    const ep = await endpoint(r.url, ['customer.created']);
    const event = customerEvent('customer.created', 'cust_SIG1');
    await publish(TOPICS.customerEvents, [event]);
    await waitFor(() => r.received.length >= 1, { timeoutMs: 10_000, what: 'the delivery' });
    const [got] = r.received;
    expect(got.envelope).toEqual({
      id: event.id,
      event_name: 'customer.created',
      tenant_id: 'tenant-a',
      environment_id: 'production',
      user_id: 'key_TEST',
      timestamp: event.occurred_at,
      payload: event.payload,
    });
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['x-billstream-signature']).toBe(createHmac('sha256', ep.secret).update(got.raw).digest('hex'));
    expect(got.headers['webhook-id']).toBe(event.id);
    const ts = Number(got.headers['webhook-timestamp']);
    expect(Math.abs(ts - Date.now() / 1000)).toBeLessThan(30);
    const key = Buffer.from(ep.secret.slice('whsec_'.length), 'base64');
    const signed = Buffer.concat([Buffer.from(`${event.id}.${ts}.`), got.raw]);
    expect(got.headers['webhook-signature']).toBe(`v1,${createHmac('sha256', key).update(signed).digest('base64')}`);

    const records = await waitFor(async () => {
      const res = await stack.api.get(`/v1/webhook-endpoints/${ep.id}/deliveries`);
      return res.body.deliveries.length === 1 ? res.body : undefined;
    });
    expect(records.deliveries[0]).toMatchObject({
      id: expect.stringMatching(/^whd_/),
      endpoint_id: ep.id,
      event_id: event.id,
      event_name: 'customer.created',
      attempt: 1,
      status: 'succeeded',
      response_code: 200,
      error: null,
      retry_at: null,
    });
    expect(records.pagination).toEqual({ total: 1, limit: 50, offset: 0 });
  });

  it('sends each endpoint only what it subscribed to, only in its tenant and environment, and nothing when disabled', async () => {
    const [one, all, disabled, otherTenant, otherEnv] = await Promise.all([receiver(), receiver(), receiver(), receiver(), receiver()]);
    await endpoint(one.url, ['customer.updated']);
    await endpoint(all.url, ['*']);
    await endpoint(disabled.url, ['*'], { enabled: false });
    await endpoint(otherTenant.url, ['*'], {}, stack.api.withKey(await stack.keyFor('tenant-b', 'production')));
    await endpoint(otherEnv.url, ['*'], {}, stack.api.withKey(await stack.keyFor('tenant-a', 'sandbox')));
    const events = [
      customerEvent('customer.created', 'cust_F1'),
      customerEvent('customer.updated', 'cust_F1'),
      customerEvent('customer.deleted', 'cust_F1'),
    ];
    const wallet = [walletEvent('wallet.created', 'wallet_F1'), walletEvent('wallet.transaction.created', 'wallet_F1')];
    await publish(TOPICS.customerEvents, events);
    await publish(TOPICS.walletEvents, wallet);
    await waitFor(() => all.received.length >= 5 && one.received.length >= 1, { timeoutMs: 15_000, what: 'fan-out' });
    await sleep(1500);
    expect(all.ids().sort()).toEqual([...events, ...wallet].map((e) => e.id).sort());
    expect(one.received.map((r) => r.envelope.event_name)).toEqual(['customer.updated']);
    expect(disabled.received).toEqual([]);
    expect(otherTenant.received).toEqual([]);
    expect(otherEnv.received).toEqual([]);
  });

  it('retries a failed attempt with the same envelope id, and the records show failed then succeeded', async () => {
    const r = await receiver((_q, res, count) => res.writeHead(count === 1 ? 500 : 200).end());
    const ep = await endpoint(r.url, ['wallet.updated']);
    const event = walletEvent('wallet.updated', 'wallet_R1');
    await publish(TOPICS.walletEvents, [event]);
    await waitFor(() => r.received.length >= 2, { timeoutMs: 15_000, what: 'the retry' });
    expect(r.ids()).toEqual([event.id, event.id]);
    expect(r.received[0].raw.equals(r.received[1].raw)).toBe(true);
    const records = await waitFor(async () => {
      const res = await stack.api.get(`/v1/webhook-endpoints/${ep.id}/deliveries`);
      return res.body.deliveries.length === 2 ? res.body.deliveries : undefined;
    });
    const [second, first] = records;
    expect(first).toMatchObject({ event_id: event.id, attempt: 1, status: 'failed', response_code: 500, error: 'endpoint answered HTTP 500' });
    expect(Date.parse(first.retry_at) - Date.parse(first.attempted_at)).toBeGreaterThanOrEqual(900);
    expect(second).toMatchObject({ event_id: event.id, attempt: 2, status: 'succeeded', response_code: 200, error: null, retry_at: null });
    const failedOnly = await stack.api.get(`/v1/webhook-endpoints/${ep.id}/deliveries?status=failed`);
    expect(failedOnly.body.deliveries.map((d: { id: string }) => d.id)).toEqual([first.id]);
  });

  it('gives up after the schedule, and follows no redirect', async () => {
    const target = await receiver();
    const r = await receiver((_q, res) => res.writeHead(302, { location: target.url }).end());
    const ep = await endpoint(r.url, ['customer.created']);
    const event = customerEvent('customer.created', 'cust_G1');
    await publish(TOPICS.customerEvents, [event]);
    const records = await waitFor(
      async () => {
        const res = await stack.api.get(`/v1/webhook-endpoints/${ep.id}/deliveries`);
        return res.body.deliveries.length === 3 ? res.body.deliveries : undefined;
      },
      { timeoutMs: 15_000, what: 'three attempts' },
    );
    expect(records.map((d: any) => [d.attempt, d.status, d.response_code])).toEqual([
      [3, 'failed', 302],
      [2, 'failed', 302],
      [1, 'failed', 302],
    ]);
    expect(records[0].retry_at).toBeNull();
    expect(records[1].retry_at).not.toBeNull();
    await sleep(1500);
    expect(r.received).toHaveLength(3);
    expect(target.received).toEqual([]);
  });

  it('a dead endpoint holds only its own slots and does not slow down a healthy one', async () => {
    const healthy = await receiver();
    const dead = await receiver(() => undefined);
    const deadEndpoint = await endpoint(dead.url, ['wallet.transaction.created']);
    await endpoint(healthy.url, ['wallet.transaction.created']);
    const events = Array.from({ length: 60 }, (_, i) => walletEvent('wallet.transaction.created', `wallet_D${i}`));
    const started = Date.now();
    await publish(TOPICS.walletEvents, events);
    await waitFor(() => healthy.received.length >= events.length, { timeoutMs: 20_000, intervalMs: 20, what: 'the healthy endpoint' });
    // Every attempt to the dead endpoint waits 8 s for an answer: the healthy one was served
    // while the dead one's first attempts were still hanging, and those held 4 slots at most.
    expect(Date.now() - started).toBeLessThan(8000);
    expect((await stack.api.get(`/v1/webhook-endpoints/${deadEndpoint.id}/deliveries`)).body.deliveries).toEqual([]);
    expect(new Set(healthy.ids()).size).toBe(events.length);
    expect(dead.received.length).toBeLessThanOrEqual(4);
    expect((await stack.api.delete(`/v1/webhook-endpoints/${deadEndpoint.id}`)).status).toBe(204);
  });

  it('sends a test envelope now and returns its delivery record', async () => {
    const r = await receiver();
    const ep = await endpoint(r.url, ['customer.created'], { enabled: false });
    const res = await stack.api.post(`/v1/webhook-endpoints/${ep.id}/test`, { event_name: 'wallet.created' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^whd_/),
      endpoint_id: ep.id,
      event_id: expect.stringMatching(/^evt_/),
      event_name: 'wallet.created',
      attempt: 1,
      status: 'succeeded',
      response_code: 200,
      error: null,
      retry_at: null,
    });
    expect(r.received).toHaveLength(1);
    expect(r.received[0].envelope).toMatchObject({ id: res.body.event_id, event_name: 'wallet.created', tenant_id: 'tenant-a', payload: { test: true } });
    expect(r.received[0].headers['x-billstream-signature']).toBe(createHmac('sha256', ep.secret).update(r.received[0].raw).digest('hex'));
    const listed = await stack.api.get(`/v1/webhook-endpoints/${ep.id}/deliveries?event_id=${res.body.event_id}`);
    expect(listed.body.deliveries).toEqual([res.body]);

    const failing = await receiver((_q, rs) => rs.writeHead(503).end());
    const ep2 = await endpoint(failing.url, ['*']);
    const failed = await stack.api.post(`/v1/webhook-endpoints/${ep2.id}/test`, { event_name: 'customer.deleted' });
    expect(failed.body).toMatchObject({ status: 'failed', response_code: 503, error: 'endpoint answered HTTP 503', retry_at: null });
    const bad = await stack.api.post(`/v1/webhook-endpoints/${ep2.id}/test`, { event_name: '*' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('event_name');
  });
});
