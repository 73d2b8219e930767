import {
  ownKafkaBroker,
  sleep,
  startArrivalReceiver,
  waitFor,
  type ArrivalReceiver,
  type OwnKafkaBroker,
} from '@billstream/testing';
import { startProcessStack, type ProcessStack } from './support/stack';

/**
 * Issue #11: outbox events written while Kafka is down reach webhooks within 5 s of the broker
 * coming back. The services run as separate processes on a broker of this test's own, which it
 * stops and starts (never the shared one).
 */

const BACK_LIMIT_MS = 5000;

describe('a Kafka outage (separate processes, real Postgres, a broker of the test own)', () => {
  let broker: OwnKafkaBroker;
  let stack: ProcessStack;
  let receiver: ArrivalReceiver;

  beforeAll(async () => {
    broker = await ownKafkaBroker();
    await broker.start();
    stack = await startProcessStack({
      commonEnv: { KAFKA_BROKERS: broker.brokers.join(',') },
      // At info: the bus's and the relay's own lines (a crashed member removed, a round retried) show when a return is slow.
      env: { customer: { LOG_LEVEL: 'info' }, 'webhook-dispatcher': { WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_POLL_MS: '100', LOG_LEVEL: 'info' } },
    });
    receiver = await startArrivalReceiver();
    const endpoint = await stack.api.post('/v1/webhook-endpoints', { url: receiver.url, events: ['customer.created'] });
    expect(endpoint.status).toBe(201);
  }, 240_000);

  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
    await broker?.remove();
  }, 120_000);

  let seq = 0;
  const newCustomer = async () => {
    const res = await stack.api.post('/v1/customers', { external_customer_id: `outage-${Date.now()}-${(seq += 1)}` });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };

  it('customers created while the broker is down arrive as webhooks within 5 s of its return', async () => {
    // The whole path works before the outage (and the dispatcher has joined its group).
    const before = await newCustomer();
    await waitFor(() => receiver.arrivals.has(before), { timeoutMs: 60_000, what: 'the webhook before the outage' });

    await broker.stop();
    const during: string[] = [];
    for (let i = 0; i < 5; i += 1) during.push(await newCustomer());
    // Longer than a session and several relay and consumer retries.
    await sleep(8000);
    expect(during.some((id) => receiver.arrivals.has(id))).toBe(false);

    await broker.start();
    const backAt = Date.now();
    await waitFor(() => during.every((id) => receiver.arrivals.has(id)), { timeoutMs: 60_000, what: 'the webhooks written during the outage' }).catch(
      (err) => {
        // What the relay and the dispatcher said, to tell a stuck relay from a stuck consumer.
        const missing = during.filter((id) => !receiver.arrivals.has(id));
        throw new Error(
          `${String(err)}\nmissing: ${missing.join(', ')}\n--- customer ---\n${stack.logs('customer').slice(-6000)}\n--- webhook-dispatcher ---\n${stack.logs('webhook-dispatcher').slice(-6000)}`,
        );
      },
    );
    const lastMs = Math.max(...during.map((id) => receiver.arrivals.get(id)! - backAt));
    const firstMs = Math.min(...during.map((id) => receiver.arrivals.get(id)! - backAt));
    process.stdout.write(`kafka outage (issue #11): the 5 webhooks written during it arrived ${firstMs}-${lastMs} ms after the broker was back\n`);
    if (lastMs >= BACK_LIMIT_MS) {
      // Rare (ADR 0009: 2 of 26 runs, one with nothing logged at warn): what the relay and the
      // dispatcher said, at info, to tell a late relay from a late consumer next time.
      process.stdout.write(`--- customer ---\n${stack.logs('customer').slice(-8000)}\n--- webhook-dispatcher ---\n${stack.logs('webhook-dispatcher').slice(-8000)}\n`);
    }

    expect(lastMs).toBeLessThan(BACK_LIMIT_MS);
  }, 240_000);
});
