import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, sleep, waitFor } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

const KAFKA_SH = path.resolve(__dirname, '../../../deploy/kafka/kafka.sh');

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A broker of this test alone (never the shared one), on a free port pair. */
async function dedicatedBroker() {
  let port = await freePort();
  while (!(await portFree(port + 1))) port = await freePort();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'billstream-kafka-down-'));
  const env = { ...process.env, KAFKA_PORT: String(port), KAFKA_DATA_DIR: dataDir };
  const run = (cmd: string) => execFileSync('bash', [KAFKA_SH, cmd], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  run('start');
  return {
    brokers: [`127.0.0.1:${port}`],
    start: () => run('start'),
    stop: () => run('stop'),
    destroy: () => {
      run('stop');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

describe('ingestion when Kafka is down (dedicated broker)', () => {
  let broker: Awaited<ReturnType<typeof dedicatedBroker>>;
  let stack: IntegrationStack;

  beforeAll(async () => {
    broker = await dedicatedBroker();
    stack = await startIntegrationStack({ extra: { kafkaBrokers: broker.brokers } });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    broker?.destroy();
  }, 60_000);

  it('answers 503 service_unavailable instead of a lost 202; a retry with the same event ids stores each exactly once', async () => {
    const ev = (id?: string) => ({ event_name: 'e', external_customer_id: 'down', timestamp: '2026-06-01T00:00:00Z', ...(id ? { event_id: id } : {}) });
    expect((await stack.api.post('/v1/events', ev('before'))).status).toBe(202);
    await waitFor(async () => (await stack.api.post('/v1/events/query', { external_customer_id: 'down' })).body.total_count === 1);

    broker.stop();
    const single = await stack.api.post('/v1/events', ev('while-down'));
    expect(single.status).toBe(503);
    expect(single.body).toMatchObject({
      success: false,
      error: { internal_error: 'service_unavailable', details: { event_ids: ['while-down'] } },
      hint: expect.stringContaining('retry'),
    });
    const bulk = await stack.api.post('/v1/events/bulk', { events: [ev('while-down-bulk'), ev()] });
    expect(bulk.status).toBe(503);
    expect(bulk.body.error.internal_error).toBe('service_unavailable');
    expect(bulk.body.error.details.event_ids).toHaveLength(2);
    const refused = [...single.body.error.details.event_ids, ...bulk.body.error.details.event_ids];

    // A 503 means "not known to be stored" (docs/api.md): bring Kafka back, then retry the refused
    // events with the ids the 503 named, as a client should. Each is stored exactly once, whether or
    // not the first attempt reached the broker in the end.
    await sleep(15_000);
    broker.start();
    await waitFor(async () => (await stack.api.post('/v1/events', ev('after'))).status === 202, {
      timeoutMs: 60_000,
      intervalMs: 1000,
      what: 'ingestion to accept again',
    });
    expect((await stack.api.post('/v1/events', ev('while-down'))).status).toBe(202);
    const retried = await stack.api.post('/v1/events/bulk', { events: bulk.body.error.details.event_ids.map((id: string) => ev(id)) });
    expect(retried.status).toBe(202);
    expect(retried.body.event_ids).toEqual(bulk.body.error.details.event_ids);
    const expected = ['before', 'after', ...refused];
    const storedIds = async (): Promise<string[]> =>
      (await stack.api.post('/v1/events/query', { external_customer_id: 'down', page_size: 1000 })).body.events.map((e: { id: string }) => e.id);
    await waitFor(async () => {
      const ids = await storedIds();
      return expected.every((id) => ids.includes(id));
    }, {
      timeoutMs: 60_000,
      what: 'every refused event stored after its retry',
    });
    await sleep(2000);
    const ids = await storedIds();
    expect([...ids].sort()).toEqual([...expected].sort());
  }, 180_000);
});
