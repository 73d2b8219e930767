import { createTestDatabase, migratedDb, testLogger, type TestDatabase } from '@billstream/testing';
import type { Db } from '@billstream/db';
import { rowsOf } from '@billstream/db';
import { migrations, SCHEMA } from '../migrations';
import { EventPartitions } from './partitions';

describe('events partitions (real Postgres)', () => {
  let database: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await migratedDb(database.url, SCHEMA, migrations);
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  const partitionOf = async (eventId: string) =>
    rowsOf<{ p: string }>(await db.raw('SELECT tableoid::regclass::text AS p FROM events WHERE event_id = ?', [eventId]))[0]?.p;

  const insert = (eventId: string, timestamp: string) =>
    db('events').insert({
      tenant_id: 't',
      environment_id: 'e',
      event_id: eventId,
      event_name: 'n',
      external_customer_id: 'c',
      timestamp,
      properties: '{}',
      received_at: new Date(),
    });

  it('creates months ahead, months on demand, and moves rows out of the default partition', async () => {
    const partitions = new EventPartitions(db, testLogger('partitions'));
    await partitions.load();
    await partitions.ensureAhead(new Date('2026-11-26T00:00:00Z'));
    await insert('in-dec', '2026-12-15T00:00:00Z');
    expect(await partitionOf('in-dec')).toBe('events_y2026m12');

    await insert('stray', '2031-07-04T00:00:00Z');
    expect(await partitionOf('stray')).toBe('events_default');
    await partitions.ensureFor(['2031-07-09T00:00:00.000000Z', '2019-01-01T00:00:00.000000Z']);
    expect(await partitionOf('stray')).toBe('events_y2031m07');
    await insert('backfill', '2019-01-31T23:59:59Z');
    expect(await partitionOf('backfill')).toBe('events_y2019m01');

    // A second manager (another replica) knows them from the catalogue and creates nothing twice.
    const other = new EventPartitions(db, testLogger('partitions'));
    await other.load();
    await other.ensureFor(['2031-07-01T00:00:00.000000Z']);
    const names = rowsOf<{ n: string }>(
      await db.raw("SELECT c.relname AS n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass ORDER BY 1"),
    ).map((r) => r.n);
    expect(names).toEqual(['events_default', 'events_y2019m01', 'events_y2026m10', 'events_y2026m11', 'events_y2026m12', 'events_y2027m01', 'events_y2031m07']);
  });
});
