import type { Server } from 'node:http';
import { Kafka, logLevel } from 'kafkajs';
import { KafkaBus, TOPICS } from '@billstream/bus';
import { createDb, type Db } from '@billstream/db';
import type { Service } from '@billstream/runtime';
import {
  ApiClient,
  createTestDatabase,
  kafkaBrokers,
  testLogger,
  uniqueTopicPrefix,
  waitFor,
  type TestDatabase,
} from '@billstream/testing';
import { SCHEMA } from '../migrations';
import { createIngestionService } from '../service';
import { keyOf, poisonRecords, usageMessage } from '../testing/poison';
import { USAGE_EVENTS_GROUP } from './consumer';

const INTERNAL_TOKEN = 'dead-letter-test-token';
const CUSTOMER = 'poisoned';

/**
 * Records the gateway refuses, published straight to the usage-events topic ("let through on
 * purpose"), in one send with good events of the same key (same partition) before, between and
 * after them; then a consumer restart on the same group with every offset rewound (a crash
 * before each offset commit). Real Kafka, real Postgres, the service as composed for deployment.
 */
describe('usage-events dead letters: no record blocks its partition (real Kafka and Postgres)', () => {
  let database: TestDatabase;
  let db: Db;
  let bus: KafkaBus;
  let service: Service | undefined;
  let server: Server | undefined;
  let api: ApiClient;
  const topicPrefix = uniqueTopicPrefix('dlq');
  const bad = poisonRecords(CUSTOMER);
  const good = (id: string) => ({ key: keyOf(CUSTOMER), value: JSON.stringify(usageMessage(CUSTOMER, id, { properties: { id } })) });

  async function startService(): Promise<void> {
    service = createIngestionService({ db, bus, logger: testLogger('ingestion') }, { internalToken: INTERNAL_TOKEN });
    await service.start();
    const s = service.app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => s.once('listening', () => resolve()));
    server = s;
    const { port } = s.address() as { port: number };
    api = new ApiClient(`http://127.0.0.1:${port}`);
  }

  async function stopService(): Promise<void> {
    await new Promise((resolve) => server?.close(resolve));
    await service?.stop();
    server = undefined;
    service = undefined;
  }

  const headers = { 'x-internal-token': INTERNAL_TOKEN, 'x-tenant-id': 'tenant-a', 'x-environment-id': 'production' };
  const queryIds = async () => {
    const res = await api.post('/v1/events/query', { external_customer_id: CUSTOMER, page_size: 1000 }, headers);
    expect(res.status).toBe(200);
    return { ids: (res.body.events as Array<{ id: string }>).map((e) => e.id).sort(), total: res.body.total_count as number };
  };
  const monitoring = async () => {
    const res = await api.get('/v1/events/monitoring', headers);
    expect(res.status).toBe(200);
    return res.body as { total_events: number; dead_lettered_events: number; consumer_lag: number };
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb({ databaseUrl: database.url, schema: SCHEMA });
    bus = new KafkaBus({ brokers: kafkaBrokers(), clientId: 'dead-letters', logger: testLogger('bus'), topicPrefix });
    await bus.start();
    await startService();
  });
  afterAll(async () => {
    await stopService();
    await bus?.stop();
    await db?.destroy();
    await database?.drop();
  });

  it('stores every good event, before and after the bad ones; dead-letters and counts each bad one; a restart duplicates and loses nothing', async () => {
    const before = ['g-00', 'g-01', 'g-02'].map(good);
    const between = bad.map((_, i) => good(`g-b${String(i).padStart(2, '0')}`));
    const mixed = [...before, ...bad.flatMap((b, i) => [{ key: keyOf(CUSTOMER), value: b.value }, between[i]]), good('g-01')];
    await bus.publish(TOPICS.usageEvents, mixed);
    const after = ['g-a0', 'g-a1', 'g-a2'].map(good);
    await bus.publish(TOPICS.usageEvents, after);

    const expected = [...before, ...between, ...after].map((m) => JSON.parse(m.value).event_id as string).sort();
    await waitFor(async () => (await queryIds()).total === expected.length, { timeoutMs: 60_000, what: 'every good event stored' });
    expect(await queryIds()).toEqual({ ids: expected, total: expected.length });
    const lettersOf = async () =>
      (await db('event_dead_letters').orderBy(['kafka_partition', 'kafka_offset'])).map((l) => ({
        code: l.error_code as string,
        eventId: l.event_id as string | null,
        tenant: l.tenant_id as string,
        value: (l.kafka_value as Buffer).toString('utf8'),
        position: `${l.topic}/${l.kafka_partition}/${l.kafka_offset}`,
      }));
    const letters = await lettersOf();
    expect(letters.map(({ code, eventId, tenant, value }) => ({ code, eventId, tenant, value }))).toEqual(
      bad.map((b) => ({ code: b.code, eventId: b.eventId, tenant: 'tenant-a', value: b.value })),
    );
    expect(new Set(letters.map((l) => l.position.split('/')[1])).size).toBe(1);
    const m = await waitFor(
      async () => {
        const r = await monitoring();
        return r.consumer_lag === 0 ? r : undefined;
      },
      { timeoutMs: 30_000, what: 'offsets committed' },
    );
    expect(m).toMatchObject({ total_events: expected.length, dead_lettered_events: bad.length });

    // Restart: a new consumer on the same group, every offset rewound to the start of the topic.
    await stopService();
    const admin = new Kafka({ brokers: kafkaBrokers(), logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      await waitFor(
        async () => {
          await admin.resetOffsets({ groupId: `${topicPrefix}${USAGE_EVENTS_GROUP}`, topic: `${topicPrefix}${TOPICS.usageEvents}`, earliest: true });
          return true;
        },
        { timeoutMs: 60_000, what: 'the group to be empty so its offsets can be rewound' },
      );
    } finally {
      await admin.disconnect();
    }
    const later = [good('g-late'), { key: keyOf(CUSTOMER), value: JSON.stringify(usageMessage(CUSTOMER, 'bad-late', { properties: { 'k\u0000': 1 } })) }];
    await bus.publish(TOPICS.usageEvents, later);
    expect(await bus.lag(USAGE_EVENTS_GROUP, TOPICS.usageEvents)).toBe(mixed.length + after.length + later.length);
    await startService();

    await waitFor(async () => (await queryIds()).total === expected.length + 1, { timeoutMs: 60_000, what: 'the event sent after the restart' });
    await waitFor(async () => (await monitoring()).consumer_lag === 0, { timeoutMs: 60_000, what: 'every record consumed again' });
    expect(await queryIds()).toEqual({ ids: [...expected, 'g-late'].sort(), total: expected.length + 1 });
    expect(await lettersOf()).toEqual([...letters, expect.objectContaining({ code: '22P05', eventId: 'bad-late' })]);
    expect(await monitoring()).toMatchObject({ total_events: expected.length + 1, dead_lettered_events: bad.length + 1 });
    const stored = await db('events').where({ external_customer_id: CUSTOMER }).count({ n: '*' });
    expect(Number(stored[0].n)).toBe(expected.length + 1);
  });
});
