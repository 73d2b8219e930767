import type { Scope } from '@billstream/contracts';
import { migrate, type Db } from '@billstream/db';
import { newId } from '@billstream/ids';
import { createTestDatabase, migratedDb, testLogger, type TestDatabase } from '@billstream/testing';
import { EventPartitions } from '../events/partitions';
import { EventStore } from '../events/store';
import { migrations, SCHEMA } from '../migrations';
import { rollupCovers, RollupUsageStore } from './rollup-usage-store';
import { MeterStore, type Meter, type MeterFilter } from './store';
import { rebuildRollups, rollupAndRawAnswers } from '../testing/rollup-checks';

const SCOPE: Scope = { tenantId: 'tenant-u', environmentId: 'production' };

/**
 * Upgrade to the UNIQUE_COUNT month bitmaps (migration 006, docs/adr/0023): UNIQUE_COUNT meters
 * built before it (their series' values in the old per-hour and per-day rows only) are marked not
 * built, read the events meanwhile, and are rebuilt by the builder on start from the events
 * stored before the migration and the batches stored after it; then they answer exactly.
 */
describe('UNIQUE_COUNT rollups of meters existing before the month bitmaps (real Postgres)', () => {
  let database: TestDatabase;
  let db: Db;
  const meterStore = new MeterStore();
  const rolled = new RollupUsageStore();
  const meters: Meter[] = [];

  const newMeter = async (filters: MeterFilter[]): Promise<Meter> => {
    const now = new Date();
    const meter: Meter = {
      id: newId('meter'),
      ...SCOPE,
      name: `unique-${filters.length}`,
      eventName: 'api',
      aggregationType: 'UNIQUE_COUNT',
      aggregationField: 'user',
      filters,
      createdAt: now,
      updatedAt: now,
      rollupReadyAt: null,
      rollupSeries: '',
    };
    await meterStore.insert(db, meter);
    await meterStore.markRollupReady(db, meter.id);
    return meter;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    // The schema before the month bitmaps: every migration before 006.
    db = await migratedDb(database.url, SCHEMA, migrations.slice(0, migrations.findIndex((m) => m.name === '006_unique_count_months')));
    const partitions = new EventPartitions(db, testLogger('p'));
    await partitions.load();
    await partitions.ensureFor(['2026-06-29T00:00:00.000000Z', '2026-07-01T00:00:00.000000Z']);
    meters.push(await newMeter([]), await newMeter([{ key: 'region', values: ['eu'] }]));
    // 6,000 events over 2026-06-29 to 2026-07-03 (across the month boundary), 40 users, and a
    // value of an old per-hour row that no event holds (the old rows are not read any more).
    await db.raw(`
      INSERT INTO events (tenant_id, environment_id, event_id, event_name, external_customer_id, "timestamp", properties, received_at)
      SELECT ?, ?, 'old' || g, 'api', 'c' || (g % 2), '2026-06-29T00:00:00Z'::timestamptz + (g * 67) * interval '1 second' + (g % 997) * interval '1 microsecond',
        jsonb_build_object('user', 'u' || ((g * 7) % 40), 'region', CASE WHEN g % 3 = 0 THEN 'eu' ELSE 'us' END), now()
      FROM generate_series(0, 5999) g`, [SCOPE.tenantId, SCOPE.environmentId]);
    await db.raw(
      `INSERT INTO usage_rollup_values (tenant_id, environment_id, series, external_customer_id, span, bucket, value_sha256)
       VALUES (?, ?, ?, 'c0', 'hour', '2026-07-01T05:00:00Z', sha256('stale'))`,
      [SCOPE.tenantId, SCOPE.environmentId, meters[0].rollupSeries],
    );
    await migrate(db, SCHEMA, migrations);
    // A bitmap row no event backs, its bits in the hours of 2026-07-01 (within the events' days,
    // the days a build recounts), as a build that crashed midway may leave: the rebuild drops it.
    await db.raw(
      `INSERT INTO usage_rollup_value_months (tenant_id, environment_id, series, external_customer_id, month, value_sha256, hours)
       VALUES (?, ?, ?, 'c0', '2026-07-01T00:00:00Z', sha256('stale'), ~B'0'::bit(744) & ~(~B'0'::bit(744) >> 24))`,
      [SCOPE.tenantId, SCOPE.environmentId, meters[0].rollupSeries],
    );
  }, 60_000);

  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('marks the existing UNIQUE_COUNT meters not built, so usage reads their events', async () => {
    for (const m of meters) {
      const meter = (await meterStore.byId(db, m.id)) as Meter;
      expect(meter.rollupReadyAt).toBeNull();
      expect(rollupCovers(meter, undefined)).toBe(false);
    }
  });

  it('rebuilds them on start from the events before and after the migration; then they answer exactly', async () => {
    // A batch stored after the migration, before the builder runs: late events in both months, a new value.
    const after = Array.from({ length: 50 }, (_, i) =>
      JSON.stringify({
        tenant_id: SCOPE.tenantId,
        environment_id: SCOPE.environmentId,
        event_id: `new${i}`,
        event_name: 'api',
        external_customer_id: 'c0',
        timestamp: i % 2 === 0 ? '2026-06-30T23:59:59.999999Z' : `2026-07-01T0${i % 10}:30:00.000000Z`,
        properties: { user: i % 5 === 0 ? 'fresh' : `u${i % 40}`, region: 'eu' },
        source: null,
        received_at: '2026-07-10T00:00:00.000Z',
      }),
    );
    expect(await new EventStore().storeBatch(db, after, [`${SCOPE.tenantId}:${SCOPE.environmentId}`])).toEqual({ received: 50, stored: 50 });
    await rebuildRollups(db, meterStore, testLogger('rollups'), 200);
    const ranges = [
      ['2026-06-29T00:00:00.000000Z', '2026-07-04T00:00:00.000000Z'],
      ['2026-06-30T05:17:00.500000Z', '2026-07-02T03:10:00.000001Z'],
      ['2026-06-30T23:00:00.000000Z', '2026-07-01T01:00:00.000000Z'],
      ['2026-06-30T23:59:59.999999Z', '2026-07-01T00:00:00.000001Z'],
      ['2026-07-01T05:00:00.000000Z', '2026-07-01T06:00:00.000000Z'],
    ];
    const answers = await rollupAndRawAnswers(db, SCOPE, meterStore, meters.map((m) => m.id), ranges, ['c0', 'c1']);
    for (const { meter, rolled, raw } of answers) {
      expect(meter.rollupReadyAt).toBeInstanceOf(Date);
      expect(rolled).toEqual(raw);
    }
    // Per meter: each range in total, HOUR and DAY windows for two customers, and aggregateMany.
    const compared = answers.length - meters.length;
    expect(compared).toBe(2 * 5 * 3 * 2);
    expect(await db('usage_rollup_value_months').where({ external_customer_id: 'c0' }).whereRaw("value_sha256 = sha256('stale')").count({ n: '*' })).toEqual([{ n: 0 }]);
    const whole = await rolled.aggregate(db, SCOPE, { meter: (await meterStore.byId(db, meters[0].id)) as Meter, externalCustomerId: 'c0', from: ranges[0][0], to: ranges[0][1] });
    // c0's events before the migration hold 20 users; the batch after it adds others and 'fresh'.
    expect(Number(whole.total)).toBeGreaterThan(21);
  });
});
