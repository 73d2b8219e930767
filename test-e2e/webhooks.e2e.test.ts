import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { KafkaBus, TOPICS } from '@billstream/bus';
import { newDomainEvent } from '@billstream/outbox';
import { kafkaBrokers, sleep, testLogger, waitFor } from '@billstream/testing';
import { startProcessStack, type ProcessStack } from './support/stack';

/**
 * A receiver that holds requests without answering while `stalled`, and answers 200 (or
 * what `status` says) otherwise. It keeps, per envelope id, every raw body it was sent and
 * the ids it answered with a 2xx.
 */
async function startReceiver() {
  const state = {
    stalled: false,
    status: (_id: string, _count: number) => 200,
    received: [] as Array<{ id: string; raw: Buffer; signature: string }>,
    acknowledged: new Set<string>(),
  };
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const id = JSON.parse(raw.toString('utf8')).id as string;
      state.received.push({ id, raw, signature: String(req.headers['x-billstream-signature']) });
      if (state.stalled) return;
      const status = state.status(id, state.received.filter((r) => r.id === id).length);
      if (status >= 200 && status < 300) state.acknowledged.add(id);
      res.writeHead(status).end();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    state,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: async () => {
      sockets.forEach((s) => s.destroy());
      await new Promise((r) => server.close(r));
    },
  };
}

describe('webhook dispatcher as its own process (e2e)', () => {
  let stack: ProcessStack;
  let producer: KafkaBus;
  const receivers: Array<Awaited<ReturnType<typeof startReceiver>>> = [];

  beforeAll(async () => {
    stack = await startProcessStack({
      env: {
        'webhook-dispatcher': {
          WEBHOOK_ALLOW_INSECURE: 'true',
          WEBHOOK_TIMEOUT_MS: '4000',
          WEBHOOK_CLAIM_LEASE_MS: '9000',
          WEBHOOK_RETRY_SCHEDULE: '3s,3s,3s,3s,3s,3s',
          WEBHOOK_POLL_MS: '100',
        },
      },
    });
    producer = new KafkaBus({ brokers: kafkaBrokers(), clientId: 'webhook-e2e-producer', logger: testLogger(), topicPrefix: stack.topicPrefix });
    await producer.start();
  }, 120_000);
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await producer?.stop();
    await stack?.stop();
  });

  const receiver = async () => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };
  const endpoint = async (url: string, events: string[]) => {
    const res = await stack.api.post('/v1/webhook-endpoints', { url, events });
    expect(res.status).toBe(201);
    return res.body as { id: string; secret: string };
  };
  const walletEvents = (n: number, tag: string) =>
    Array.from({ length: n }, (_, i) =>
      newDomainEvent('wallet.transaction.created', { tenantId: 'tenant-a', environmentId: 'production', actor: 'key_E2E' }, {
        transaction: { id: `wtxn_${tag}${i}`, wallet_id: `wallet_${tag}`, credit_amount: '1.50' },
      }),
    );
  const publish = (events: ReturnType<typeof walletEvents>) =>
    producer.publish(
      TOPICS.walletEvents,
      events.map((e) => ({ key: (e.payload.transaction as { wallet_id: string }).wallet_id, value: JSON.stringify(e), headers: { 'message-id': e.id } })),
    );

  it('a dispatcher killed mid-delivery redelivers after restart and loses nothing', async () => {
    const r = await receiver();
    const ep = await endpoint(r.url, ['wallet.transaction.created']);
    r.state.stalled = true;
    const before = walletEvents(30, 'K');
    await publish(before);
    await waitFor(() => r.state.received.length >= 5, { timeoutMs: 20_000, what: 'attempts in flight' });

    await stack.kill('webhook-dispatcher');
    const during = walletEvents(30, 'L');
    await publish(during);
    r.state.stalled = false;
    await stack.restart('webhook-dispatcher');

    const all = [...before, ...during].map((e) => e.id);
    await waitFor(() => all.every((id) => r.state.acknowledged.has(id)), { timeoutMs: 60_000, intervalMs: 200, what: 'every event acknowledged' });
    for (const got of r.state.received) {
      expect(got.signature).toBe(createHmac('sha256', ep.secret).update(got.raw).digest('hex'));
    }
    const records = await waitFor(
      async () => {
        const res = await stack.api.get(`/v1/webhook-endpoints/${ep.id}/deliveries?status=succeeded&limit=1000`);
        return res.body.deliveries.length >= all.length ? res.body.deliveries : undefined;
      },
      { timeoutMs: 20_000, what: 'the records' },
    );
    expect(new Set(records.map((d: { event_id: string }) => d.event_id))).toEqual(new Set(all));
  }, 150_000);

  it('a retry planned before a restart is sent after it, with the same envelope id', async () => {
    const r = await receiver();
    r.state.status = (_id, count) => (count === 1 ? 503 : 200);
    const ep = await endpoint(r.url, ['wallet.transaction.created']);
    const [event] = walletEvents(1, 'P');
    await publish([event]);
    const failed = await waitFor(
      async () => {
        const res = await stack.api.get(`/v1/webhook-endpoints/${ep.id}/deliveries`);
        return res.body.deliveries.find((d: { status: string }) => d.status === 'failed');
      },
      { timeoutMs: 20_000, what: 'the failed first attempt' },
    );
    expect(failed).toMatchObject({ event_id: event.id, response_code: 503, retry_at: expect.any(String) });
    await stack.kill('webhook-dispatcher');
    await sleep(3000);
    await stack.restart('webhook-dispatcher');
    await waitFor(() => r.state.acknowledged.has(event.id), { timeoutMs: 30_000, what: 'the retry after restart' });
    expect(r.state.received.map((x) => x.id)).toEqual([event.id, event.id]);
    expect(r.state.received[0].raw.equals(r.state.received[1].raw)).toBe(true);
  }, 90_000);

  it('a customer created through the gateway arrives as customer.created', async () => {
    const r = await receiver();
    const ep = await endpoint(r.url, ['customer.created']);
    const created = await stack.api.post('/v1/customers', { external_customer_id: `ext-wh-${Date.now()}`, name: 'Webhook Test', email: 'wh@example.com' });
    expect(created.status).toBe(201);
    await waitFor(() => r.state.acknowledged.size >= 1, { timeoutMs: 15_000, what: 'customer.created' });
    const envelope = JSON.parse(r.state.received[0].raw.toString('utf8'));
    expect(envelope).toMatchObject({
      id: expect.stringMatching(/^evt_/),
      event_name: 'customer.created',
      tenant_id: 'tenant-a',
      environment_id: 'production',
      user_id: expect.stringMatching(/^key_/),
      timestamp: expect.stringMatching(/Z$/),
      payload: { customer: { id: created.body.id, external_id: created.body.external_id } },
    });
    expect(r.state.received[0].signature).toBe(createHmac('sha256', ep.secret).update(r.state.received[0].raw).digest('hex'));
  }, 60_000);
});
