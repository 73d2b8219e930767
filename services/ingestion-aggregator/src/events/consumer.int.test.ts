import { Client } from 'pg';
import type { BatchHandler } from '@billstream/bus';
import { createDb, type Db } from '@billstream/db';
import { createTestDatabase, migratedDb, testLogger, type TestDatabase } from '@billstream/testing';
import { migrations, SCHEMA } from '../migrations';
import { consumed, poisonRecords, usageMessage } from '../testing/poison';
import { usageEventsHandler } from './consumer';
import { DeadLetterStore } from './dead-letter-store';
import { EventPartitions } from './partitions';
import { EventStore } from './store';

const scope = { tenantId: 'tenant-a', environmentId: 'production' };
const noop = { heartbeat: async () => {} };

describe('usage-events handler: one batch mixing good and unstorable records (real Postgres)', () => {
  let database: TestDatabase;
  let db: Db;
  const events = new EventStore();
  const deadLetters = new DeadLetterStore();

  async function handlerOn(conn: Db): Promise<BatchHandler> {
    const partitions = new EventPartitions(conn, testLogger('p'));
    await partitions.load();
    return usageEventsHandler({ db: conn, events, deadLetters, partitions, logger: testLogger('h'), parallelism: 2 });
  }

  const storedIds = async (customer: string) =>
    (await db('events').where({ external_customer_id: customer }).orderBy('event_id').pluck('event_id')) as string[];

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await migratedDb(database.url, SCHEMA, migrations);
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('stores every good record, dead-letters each bad one with its error, and a redelivery changes nothing', async () => {
    const handle = await handlerOn(db);
    const bad = poisonRecords('mixed');
    const good = (i: number) => JSON.stringify(usageMessage('mixed', `good-${String(i).padStart(2, '0')}`, { properties: { i } }));
    // Good records around and between the bad ones, one good id twice (dedup still holds).
    const values = [good(0), good(1), ...bad.flatMap((b, i) => [b.value, good(2 + i)]), good(1), good(40)];
    const messages = consumed('mixed', values);
    await handle(messages, noop);

    const goodIds = [0, 1, ...bad.map((_, i) => 2 + i), 40].map((i) => `good-${String(i).padStart(2, '0')}`).sort();
    expect(await storedIds('mixed')).toEqual(goodIds);
    const letters = await db('event_dead_letters').orderBy('kafka_offset');
    expect(
      letters.map((l) => ({ offset: Number(l.kafka_offset), code: l.error_code, eventId: l.event_id, tenant: l.tenant_id, env: l.environment_id })),
    ).toEqual(bad.map((b, i) => ({ offset: 2 + 2 * i, code: b.code, eventId: b.eventId, tenant: 'tenant-a', env: 'production' })));
    for (const [i, l] of letters.entries()) {
      expect(Buffer.compare(l.kafka_value, Buffer.from(bad[i].value, 'utf8'))).toBe(0);
      expect(l.kafka_key.toString()).toBe('tenant-a:production:mixed');
      expect(l.topic).toBe('usage-events');
      expect(l.kafka_partition).toBe(0);
      expect(l.error_message).toEqual(expect.any(String));
      expect(l.error_message.length).toBeGreaterThan(0);
      expect(l.created_at).toBeInstanceOf(Date);
    }
    expect(letters.find((l) => l.event_id === 'bad-lone').error_message).toMatch(/surrogate/i);
    expect(letters.find((l) => l.event_id === 'bad-deep').error_message).toBe('nested deeper than 1000 levels of objects and arrays');
    expect(letters.find((l) => l.error_code === 'invalid_json').error_message).toMatch(/JSON/);
    expect(letters.find((l) => l.event_id === 'bad-schema').error_message).toMatch(/event_name/);
    expect(letters.find((l) => l.event_id === 'bad-month').error_message).toMatch(/^timestamp: /);
    expect(await deadLetters.count(db, scope)).toBe(bad.length);
    expect(await events.stats(db, scope)).toMatchObject({ totalEvents: goodIds.length });

    // The same batch again (a crash before the offset commit): nothing new, nothing lost.
    await handle(messages, noop);
    expect(await storedIds('mixed')).toEqual(goodIds);
    expect(await db('event_dead_letters').count({ n: '*' })).toEqual([{ n: bad.length }]);
    expect(await events.stats(db, scope)).toMatchObject({ totalEvents: goodIds.length });

    // The same bad events again at other offsets (a client retry): one dead letter per event id.
    await handle(consumed('mixed', bad.filter((b) => b.eventId !== null).map((b) => b.value), 1000), noop);
    expect(await deadLetters.count(db, scope)).toBe(bad.length);
  });

  it('counts dead letters per tenant and environment', async () => {
    const handle = await handlerOn(db);
    const otherEnv = JSON.stringify({ ...usageMessage('scoped', 'scoped-1'), environment_id: 'sandbox', properties: { s: '\ud800' } });
    await handle([{ ...consumed('scoped', [otherEnv], 5000)[0], key: 'tenant-a:sandbox:scoped' }], noop);
    expect(await deadLetters.count(db, { tenantId: 'tenant-a', environmentId: 'sandbox' })).toBe(1);
    expect(await deadLetters.count(db, { tenantId: 'tenant-b', environmentId: 'production' })).toBe(0);
  });

  it('retries the whole batch on a transient error: nothing dead-lettered, all stored on the next delivery', async () => {
    const url = new URL(database.url);
    url.searchParams.set('options', '-c lock_timeout=300');
    const impatient = createDb({ databaseUrl: url.toString(), schema: SCHEMA });
    const locker = new Client({ connectionString: database.url });
    await locker.connect();
    try {
      const handle = await handlerOn(impatient);
      const values = ['t-1', 't-bad', 't-2'].map((id) =>
        JSON.stringify(usageMessage('transient', id, id === 't-bad' ? { properties: { s: 'x\ud800' } } : {})),
      );
      const messages = consumed('transient', values, 9000);
      const lettersBefore = await db('event_dead_letters').count({ n: '*' });

      await locker.query('BEGIN');
      await locker.query('LOCK TABLE ingestion.event_keys IN ACCESS EXCLUSIVE MODE');
      await expect(handle(messages, noop)).rejects.toMatchObject({ code: '55P03' });
      await locker.query('ROLLBACK');
      expect(await storedIds('transient')).toEqual([]);
      expect(await db('event_dead_letters').count({ n: '*' })).toEqual(lettersBefore);

      await handle(messages, noop);
      expect(await storedIds('transient')).toEqual(['t-1', 't-2']);
      expect(await db('event_dead_letters').where({ kafka_offset: 9001 }).pluck('event_id')).toEqual(['t-bad']);
    } finally {
      await locker.end();
      await impatient.destroy();
    }
  });
});
