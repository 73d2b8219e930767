import type { Scope } from '@billstream/contracts';
import { Client } from 'pg';
import { migrate, type Db } from '@billstream/db';
import { createTestDatabase, migratedDb, testLogger, type TestDatabase } from '@billstream/testing';
import { migrations, SCHEMA } from '../migrations';
import { EventPartitions } from './partitions';
import { EventStore } from './store';

const A: Scope = { tenantId: 'tenant-k', environmentId: 'production' };

/**
 * Migration 009 (ADR 0053): the dedup keys stored as three texts before it become (scope hash,
 * event id), so an event stored before the migration is still a duplicate after it; keys of
 * different scopes, or whose texts only concatenate alike, stay different.
 */
describe('scoped event keys (real Postgres)', () => {
  let database: TestDatabase;
  let db: Db;
  const store = new EventStore();

  const value = (scope: Scope, id: string, n: number) =>
    JSON.stringify({
      tenant_id: scope.tenantId,
      environment_id: scope.environmentId,
      event_id: id,
      event_name: 'api',
      external_customer_id: 'c',
      timestamp: '2026-07-01T00:00:00.000000Z',
      properties: { n },
      source: null,
      received_at: '2026-07-01T00:00:01.000Z',
    });
  const scopesOf = (batch: string[]) => batch.map((v) => `${JSON.parse(v).tenant_id}:${JSON.parse(v).environment_id}`);

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await migratedDb(database.url, SCHEMA, migrations.slice(0, migrations.findIndex((m) => m.name === '009_scoped_event_keys')));
    const partitions = new EventPartitions(db, testLogger('p'));
    await partitions.load();
    await partitions.ensureFor(['2026-07-01T00:00:00.000000Z']);
    // 1,000 events stored before the migration, with their dedup keys as the texts they were then.
    await db.raw(
      `WITH g AS (SELECT 'old' || n AS id FROM generate_series(1, 1000) n),
       k AS (INSERT INTO event_keys (tenant_id, environment_id, event_id, timestamp) SELECT ?, ?, id, '2026-07-01T00:00:00Z' FROM g)
       INSERT INTO events (tenant_id, environment_id, event_id, event_name, external_customer_id, "timestamp", properties, received_at)
       SELECT ?, ?, id, 'api', 'c', '2026-07-01T00:00:00Z', '{}', '2026-07-01T00:00:01Z' FROM g`,
      [A.tenantId, A.environmentId, A.tenantId, A.environmentId],
    );
    // A previous version's aggregator storing while the migration starts: its key, committed after
    // the migration began, is in the new table (the migration waits for it) and refuses its event.
    const writer = new Client({ connectionString: database.url });
    await writer.connect();
    try {
      await writer.query('BEGIN');
      await writer.query(
        `INSERT INTO ingestion.event_keys (tenant_id, environment_id, event_id, timestamp) VALUES ($1, $2, 'inflight', '2026-07-01T00:00:00Z')`,
        [A.tenantId, A.environmentId],
      );
      const migrating = migrate(db, SCHEMA, migrations);
      const waiting = async () =>
        (await writer.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows[0].n;
      for (let i = 0; i < 200 && (await waiting()) === 0; i += 1) await new Promise((r) => setTimeout(r, 25));
      expect(await waiting()).toBe(1);
      await writer.query('COMMIT');
      await migrating;
    } finally {
      await writer.end();
    }
  }, 60_000);

  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('holds one (scope, event id) key per event stored before it, and events keep no stored_at', async () => {
    const columns = await db('information_schema.columns')
      .where({ table_schema: SCHEMA, table_name: 'event_keys' })
      .select('column_name', 'data_type');
    expect(columns).toEqual(
      expect.arrayContaining([
        { column_name: 'scope', data_type: 'bigint' },
        { column_name: 'event_id', data_type: 'text' },
      ]),
    );
    expect(columns).toHaveLength(2);
    const keyed = await db.raw(`SELECT count(DISTINCT scope)::int AS scopes, min(event_id) AS first, max(event_id) AS last FROM event_keys`);
    expect(keyed.rows[0]).toEqual({ scopes: 1, first: 'inflight', last: 'old999' });
    expect(Number((await db('event_keys').count<{ count: string }[]>({ count: '*' }))[0].count)).toBe(1001);
    const partitions = await db.raw(
      `SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'event_keys'::regclass`,
    );
    expect(partitions.rows[0].n).toBe(8);
    const storedAt = await db('information_schema.columns').where({ table_schema: SCHEMA, table_name: 'events', column_name: 'stored_at' });
    expect(storedAt).toEqual([]);
  });

  it('refuses again an event stored before the migration or during its start, and stores a new one once', async () => {
    const batch = [value(A, 'old1', 1), value(A, 'old1000', 2), value(A, 'inflight', 5), value(A, 'new1', 3), value(A, 'new1', 4)];
    expect(await store.storeBatch(db, batch, scopesOf(batch))).toEqual({ received: 5, stored: 1 });
    expect(await store.storeBatch(db, batch, scopesOf(batch))).toEqual({ received: 5, stored: 0 });
    const rows = await db('events').where({ tenant_id: A.tenantId, event_id: 'new1' }).select('properties');
    expect(rows.map((r) => r.properties)).toEqual([{ n: 3 }]);
    expect(await store.stats(db, A)).toMatchObject({ totalEvents: 1 });
  });

  it('keeps apart the same event id in other scopes, and texts that only concatenate alike', async () => {
    const batch = [
      value({ tenantId: 'ab', environmentId: 'c' }, 'x', 1),
      value({ tenantId: 'a', environmentId: 'bc' }, 'x', 2),
      value({ tenantId: 'a', environmentId: 'b' }, 'cx', 3),
      value({ tenantId: A.tenantId, environmentId: 'sandbox' }, 'old1', 4),
      value({ tenantId: 'a:1', environmentId: 'b' }, 'x', 5),
      value({ tenantId: 'a', environmentId: '1:b' }, 'x', 6),
    ];
    expect(await store.storeBatch(db, batch, scopesOf(batch))).toEqual({ received: 6, stored: 6 });
    expect(await store.storeBatch(db, batch, scopesOf(batch))).toEqual({ received: 6, stored: 0 });
  });
});
