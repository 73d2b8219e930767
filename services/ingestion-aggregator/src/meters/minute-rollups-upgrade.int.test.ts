import type { AggregationType, Scope } from '@billstream/contracts';
import { migrate, type Db } from '@billstream/db';
import { newId } from '@billstream/ids';
import { createTestDatabase, migratedDb, testLogger, type TestDatabase } from '@billstream/testing';
import { EventPartitions } from '../events/partitions';
import { EventStore } from '../events/store';
import { migrations, SCHEMA } from '../migrations';
import { rollupCovers } from './rollup-usage-store';
import { MeterStore, type Meter, type MeterFilter } from './store';
import { rebuildRollups, rollupAndRawAnswers } from '../testing/rollup-checks';

const SCOPE: Scope = { tenantId: 'tenant-m', environmentId: 'production' };
const EU: MeterFilter[] = [{ key: 'region', values: ['eu'] }];
const TYPES: Array<[AggregationType, string | null]> = [
  ['COUNT', null],
  ['SUM', 'n'],
  ['MAX', 'n'],
  ['UNIQUE_COUNT', 'user'],
  ['LATEST', 'n'],
];

/**
 * Upgrade to the minute rows (migration 007, docs/adr/0023): meters built before it (their
 * series without minute rows nor hour bitmaps of minutes) are marked not built, read the events
 * meanwhile, and are rebuilt by the builder on start from the events stored before the
 * migration and the batches stored after it; then ranges cut inside minutes and hours answer
 * exactly, for all five aggregations, with and without a filter.
 */
describe('rollups of meters existing before the minute rows (real Postgres)', () => {
  let database: TestDatabase;
  let db: Db;
  const meterStore = new MeterStore();
  const meters: Meter[] = [];

  const newMeter = async (type: AggregationType, field: string | null, filters: MeterFilter[]): Promise<Meter> => {
    const now = new Date();
    const meter: Meter = {
      id: newId('meter'),
      ...SCOPE,
      name: `${type}-${filters.length}`,
      eventName: 'api',
      aggregationType: type,
      aggregationField: field,
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
    // The schema before the minute rows: every migration before 007.
    db = await migratedDb(database.url, SCHEMA, migrations.slice(0, migrations.findIndex((m) => m.name === '007_minute_rollups')));
    const partitions = new EventPartitions(db, testLogger('p'));
    await partitions.load();
    await partitions.ensureFor(['2026-06-29T00:00:00.000000Z', '2026-07-01T00:00:00.000000Z']);
    for (const [type, field] of TYPES) for (const filters of [[], EU]) meters.push(await newMeter(type, field, filters));
    // 6,000 events over 2026-06-29 to 2026-07-03 (across the month boundary), one every 67 s, 40 users.
    await db.raw(`
      INSERT INTO events (tenant_id, environment_id, event_id, event_name, external_customer_id, "timestamp", properties, received_at)
      SELECT ?, ?, 'old' || g, 'api', 'c' || (g % 2), '2026-06-29T00:00:00Z'::timestamptz + (g * 67) * interval '1 second' + (g % 997) * interval '1 microsecond',
        jsonb_build_object('n', (g * 13) % 101, 'user', 'u' || ((g * 7) % 40), 'region', CASE WHEN g % 3 = 0 THEN 'eu' ELSE 'us' END), now()
      FROM generate_series(0, 5999) g`, [SCOPE.tenantId, SCOPE.environmentId]);
    await migrate(db, SCHEMA, migrations);
  }, 60_000);

  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('marks every existing meter not built, so usage reads its events', async () => {
    for (const m of meters) {
      const meter = (await meterStore.byId(db, m.id)) as Meter;
      expect(meter.rollupReadyAt).toBeNull();
      expect(rollupCovers(meter, undefined)).toBe(false);
    }
  });

  it('rebuilds them on start, minute rows included; then ranges cut inside minutes and hours answer exactly', async () => {
    // A batch stored after the migration, before the builder runs: late events in both months, within a few minutes, with a duplicate.
    const event = (i: number) =>
      JSON.stringify({
        tenant_id: SCOPE.tenantId,
        environment_id: SCOPE.environmentId,
        event_id: `new${i % 60}`,
        event_name: 'api',
        external_customer_id: 'c0',
        timestamp: i % 2 === 0 ? `2026-06-30T23:5${8 + (i % 4) / 2}:${String(i % 60).padStart(2, '0')}.000000Z` : `2026-07-01T05:1${i % 5}:30.500000Z`,
        properties: { n: i % 2 === 0 ? 500 + i : String(i), user: i % 5 === 0 ? 'fresh' : `u${i % 40}`, region: i % 3 === 0 ? 'us' : 'eu' },
        source: null,
        received_at: '2026-07-10T00:00:00.000Z',
      });
    const after = Array.from({ length: 61 }, (_, i) => event(i));
    expect(await new EventStore().storeBatch(db, after, [`${SCOPE.tenantId}:${SCOPE.environmentId}`])).toEqual({ received: 61, stored: 60 });
    await rebuildRollups(db, meterStore, testLogger('rollups'));
    const ranges = [
      ['2026-06-29T00:00:00.000000Z', '2026-07-04T00:00:00.000000Z'],
      ['2026-06-30T05:17:20.500000Z', '2026-07-01T05:13:10.000001Z'],
      ['2026-06-30T23:58:30.000000Z', '2026-07-01T05:12:00.000000Z'],
      ['2026-06-30T23:58:30.000000Z', '2026-06-30T23:59:45.000000Z'],
      ['2026-07-01T04:59:59.999999Z', '2026-07-01T05:14:00.000001Z'],
      ['2026-07-01T05:11:00.000000Z', '2026-07-01T05:13:00.000000Z'],
    ];
    const answers = await rollupAndRawAnswers(db, SCOPE, meterStore, meters.map((m) => m.id), ranges, ['c0', 'c1']);
    for (const { meter, rolled, raw } of answers) {
      expect(meter.rollupReadyAt).toBeInstanceOf(Date);
      expect(rolled).toEqual(raw);
    }
    // Per meter: each range in total, HOUR and DAY windows for two customers, and aggregateMany.
    const compared = answers.length - meters.length;
    expect(compared).toBe(meters.length * ranges.length * 3 * 2);
    // The minute rows and hour bitmaps of minutes were built from the events stored before the migration too.
    const [{ n }] = await db('usage_rollup_minutes').where({ series: meters[0].rollupSeries }).sum({ n: 'event_count' });
    expect(Number(n)).toBe(6060);
    const [{ rows }] = await db('usage_rollup_value_hours').where({ series: meters[6].rollupSeries }).count({ rows: '*' });
    expect(Number(rows)).toBeGreaterThan(0);
  });
});
