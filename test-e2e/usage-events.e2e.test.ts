import { Client } from 'pg';
import { sleep, waitFor } from '@billstream/testing';
import { startProcessStack, type ProcessStack } from './support/stack';

/**
 * The services as separate processes on real Postgres and Kafka: the aggregator is killed
 * (SIGKILL) while events keep coming; after its restart every accepted event is stored once.
 */
describe('usage events survive an aggregator crash (e2e, separate processes)', () => {
  let stack: ProcessStack;

  beforeAll(async () => {
    // This test calls no wallet route; the wallet only needs some customer-service address to start.
    stack = await startProcessStack();
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
  }, 60_000);

  it('stores every accepted event exactly once after a SIGKILL mid-stream and a restart', async () => {
    const accepted = new Set<string>();
    const refused: number[] = [];
    let sent = 0;
    let sending = true;
    let batch = 0;

    const sender = async (worker: number) => {
      let previous = 0;
      while (sending) {
        batch += 1;
        const n = batch;
        const events = Array.from({ length: 200 }, (_, i) => ({
          event_name: 'api_call',
          external_customer_id: `cust-${(n + i) % 17}`,
          timestamp: new Date(Date.UTC(2026, 10, 1) + n * 1000 + i).toISOString(),
          properties: { n, i },
          // Every 4th event lets the gateway generate its id; every 10th repeats one of the sender's previous request.
          ...(i % 4 === 0 ? {} : { event_id: i % 10 === 5 && previous > 0 ? `w${worker}-${previous}-${i}` : `w${worker}-${n}-${i}` }),
        }));
        previous = n;
        sent += events.length;
        const res = await stack.api.post('/v1/events/bulk', { events });
        if (res.status === 202) for (const id of res.body.event_ids as string[]) accepted.add(id);
        else refused.push(res.status);
        await sleep(50);
      }
    };

    const senders = [0, 1, 2].map((w) => sender(w));
    await sleep(2000);
    await stack.kill('ingestion-aggregator');
    await sleep(2000);
    await stack.restart('ingestion-aggregator');
    await sleep(1500);
    sending = false;
    await Promise.all(senders);

    expect(refused).toEqual([]);
    expect(sent).toBeGreaterThan(accepted.size);
    expect(accepted.size).toBeGreaterThan(1000);

    const total = await waitFor(
      async () => {
        const res = await stack.api.post('/v1/events/query', { page_size: 1 });
        return res.status === 200 && res.body.total_count >= accepted.size ? (res.body.total_count as number) : undefined;
      },
      // The killed consumer holds its partitions until its session times out (30 s), then the group rebalances.
      { timeoutMs: 150_000, intervalMs: 500, what: `${accepted.size} events to be stored` },
    );
    await sleep(2000);
    expect(total).toBe(accepted.size);

    const pg = new Client({ connectionString: stack.database.url });
    await pg.connect();
    try {
      const { rows } = await pg.query<{ n: string; distinct_ids: string }>(
        "SELECT count(*) AS n, count(DISTINCT event_id) AS distinct_ids FROM ingestion.events WHERE tenant_id = 'tenant-a' AND environment_id = 'production'",
      );
      expect(Number(rows[0].n)).toBe(accepted.size);
      expect(Number(rows[0].distinct_ids)).toBe(accepted.size);
      const ids = await pg.query<{ event_id: string }>('SELECT event_id FROM ingestion.events');
      const stored = new Set(ids.rows.map((r) => r.event_id));
      for (const id of accepted) expect(stored.has(id)).toBe(true);
    } finally {
      await pg.end();
    }
    const monitoring = await stack.api.get('/v1/events/monitoring');
    expect(monitoring.body).toMatchObject({ total_events: accepted.size, consumer_lag: 0 });
  }, 300_000);
});
