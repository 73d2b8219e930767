import { randomUUID } from 'node:crypto';
import { KafkaBus, TOPICS } from '@billstream/bus';
import { createDb, type Db } from '@billstream/db';
import { kafkaBrokers, testLogger, waitFor, type ApiClient } from '@billstream/testing';
import { startIntegrationStack, type IntegrationStack } from '../../support/stack';

const T0 = '2026-03-10T12:00:00Z';

function event(overrides: Record<string, unknown> = {}) {
  return {
    event_name: 'api_call',
    external_customer_id: 'ext-1',
    timestamp: T0,
    properties: { tokens: 3 },
    ...overrides,
  };
}

async function query(api: ApiClient, body: Record<string, unknown>) {
  const res = await api.post('/v1/events/query', body);
  expect(res.status).toBe(200);
  return res.body as { events: Array<Record<string, unknown>>; has_more: boolean; total_count: number };
}

async function waitForCount(api: ApiClient, body: Record<string, unknown>, count: number) {
  return waitFor(
    async () => {
      const r = await query(api, body);
      // The page and total_count are read side by side; wait until both show the events.
      const pageSize = Number(body.page_size ?? 50);
      return r.total_count === count && r.events.length === Math.min(count, pageSize) ? r : undefined;
    },
    { timeoutMs: 15_000, what: `${count} events for ${JSON.stringify(body)}` },
  );
}

describe('usage event ingestion, exactly-once storage and query (real Kafka and Postgres)', () => {
  let stack: IntegrationStack;
  let db: Db;

  beforeAll(async () => {
    stack = await startIntegrationStack();
    db = createDb({ databaseUrl: stack.database.url, schema: 'ingestion' });
  });
  afterAll(async () => {
    await db?.destroy();
    await stack?.stop();
  });

  it('accepts one event with 202 after the ack and shows it in the query within 5 s', async () => {
    const res = await stack.api.post(
      '/v1/events',
      event({ external_customer_id: 'single', event_id: 'evt-single-1', timestamp: '2026-03-10T14:00:00.123456789+02:00', source: 'sdk' }),
    );
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ message: expect.any(String), event_id: 'evt-single-1' });
    const started = Date.now();
    const found = await waitForCount(stack.api, { external_customer_id: 'single' }, 1);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(found.events[0]).toEqual({
      id: 'evt-single-1',
      event_name: 'api_call',
      external_customer_id: 'single',
      customer_id: null,
      timestamp: '2026-03-10T12:00:00.123456Z',
      properties: { tokens: 3 },
      source: 'sdk',
    });
  });

  it('generates a UUID event_id when absent, and two such events are never merged', async () => {
    const a = await stack.api.post('/v1/events', event({ external_customer_id: 'no-id' }));
    const b = await stack.api.post('/v1/events', event({ external_customer_id: 'no-id' }));
    expect(a.status).toBe(202);
    expect(a.body.event_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(b.body.event_id).not.toBe(a.body.event_id);
    const found = await waitForCount(stack.api, { external_customer_id: 'no-id' }, 2);
    expect(found.events.map((e) => e.id).sort()).toEqual([a.body.event_id, b.body.event_id].sort());
  });

  it('refuses bad events with 400 naming the field, with the ingestion hint', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ external_customer_id: 'x', timestamp: T0 }, 'event_name'],
      [{ event_name: 'e', timestamp: T0 }, 'external_customer_id'],
      [{ event_name: 'e', external_customer_id: 'x' }, 'timestamp'],
      [event({ timestamp: '2026-03-10T12:00:00' }), 'timestamp'],
      [event({ timestamp: '2026-03-10 12:00:00Z' }), 'timestamp'],
      [event({ timestamp: '2026-02-30T12:00:00Z' }), 'timestamp'],
      [event({ timestamp: '2026-03-10T12:00:00.1234567890Z' }), 'timestamp'],
      [event({ properties: [1, 2] }), 'properties'],
      [event({ properties: 'tokens=3' }), 'properties'],
      [event({ properties: null }), 'properties'],
      [event({ event_name: '' }), 'event_name'],
      [event({ colour: 'red' }), 'colour'],
    ];
    for (const [body, field] of cases) {
      const res = await stack.api.post('/v1/events', body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body).toMatchObject({
        success: false,
        error: { internal_error: 'validation_error', details: { field } },
        hint: expect.any(String),
      });
    }
  });

  it('accepts a bulk of events with their ids in order', async () => {
    const events = Array.from({ length: 5 }, (_, i) => event({ external_customer_id: 'bulk', event_id: `bulk-${i}` }));
    const res = await stack.api.post('/v1/events/bulk', { events: [...events, event({ external_customer_id: 'bulk' })] });
    expect(res.status).toBe(202);
    expect(res.body.message).toEqual(expect.any(String));
    expect(res.body.event_ids.slice(0, 5)).toEqual(['bulk-0', 'bulk-1', 'bulk-2', 'bulk-3', 'bulk-4']);
    expect(res.body.event_ids).toHaveLength(6);
    await waitForCount(stack.api, { external_customer_id: 'bulk' }, 6);
  });

  it('refuses a whole bulk with one bad event (index and field named) and publishes none of it', async () => {
    const events = Array.from({ length: 5 }, (_, i) => event({ external_customer_id: 'bad-bulk', event_id: `bad-bulk-${i}` }));
    events[3] = { ...events[3], timestamp: '2026-03-10T12:00:00' };
    const res = await stack.api.post('/v1/events/bulk', { events });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: { internal_error: 'validation_error', details: { index: 3, field: 'events.3.timestamp' } },
      hint: expect.any(String),
    });
    const tooMany = await stack.api.post('/v1/events/bulk', {
      events: Array.from({ length: 1001 }, () => event({ external_customer_id: 'bad-bulk' })),
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.details.field).toBe('events');
    const empty = await stack.api.post('/v1/events/bulk', { events: [] });
    expect(empty.status).toBe(400);
    const notArray = await stack.api.post('/v1/events/bulk', { events: { a: 1 } });
    expect(notArray.status).toBe(400);
    expect(notArray.body.error.details.field).toBe('events');
    const notObject = await stack.api.post('/v1/events/bulk', { events: [event({ external_customer_id: 'bad-bulk' }), 7] });
    expect(notObject.body.error.details).toMatchObject({ index: 1, field: 'events.1' });

    // A marker sent after the refused requests is stored; nothing of them is.
    await stack.api.post('/v1/events', event({ external_customer_id: 'bad-bulk', event_id: 'marker' }));
    const found = await waitForCount(stack.api, { external_customer_id: 'bad-bulk' }, 1);
    expect(found.events[0].id).toBe('marker');
  });

  it('stores each event_id once per tenant+environment across single, bulk and duplicate-in-bulk', async () => {
    const e = (id: string) => event({ external_customer_id: 'dedup', event_id: id });
    expect((await stack.api.post('/v1/events', e('d-1'))).status).toBe(202);
    expect((await stack.api.post('/v1/events', e('d-1'))).status).toBe(202);
    const bulk = await stack.api.post('/v1/events/bulk', { events: [e('d-1'), e('d-2'), e('d-2'), e('d-3')] });
    expect(bulk.status).toBe(202);
    expect(bulk.body.event_ids).toEqual(['d-1', 'd-2', 'd-2', 'd-3']);
    // The same ids in another environment and another tenant are other events.
    const otherEnv = stack.api.withKey(await stack.keyFor('tenant-a', 'sandbox'));
    const otherTenant = stack.api.withKey(await stack.keyFor('tenant-b', 'production'));
    expect((await otherEnv.post('/v1/events', e('d-1'))).status).toBe(202);
    expect((await otherTenant.post('/v1/events', e('d-1'))).status).toBe(202);
    await stack.api.post('/v1/events', e('d-last'));
    const found = await waitForCount(stack.api, { external_customer_id: 'dedup' }, 4);
    expect(found.events.map((x) => x.id).sort()).toEqual(['d-1', 'd-2', 'd-3', 'd-last']);
    await waitForCount(otherEnv, { external_customer_id: 'dedup' }, 1);
    await waitForCount(otherTenant, { external_customer_id: 'dedup' }, 1);
    const rows = await db('events').where({ tenant_id: 'tenant-a', environment_id: 'production', external_customer_id: 'dedup' }).count({ n: '*' });
    expect(Number(rows[0].n)).toBe(4);
  });

  it('stores a batch delivered twice once (redelivery after a crash before the offset commit)', async () => {
    const bus = new KafkaBus({ brokers: kafkaBrokers(), clientId: 'redeliver', logger: testLogger('redeliver'), topicPrefix: stack.topicPrefix });
    await bus.start();
    try {
      const messages = Array.from({ length: 50 }, (_, i) => ({
        key: 'tenant-a:production:redelivered',
        value: JSON.stringify({
          tenant_id: 'tenant-a',
          environment_id: 'production',
          event_id: `re-${i}`,
          event_name: 'api_call',
          external_customer_id: 'redelivered',
          timestamp: '2026-03-10T12:00:00.000000Z',
          properties: { i },
          source: null,
          received_at: new Date().toISOString(),
        }),
      }));
      await bus.publish(TOPICS.usageEvents, messages);
      await bus.publish(TOPICS.usageEvents, messages);
      await bus.publish(TOPICS.usageEvents, messages.slice(10, 20));
    } finally {
      await bus.stop();
    }
    await stack.api.post('/v1/events', event({ external_customer_id: 'redelivered', event_id: 're-marker' }));
    await waitForCount(stack.api, { external_customer_id: 'redelivered' }, 51);
    const rows = await db('events').where({ external_customer_id: 'redelivered' }).count({ n: '*' });
    expect(Number(rows[0].n)).toBe(51);
  });

  describe('query', () => {
    const customer = `q-${randomUUID()}`;
    beforeAll(async () => {
      const events = Array.from({ length: 30 }, (_, i) =>
        event({
          external_customer_id: customer,
          event_id: `q-${String(i).padStart(2, '0')}`,
          event_name: i % 2 === 0 ? 'even' : 'odd',
          timestamp: new Date(Date.UTC(2026, 2, 1, i)).toISOString(),
        }),
      );
      expect((await stack.api.post('/v1/events/bulk', { events })).status).toBe(202);
      await waitForCount(stack.api, { external_customer_id: customer }, 30);
    });

    it('pages newest first with offset, has_more and total_count', async () => {
      const p1 = await query(stack.api, { external_customer_id: customer, page_size: 12 });
      expect(p1.total_count).toBe(30);
      expect(p1.has_more).toBe(true);
      expect(p1.events.map((e) => e.id)).toEqual(Array.from({ length: 12 }, (_, i) => `q-${29 - i}`));
      const p3 = await query(stack.api, { external_customer_id: customer, page_size: 12, offset: 24 });
      expect(p3.events.map((e) => e.id)).toEqual(['q-05', 'q-04', 'q-03', 'q-02', 'q-01', 'q-00']);
      expect(p3.has_more).toBe(false);
      const beyond = await query(stack.api, { external_customer_id: customer, offset: 100 });
      expect(beyond).toEqual({ events: [], has_more: false, total_count: 30 });
    });

    it('filters by event name and by time with either form (start inclusive, end exclusive)', async () => {
      const even = await query(stack.api, { external_customer_id: customer, event_name: 'even' });
      expect(even.total_count).toBe(15);
      const topLevel = await query(stack.api, {
        external_customer_id: customer,
        start_time: '2026-03-01T05:00:00Z',
        end_time: '2026-03-01T10:00:00+00:00',
      });
      expect(topLevel.events.map((e) => e.id)).toEqual(['q-09', 'q-08', 'q-07', 'q-06', 'q-05']);
      const filters = await query(stack.api, {
        external_customer_id: customer,
        filters: { timestamp_gte: '2026-03-01T07:00:00+02:00', timestamp_lt: '2026-03-01T08:00:00Z' },
      });
      expect(filters.events.map((e) => e.id)).toEqual(['q-07', 'q-06', 'q-05']);
      const both = await query(stack.api, {
        external_customer_id: customer,
        event_name: 'odd',
        start_time: '2026-03-01T05:00:00Z',
        filters: { timestamp_lt: '2026-03-01T10:00:00Z' },
      });
      expect(both.events.map((e) => e.id)).toEqual(['q-09', 'q-07', 'q-05']);
    });

    it('refuses bad query input with 400 naming the field', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ page_size: 0 }, 'page_size'],
        [{ page_size: 1001 }, 'page_size'],
        [{ page_size: 1.5 }, 'page_size'],
        [{ offset: -1 }, 'offset'],
        [{ start_time: '2026-03-01T05:00:00' }, 'start_time'],
        [{ filters: { timestamp_gte: 'yesterday' } }, 'filters.timestamp_gte'],
        [{ filters: { other: 1 } }, 'filters.other'],
        [{ customer: 'x' }, 'customer'],
      ];
      for (const [body, field] of cases) {
        const res = await stack.api.post('/v1/events/query', body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.body.error.details.field).toBe(field);
      }
    });

    it('shows nothing of another tenant or environment', async () => {
      const other = stack.api.withKey(await stack.keyFor('tenant-b', 'production'));
      expect((await query(other, { external_customer_id: customer })).total_count).toBe(0);
      const readOnly = stack.api.withKey(await stack.keyFor('tenant-a', 'production', ['events:read']));
      expect((await query(readOnly, { external_customer_id: customer })).total_count).toBe(30);
      expect((await readOnly.post('/v1/events', event())).status).toBe(403);
      const writeOnly = stack.api.withKey(await stack.keyFor('tenant-a', 'production', ['events:write']));
      expect((await writeOnly.post('/v1/events/query', {})).status).toBe(403);
    });
  });

  it('reports total events, last event time and consumer lag for the caller scope', async () => {
    const key = await stack.keyFor('tenant-mon', 'production');
    const api = stack.api.withKey(key);
    const before = await api.get('/v1/events/monitoring');
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ total_events: 0, last_event_at: null, consumer_lag: expect.any(Number), dead_lettered_events: 0 });
    const sentAt = Date.now();
    await api.post('/v1/events/bulk', { events: [event({ event_id: 'm-1' }), event({ event_id: 'm-2' }), event({ event_id: 'm-1' })] });
    const after = await waitFor(
      async () => {
        const r = await api.get('/v1/events/monitoring');
        return r.body.total_events === 2 ? r : undefined;
      },
      { what: 'monitoring to count 2 events' },
    );
    expect(Date.parse(after.body.last_event_at)).toBeGreaterThanOrEqual(sentAt - 1000);
    await waitFor(async () => (await api.get('/v1/events/monitoring')).body.consumer_lag === 0, { what: 'lag 0' });
  });
});
