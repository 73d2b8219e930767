import { createTestDatabase, migratedDb, testLogger, type TestDatabase } from '@billstream/testing';
import type { Db } from '@billstream/db';
import { migrations, SCHEMA } from '../migrations';
import { TOO_DEEP } from '../testing/poison';
import { storeIsolating } from './isolate';
import { EventPartitions } from './partitions';
import { recordErrorOf } from './record-errors';
import { EventStore } from './store';

describe('EventStore.storeBatch (real Postgres)', () => {
  let database: TestDatabase;
  let db: Db;
  let store: EventStore;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await migratedDb(database.url, SCHEMA, migrations);
    const partitions = new EventPartitions(db, testLogger('p'));
    await partitions.load();
    await partitions.ensureFor(['2026-07-01T00:00:00.000000Z']);
    store = new EventStore();
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  const value = (tenant: string, id: string, n: number) =>
    JSON.stringify({
      tenant_id: tenant,
      environment_id: 'production',
      event_id: id,
      event_name: 'e',
      external_customer_id: 'c',
      timestamp: '2026-07-01T00:00:00.000000Z',
      properties: { n },
      source: null,
      received_at: '2026-07-01T00:00:01.000Z',
    });

  it('keeps the first copy of a key within a batch, and a redelivered batch stores nothing', async () => {
    const batch = [value('t1', 'a', 1), value('t1', 'b', 2), value('t1', 'a', 3)];
    expect(await store.storeBatch(db, batch, batch.map(() => 't1:production'))).toEqual({ received: 3, stored: 2 });
    expect(await store.storeBatch(db, batch, batch.map(() => 't1:production'))).toEqual({ received: 3, stored: 0 });
    const rows = await db('events').where({ tenant_id: 't1' }).orderBy('event_id');
    expect(rows.map((r) => [r.event_id, r.properties.n])).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    expect(await store.stats(db, { tenantId: 't1', environmentId: 'production' })).toMatchObject({ totalEvents: 2 });
  });

  it('stores overlapping concurrent batches of several scopes exactly once, without deadlock', async () => {
    const keys = Array.from({ length: 400 }, (_, i) => [`s${i % 3}`, `k${i}`] as const);
    const batches = Array.from({ length: 6 }, (_, b) => {
      const order = b % 2 === 0 ? keys : [...keys].reverse();
      const values = order.map(([tenant, id]) => value(tenant, id, b));
      return store.storeBatch(db, values, order.map(([tenant]) => `${tenant}:production`));
    });
    const results = await Promise.all(batches);
    expect(results.reduce((sum, r) => sum + r.stored, 0)).toBe(400);
    const count = await db('events').whereIn('tenant_id', ['s0', 's1', 's2']).count({ n: '*' });
    expect(Number(count[0].n)).toBe(400);
    const totals = await Promise.all(['s0', 's1', 's2'].map((t) => store.stats(db, { tenantId: t, environmentId: 'production' })));
    expect(totals.reduce((sum, s) => sum + s.totalEvents, 0)).toBe(400);
  });

  it('refuses each unstorable value with a record error, and a batch holding them is stored around them', async () => {
    const good = (id: string) => value('t-bad', id, 1);
    const withProperties = (id: string, properties: string) => good(id).replace('{"n":1}', properties);
    const deep = `{"d":${'['.repeat(TOO_DEEP)}${']'.repeat(TOO_DEEP)}}`;
    const bad: Array<[string, string]> = [
      [withProperties('nul', '{"s":"a\\u0000"}'), '22P05'],
      [withProperties('nul-key', '{"a\\u0000":1}'), '22P05'],
      [withProperties('lone', '{"s":"\\ud800"}'), '22P02'],
      [withProperties('reversed', '{"s":"\\udc00\\ud800"}'), '22P02'],
      [withProperties('deep', deep), '54001'],
      [withProperties('huge-number', '{"n":1e999999}'), '22003'],
      [good('bad-date').replace('2026-07-01T00:00:00.000000Z', '2026-07-32T00:00:00.000000Z'), '22008'],
    ];
    for (const [v, code] of bad) {
      const err = await store.storeBatch(db, [v], ['t-bad:production']).catch((e: unknown) => e);
      expect(recordErrorOf(err)).toEqual({ code, message: expect.any(String) });
    }
    const batch = [good('g1'), ...bad.flatMap(([v], i) => [v, good(`g${i + 2}`)])];
    const out = await storeIsolating(batch, (items) => store.storeBatch(db, items, items.map(() => 't-bad:production')), recordErrorOf);
    expect(out.failed.map((f) => f.error.code)).toEqual(bad.map(([, code]) => code));
    const stored = await db('events').where({ tenant_id: 't-bad' }).orderBy('event_id').pluck('event_id');
    expect(stored).toEqual(['g1', 'g2', 'g3', 'g4', 'g5', 'g6', 'g7', 'g8']);
  });
});
