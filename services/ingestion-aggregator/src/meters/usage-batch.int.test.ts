import type { Server } from 'node:http';
import { KafkaBus } from '@billstream/bus';
import { createDb, type Db } from '@billstream/db';
import type { Service } from '@billstream/runtime';
import { ApiClient, createTestDatabase, kafkaBrokers, testLogger, uniqueTopicPrefix, type TestDatabase, seededRandom } from '@billstream/testing';
import { EventPartitions } from '../events/partitions';
import { EventStore } from '../events/store';
import { SCHEMA } from '../migrations';
import { createIngestionService } from '../service';

const INTERNAL_TOKEN = 'usage-batch-test-token';
const HEADERS = { 'x-internal-token': INTERNAL_TOKEN, 'x-tenant-id': 'tenant-a', 'x-environment-id': 'production' };
const BATCH_PATH = '/internal/v1/usage/batch';


const SEED = Number(process.env.USAGE_BATCH_SEED ?? 20261126);
const CUSTOMERS = ['c0', 'c1', 'c2', 'c3', 'c4'];
/** Customers the events never name (no events at all). */
const SILENT = ['nobody', 'c9'];
const DAY_MS = 86_400_000;
const T0 = Date.parse('2026-07-01T00:00:00Z');

/** `2026-07-01T...` with microseconds, in UTC. */
function micros(ms: number, extra: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}.${String((ms % 1000) * 1000 + extra).padStart(6, '0')}Z`;
}

/**
 * The internal usage batch of the ingestion-aggregator (issue #13, the billing period job), as
 * composed for deployment (createIngestionService on real Postgres and Kafka), over HTTP with the
 * internal headers: each value must be exactly what `POST /v1/meters/{id}/usage` answers.
 * Events are written by the consumer's store (EventStore.storeBatch), random but seeded.
 */
describe('POST /internal/v1/usage/batch (real Postgres and Kafka)', () => {
  let database: TestDatabase;
  let db: Db;
  let bus: KafkaBus;
  let service: Service;
  let server: Server;
  let api: ApiClient;
  const meters: Record<string, string> = {};
  let otherTenantMeter: string;

  const batch = (body: unknown, headers: Record<string, string> = HEADERS) => api.post(BATCH_PATH, body, headers);
  const meter = async (body: Record<string, unknown>, headers = HEADERS) => {
    const res = await api.post('/v1/meters', { name: 'm', event_name: 'api', ...body }, headers);
    expect(res.status).toBe(201);
    return res.body.id as string;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb({ databaseUrl: database.url, schema: SCHEMA });
    bus = new KafkaBus({ brokers: kafkaBrokers(), clientId: 'usage-batch', logger: testLogger('bus'), topicPrefix: uniqueTopicPrefix('ubatch') });
    await bus.start();
    service = createIngestionService({ db, bus, logger: testLogger('ingestion') }, { internalToken: INTERNAL_TOKEN });
    await service.start();
    server = service.app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    api = new ApiClient(`http://127.0.0.1:${(server.address() as { port: number }).port}`);

    // 1,500 random events over 4 days of July 2026 (and a few in June and August, outside most ranges).
    const r = seededRandom(SEED);
    const values: string[] = [];
    const timestamps: string[] = [];
    const amounts: unknown[] = [1, 2.5, '3', '0.125', '-4', 'n/a', true, null, 1000, '7.75', 0, { x: 1 }];
    for (let i = 0; i < 1500; i += 1) {
      const ms = T0 - DAY_MS + r.int(6 * DAY_MS);
      const properties: Record<string, unknown> = {
        region: r.pick(['eu', 'us', 'ap']),
        tier: r.pick(['a', 'b']),
        user: r.pick(['ann', 'bob', 'cid', 'dan', 7, 7.0]),
      };
      const amount = r.pick(amounts);
      if (r.next() < 0.9) properties.n = amount;
      if (r.next() < 0.1) delete properties.region;
      const timestamp = micros(ms, r.int(1000));
      timestamps.push(timestamp);
      values.push(
        JSON.stringify({
          tenant_id: r.next() < 0.05 ? 'tenant-b' : 'tenant-a',
          environment_id: r.next() < 0.03 ? 'sandbox' : 'production',
          event_id: `e${i}`,
          event_name: r.next() < 0.85 ? 'api' : 'other',
          external_customer_id: r.pick(CUSTOMERS),
          timestamp,
          properties,
          source: null,
          received_at: '2026-07-10T00:00:00.000Z',
        }),
      );
    }
    // Two events at the same instant with different values (LATEST breaks the tie by event id).
    for (const [id, n] of [['tie-a', 11], ['tie-b', 22]] as const) {
      const timestamp = '2026-07-02T12:00:00.000000Z';
      timestamps.push(timestamp);
      values.push(JSON.stringify({ tenant_id: 'tenant-a', environment_id: 'production', event_id: id, event_name: 'api', external_customer_id: 'c0', timestamp, properties: { n, region: 'eu', tier: 'a' }, source: null, received_at: '2026-07-10T00:00:00.000Z' }));
    }
    const partitions = new EventPartitions(db, testLogger('partitions'));
    await partitions.load();
    await partitions.ensureFor(timestamps);
    const { stored } = await new EventStore().storeBatch(db, values, values.map((v) => `${JSON.parse(v).tenant_id}:production`));
    expect(stored).toBe(values.length);

    for (const [type, field] of [['COUNT'], ['SUM', 'n'], ['MAX', 'n'], ['UNIQUE_COUNT', 'user'], ['LATEST', 'n']] as const) {
      const aggregation = { type, ...(field ? { field } : {}) };
      meters[type] = await meter({ aggregation });
      meters[`${type}+filters`] = await meter({ aggregation, filters: [{ key: 'region', values: ['eu', 'us'] }] });
    }
    otherTenantMeter = await meter({ aggregation: { type: 'COUNT' } }, { ...HEADERS, 'x-tenant-id': 'tenant-b' });
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await service?.stop();
    await bus?.stop();
    await db?.destroy();
    await database?.drop();
  });

  type Query = { meter_id: string; external_customer_id: string; start_time: string; end_time: string; filter_values?: Record<string, string[]> };

  /** The single endpoint's `value` for each query (the reference). */
  async function singleValues(queries: Query[]): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < queries.length; i += 10) {
      const answers = await Promise.all(
        queries.slice(i, i + 10).map(async ({ meter_id: id, ...body }) => {
          const res = await api.post(`/v1/meters/${id}/usage`, body, HEADERS);
          expect(res.status).toBe(200);
          return res.body.value as string;
        }),
      );
      out.push(...answers);
    }
    return out;
  }

  async function expectSameAsSingle(queries: Query[]): Promise<string[]> {
    const res = await batch({ queries });
    expect(res.status).toBe(200);
    const expected = await singleValues(queries);
    expect(res.body.values).toEqual(queries.map((q, i) => ({ meter_id: q.meter_id, external_customer_id: q.external_customer_id, value: expected[i] })));
    return expected;
  }

  /** A time in the 4 days, written in one of the forms the API accepts (zone offsets, 0 to 9 fraction digits). */
  function randomTime(r: ReturnType<typeof seededRandom>, ms: number): string {
    const iso = new Date(ms).toISOString();
    switch (r.int(4)) {
      case 0:
        return `${iso.slice(0, 19)}Z`;
      case 1:
        return iso;
      case 2: {
        const local = new Date(ms + 2 * 3_600_000).toISOString();
        return `${local.slice(0, 19)}.${String(ms % 1000).padStart(3, '0')}${String(r.int(1_000_000)).padStart(6, '0')}+02:00`;
      }
      default:
        return `${iso.slice(0, 19)}.${String(ms % 1000).padStart(3, '0')}${String(r.int(1000)).padStart(3, '0')}Z`;
    }
  }

  const FILTER_CHOICES: Array<Record<string, string[]> | undefined> = [
    undefined,
    { tier: ['a'] },
    { region: ['eu'], tier: ['b', 'a'] },
    { tier: ['a', 'b'], region: ['eu'] },
    { region: ['ap', 'us', 'ap'] },
    { user: ['ann', '7'] },
    { region: ['nowhere'] },
  ];

  it.each([1, 2, 3])('answers, for random queries of every aggregation (seed %i), exactly what the single endpoint answers, in order', async (round) => {
    const r = seededRandom(SEED + round);
    const meterIds = Object.values(meters);
    const ranges = [
      ['2026-07-01T00:00:00Z', '2026-07-05T00:00:00Z'],
      ['2026-06-01T00:00:00Z', '2026-09-01T00:00:00Z'],
    ];
    const queries: Query[] = [];
    for (let i = 0; i < 400; i += 1) {
      const [start, end] =
        r.next() < 0.5
          ? r.pick(ranges)
          : (() => {
              const a = T0 - DAY_MS + r.int(6 * DAY_MS);
              const b = a + 1 + r.int(3 * DAY_MS);
              return [randomTime(r, a), randomTime(r, b)];
            })();
      const q: Query = { meter_id: r.pick(meterIds), external_customer_id: r.pick([...CUSTOMERS, ...SILENT]), start_time: start, end_time: end };
      const filters = r.pick(FILTER_CHOICES);
      if (filters) q.filter_values = filters;
      queries.push(q);
      // Duplicates: the same query again (FILTER_CHOICES also holds the same filters written in another order).
      if (r.next() < 0.1) queries.push({ ...q });
    }
    const values = await expectSameAsSingle(queries);
    // The data is not trivial: most aggregations and customers have something to count.
    expect(values.filter((v) => v !== '0').length).toBeGreaterThan(queries.length / 3);
  });

  it('gives a customer without events (or with none counted) what the single endpoint gives: 0 for every aggregation', async () => {
    const queries: Query[] = Object.values(meters).flatMap((id) => [
      { meter_id: id, external_customer_id: 'nobody', start_time: '2026-07-01T00:00:00Z', end_time: '2026-07-05T00:00:00Z' },
      { meter_id: id, external_customer_id: 'c1', start_time: '2026-07-01T00:00:00Z', end_time: '2026-07-05T00:00:00Z', filter_values: { region: ['nowhere'] } },
      { meter_id: id, external_customer_id: 'c1', start_time: '2027-01-01T00:00:00Z', end_time: '2027-02-01T00:00:00Z' },
    ]);
    const values = await expectSameAsSingle(queries);
    expect(values).toEqual(queries.map(() => '0'));
  });

  it('counts each bound as the single endpoint does (start inclusive, end exclusive, microseconds) and breaks a LATEST tie by event id', async () => {
    const at = '2026-07-02T12:00:00';
    const queries: Query[] = [
      { meter_id: meters.COUNT, external_customer_id: 'c0', start_time: `${at}Z`, end_time: `${at}.001Z` },
      { meter_id: meters.COUNT, external_customer_id: 'c0', start_time: `${at}.000001Z`, end_time: `${at}.5Z` },
      { meter_id: meters.COUNT, external_customer_id: 'c0', start_time: `${at}.0000009Z`, end_time: `${at}.001+00:00` },
      { meter_id: meters.LATEST, external_customer_id: 'c0', start_time: '2026-07-02T11:00:00Z', end_time: '2026-07-02T12:00:00.000001Z', filter_values: { tier: ['a'] } },
    ];
    const values = await expectSameAsSingle(queries);
    expect(values[0]).not.toBe('0');
  });

  it('reads the meters in one statement and each (meter, filter_values) group in one statement, whatever the customers and ranges', async () => {
    const statements: string[] = [];
    const listen = (q: { sql: string }) => {
      if (/from "meters"|unnest\(/.test(q.sql)) statements.push(q.sql);
    };
    const queries: Query[] = [];
    for (let i = 0; i < 200; i += 1) {
      const customer = `${CUSTOMERS[i % CUSTOMERS.length]}`;
      // Each subscription its own period (anniversary billing): 200 different ranges.
      const start = new Date(T0 - DAY_MS + i * 60_000).toISOString();
      const end = new Date(T0 + 2 * DAY_MS + i * 60_000).toISOString();
      queries.push({ meter_id: meters.SUM, external_customer_id: customer, start_time: start, end_time: end });
      queries.push({ meter_id: meters['COUNT+filters'], external_customer_id: customer, start_time: start, end_time: end, filter_values: { tier: ['a'] } });
      if (i % 2 === 0) queries.push({ meter_id: meters['COUNT+filters'], external_customer_id: customer, start_time: start, end_time: end, filter_values: { tier: ['b'] } });
    }
    queries.push({ ...queries[0] }, { ...queries[1], filter_values: { tier: ['a', 'a'] } });
    db.on('query', listen);
    let res;
    try {
      res = await batch({ queries });
    } finally {
      db.off('query', listen);
    }
    expect(res.status).toBe(200);
    expect(statements.filter((sql) => sql.includes('from "meters"'))).toHaveLength(1);
    // SUM, COUNT+filters with tier a, COUNT+filters with tier b.
    expect(statements.filter((sql) => sql.includes('unnest('))).toHaveLength(3);
    const expected = await singleValues(queries);
    expect(res.body.values.map((v: { value: string }) => v.value)).toEqual(expected);
  });

  it('refuses bad bodies with 400 in the envelope, naming the field', async () => {
    const q = { meter_id: meters.COUNT, external_customer_id: 'c0', start_time: '2026-07-01T00:00:00Z', end_time: '2026-07-02T00:00:00Z' };
    const cases: Array<[unknown, string]> = [
      [{}, 'queries'],
      [{ queries: [] }, 'queries'],
      [{ queries: Array.from({ length: 1001 }, () => q) }, 'queries'],
      [{ queries: [q, { ...q, end_time: q.start_time }] }, 'queries.1.end_time'],
      [{ queries: [{ ...q, start_time: '2026-07-02T00:00:00Z', end_time: '2026-07-01T00:00:00Z' }] }, 'queries.0.end_time'],
      [{ queries: [{ ...q, start_time: '2026-07-01T00:00:00' }] }, 'queries.0.start_time'],
      [{ queries: [{ ...q, end_time: '2026-02-30T00:00:00Z' }] }, 'queries.0.end_time'],
      [{ queries: [{ ...q, start_time: 'yesterday' }] }, 'queries.0.start_time'],
      [{ queries: [{ ...q, meter_id: '' }] }, 'queries.0.meter_id'],
      [{ queries: [{ ...q, external_customer_id: undefined }] }, 'queries.0.external_customer_id'],
      [{ queries: [{ ...q, window_size: 'DAY' }] }, 'queries.0.window_size'],
      [{ queries: [q], extra: true }, 'extra'],
      [{ queries: [{ ...q, filter_values: { region: [] } }] }, 'queries.0.filter_values.region'],
      [{ queries: [{ ...q, filter_values: { region: 'eu' } }] }, 'queries.0.filter_values.region'],
      [{ queries: 'all' }, 'queries'],
    ];
    for (const [body, field] of cases) {
      const res = await batch(body);
      expect({ field, status: res.status, internal_error: res.body.error?.internal_error }).toEqual({ field, status: 400, internal_error: 'validation_error' });
      expect(res.body.success).toBe(false);
      expect(res.body.error.details.field).toBe(field);
    }
    const notJson = await api.call('POST', BATCH_PATH, '{"queries": [', HEADERS);
    expect([notJson.status, notJson.body.success]).toEqual([400, false]);
    // 1,000 queries is the limit, not over it.
    expect((await batch({ queries: Array.from({ length: 1000 }, () => q) })).status).toBe(200);
  });

  it('fails the whole call with 404 naming the meter when one meter is unknown in the scope (another tenant\'s included)', async () => {
    const q = { external_customer_id: 'c0', start_time: '2026-07-01T00:00:00Z', end_time: '2026-07-02T00:00:00Z' };
    for (const unknown of ['meter_01J00000000000000000000000', otherTenantMeter]) {
      const res = await batch({ queries: [{ meter_id: meters.SUM, ...q }, { meter_id: unknown, ...q }, { meter_id: meters.COUNT, ...q }] });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: { message: 'Meter not found', internal_error: 'not_found', details: { meter_id: unknown } } });
    }
    const sandbox = await batch({ queries: [{ meter_id: meters.SUM, ...q }] }, { ...HEADERS, 'x-environment-id': 'sandbox' });
    expect([sandbox.status, sandbox.body.error.details]).toEqual([404, { meter_id: meters.SUM }]);
    // The other tenant reads its own meter (and only its own events: none of c0's are counted twice).
    const own = await batch({ queries: [{ meter_id: otherTenantMeter, ...q }] }, { ...HEADERS, 'x-tenant-id': 'tenant-b' });
    expect(own.status).toBe(200);
    const single = await api.post(`/v1/meters/${otherTenantMeter}/usage`, q, { ...HEADERS, 'x-tenant-id': 'tenant-b' });
    expect(own.body.values).toEqual([{ meter_id: otherTenantMeter, external_customer_id: 'c0', value: single.body.value }]);
  });

  it('refuses a call without the internal token or without a tenant, like every internal route', async () => {
    const body = { queries: [{ meter_id: meters.COUNT, external_customer_id: 'c0', start_time: '2026-07-01T00:00:00Z', end_time: '2026-07-02T00:00:00Z' }] };
    const { 'x-internal-token': _token, ...noToken } = HEADERS;
    const { 'x-tenant-id': _tenant, ...noTenant } = HEADERS;
    for (const headers of [noToken, { ...HEADERS, 'x-internal-token': 'wrong-token-wrong-token' }, noTenant]) {
      const res = await batch(body, headers);
      expect([res.status, res.body.success, res.body.error.message]).toEqual([401, false, 'Internal calls need the internal token and a tenant']);
      // The single usage route answers the same.
      const single = await api.post(`/v1/meters/${meters.COUNT}/usage`, body.queries[0], headers);
      expect(single.body).toEqual(res.body);
    }
  });
});
