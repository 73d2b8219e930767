import type { Scope } from '@billstream/contracts';
import { migrate, type Db } from '@billstream/db';
import { createTestDatabase, migratedDb, testLogger, type TestDatabase } from '@billstream/testing';
import { migrations, SCHEMA } from '../migrations';
import { EventPartitions } from './partitions';
import { EventStore } from './store';

const A: Scope = { tenantId: 'tenant-h', environmentId: 'production' };
const B: Scope = { tenantId: 'tenant-h', environmentId: 'sandbox' };

/**
 * Events per hour of receipt (`event_hours`, migration 008, read by GET /v1/reports/events_hourly):
 * filled from the events stored before the migration, then grown by each stored batch by what it
 * stored (duplicates not counted), per scope, whatever the events' own timestamps.
 */
describe('event_hours (real Postgres)', () => {
  let database: TestDatabase;
  let db: Db;
  const store = new EventStore();

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await migratedDb(database.url, SCHEMA, migrations.slice(0, migrations.findIndex((m) => m.name === '008_event_hours')));
    const partitions = new EventPartitions(db, testLogger('p'));
    await partitions.load();
    await partitions.ensureFor(['2026-07-01T00:00:00.000000Z']);
    // 150 events received over 10:00-12:29 UTC of 2026-07-01, one a minute, with timestamps a day earlier.
    await db.raw(
      `INSERT INTO events (tenant_id, environment_id, event_id, event_name, external_customer_id, "timestamp", properties, received_at)
       SELECT ?, ?, 'old' || g, 'api', 'c', '2026-06-30T10:00:00Z'::timestamptz + g * interval '1 minute', '{}', '2026-07-01T10:00:00Z'::timestamptz + g * interval '1 minute'
       FROM generate_series(0, 149) g`,
      [A.tenantId, A.environmentId],
    );
    await migrate(db, SCHEMA, migrations);
  }, 60_000);

  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  const hours = async (scope: Scope) =>
    (await store.hourly(db, scope, new Date('2026-07-01T09:30:00Z'))).map((h) => [h.hour.toISOString(), h.events]);

  it('is filled from the events stored before it', async () => {
    expect(await hours(A)).toEqual([
      ['2026-07-01T10:00:00.000Z', 60],
      ['2026-07-01T11:00:00.000Z', 60],
      ['2026-07-01T12:00:00.000Z', 30],
    ]);
    expect(await hours(B)).toEqual([]);
  });

  it('grows by what each batch stores, per scope and hour of receipt; a duplicate or a redelivery adds nothing', async () => {
    const value = (scope: Scope, id: string, receivedAt: string) =>
      JSON.stringify({ tenant_id: scope.tenantId, environment_id: scope.environmentId, event_id: id, event_name: 'api', external_customer_id: 'c', timestamp: '2026-07-01T00:00:00.000000Z', properties: {}, source: null, received_at: receivedAt });
    const batch = [
      value(A, 'n1', '2026-07-01T12:59:59.999Z'),
      value(A, 'n2', '2026-07-01T13:00:00.000Z'),
      value(A, 'n1', '2026-07-01T13:00:00.000Z'),
      value(A, 'n3', '2026-07-01T13:00:00.000Z'),
      value(B, 'n1', '2026-07-01T13:30:00.000Z'),
    ];
    const scopes = batch.map((v) => `${JSON.parse(v).tenant_id}:${JSON.parse(v).environment_id}`);
    expect(await store.storeBatch(db, batch, scopes)).toEqual({ received: 5, stored: 4 });
    expect(await store.storeBatch(db, batch, scopes)).toEqual({ received: 5, stored: 0 });
    expect(await hours(A)).toEqual([
      ['2026-07-01T10:00:00.000Z', 60],
      ['2026-07-01T11:00:00.000Z', 60],
      ['2026-07-01T12:00:00.000Z', 31],
      ['2026-07-01T13:00:00.000Z', 2],
    ]);
    expect(await hours(B)).toEqual([['2026-07-01T13:00:00.000Z', 1]]);
    expect((await store.hourly(db, A, new Date('2026-07-01T12:10:00Z'))).map((h) => h.events)).toEqual([31, 2]);
  });
});
