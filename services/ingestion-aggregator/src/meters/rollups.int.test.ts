/** One file: every case compares the rollups with a raw scan over the same seeded events, built once in beforeAll. */
import type { AggregationType, Scope } from '@billstream/contracts';
import type { Db } from '@billstream/db';
import { newId } from '@billstream/ids';
import { createTestDatabase, migratedDb, testLogger, type TestDatabase, seededRandom } from '@billstream/testing';
import { EventPartitions } from '../events/partitions';
import { EventStore } from '../events/store';
import { migrations, SCHEMA } from '../migrations';
import { RollupBuilder } from './rollup-builder';
import { cutRange, rollupCovers, RollupUsageStore } from './rollup-usage-store';
import { MeterService } from './service';
import { MeterStore, type Meter, type MeterFilter } from './store';
import { UsageStore } from './usage-store';
import { usageValue, usageView } from '../testing/usage-view';


const SEED = Number(process.env.ROLLUPS_SEED ?? 20261126);
const SCOPE: Scope = { tenantId: 'tenant-r', environmentId: 'production' };
const CUSTOMERS = ['c0', 'c1', 'c2'];
const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const T0 = Date.parse('2026-07-01T00:00:00Z');
const SPAN_MS = 4 * DAY_MS;
const AMOUNTS: unknown[] = [1, 2.5, '3', '0.125', '-4', 'n/a', true, null, 1000, '7.75', 0, { x: 1 }, 7, 7.0, '7.0', '1e3', -0.5];
const USERS: unknown[] = ['ann', 'bob', 'cid', 'dan', 7, 7.0, '7', 'x'.repeat(3000), null, { id: 1 }, true];
const TYPES: Array<[AggregationType, string | null]> = [
  ['COUNT', null],
  ['SUM', 'n'],
  ['MAX', 'n'],
  ['UNIQUE_COUNT', 'user'],
  ['LATEST', 'n'],
];
/**
 * Minutes dense with events (a few hundred within minutes of each other, from several batches),
 * so that ranges cut inside them read minute rows, hour bitmaps of minutes and raw edges that
 * all hold events: on 2026-06-30 around 23:58 (across the month boundary), 2026-07-02 10:15 to
 * 10:21 and 2026-07-03 05:40 to 05:45.
 */
const DENSE: Array<[number, number]> = [
  [Date.parse('2026-06-30T23:58:00Z'), 4 * MINUTE_MS],
  [Date.parse('2026-07-02T10:15:00Z'), 6 * MINUTE_MS],
  [Date.parse('2026-07-03T05:40:00Z'), 5 * MINUTE_MS],
];
/** Ranges cut inside the dense minutes, inside hours on whole minutes, and within one hour or minute. */
const CUT_RANGES = [
  ['2026-07-02T10:17:23.456789Z', '2026-07-03T05:42:10.000001Z'],
  ['2026-07-02T10:17:00.000000Z', '2026-07-03T05:42:00.000000Z'],
  ['2026-07-02T10:16:59.999999Z', '2026-07-03T05:43:00.000001Z'],
  ['2026-07-02T10:15:30.000000Z', '2026-07-02T10:20:30.000000Z'],
  ['2026-07-02T10:18:00.000001Z', '2026-07-02T10:18:59.999999Z'],
  ['2026-07-02T09:59:30.000000Z', '2026-07-02T11:00:30.000000Z'],
  ['2026-07-02T09:30:00.000000Z', '2026-07-02T10:20:00.000000Z'],
  ['2026-06-30T23:58:40.000000Z', '2026-07-01T00:01:20.000000Z'],
  ['2026-06-30T23:59:00.000000Z', '2026-07-02T10:19:12.345678Z'],
  ['2026-06-30T05:17:00.123456Z', '2026-07-03T05:44:59.999999Z'],
];

/** After every random event. */
const TIE = '2026-07-05T12:30:00.000000Z';
const REGION_FILTER: MeterFilter[] = [{ key: 'region', values: ['eu', 'us'] }];
const REGION_FILTER_REORDERED: MeterFilter[] = [{ key: 'region', values: ['us', 'eu'] }];

/** `YYYY-MM-DDTHH:MM:SS.ffffffZ` of epoch ms plus extra microseconds. */
const micros = (ms: number, extra: number) => `${new Date(ms).toISOString().slice(0, 19)}.${String((ms % 1000) * 1000 + extra).padStart(6, '0')}Z`;


/**
 * Usage rollups (docs/adr/0023-usage-rollups.md) on real Postgres: events stored by the
 * consumer's statement (EventStore.storeBatch) in batches with duplicates (inside a batch and
 * redelivered with other properties), late events, values that are not numbers, other event
 * names, environments and filters; meters created before the events and after them (built by
 * the backfill while batches keep coming). Every answer from the rollups must equal the raw scan
 * of the events, for all five aggregations, with and without windows, on unaligned ranges.
 */
describe('usage rollups (real Postgres)', () => {
  let database: TestDatabase;
  let db: Db;
  const events = new EventStore();
  const meterStore = new MeterStore();
  const raw = new UsageStore();
  const rolled = new RollupUsageStore();
  let builder: RollupBuilder;
  const early: Meter[] = [];
  const late: Meter[] = [];
  const r = seededRandom(SEED);
  let sent = 0;
  const ids: string[] = [];

  const newMeter = async (type: AggregationType, field: string | null, filters: MeterFilter[]): Promise<Meter> => {
    const now = new Date();
    const meter: Meter = {
      id: newId('meter'),
      tenantId: SCOPE.tenantId,
      environmentId: SCOPE.environmentId,
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
    return meter;
  };
  const fresh = async (m: Meter) => (await meterStore.byId(db, m.id)) as Meter;

  /** A random time in the dense minutes. */
  const dense = () => {
    const [start, span] = r.pick(DENSE);
    return start + r.int(span);
  };

  /** A batch of `n` random events (at times `at` draws, if given); about 10 % repeat an event id already sent (other properties). */
  const batch = (n: number, at?: () => number): string[] => {
    const values: string[] = [];
    for (let i = 0; i < n; i += 1) {
      const again = ids.length > 0 && r.next() < 0.1;
      const eventId = again ? r.pick(ids) : `e${sent++}`;
      if (!again) ids.push(eventId);
      const ms = at ? at() : r.next() < 0.1 ? T0 - DAY_MS + r.int(5) * DAY_MS + r.int(24) * HOUR_MS : T0 - DAY_MS + r.int(SPAN_MS);
      const properties: Record<string, unknown> = { region: r.pick(['eu', 'us', 'ap']), tier: r.pick(['a', 'b']) };
      if (r.next() < 0.9) properties.n = r.pick(AMOUNTS);
      if (r.next() < 0.9) properties.user = r.pick(USERS);
      if (r.next() < 0.1) delete properties.region;
      values.push(
        JSON.stringify({
          tenant_id: SCOPE.tenantId,
          environment_id: r.next() < 0.05 ? 'sandbox' : SCOPE.environmentId,
          event_id: eventId,
          event_name: r.next() < 0.85 ? 'api' : 'other',
          external_customer_id: r.pick(CUSTOMERS),
          timestamp: ms % HOUR_MS === 0 ? micros(ms, 0) : micros(ms, r.int(1000)),
          properties,
          source: null,
          received_at: '2026-07-10T00:00:00.000Z',
        }),
      );
    }
    return values;
  };
  const store = (values: string[]) => events.storeBatch(db, values, values.map((v) => `${SCOPE.tenantId}:${JSON.parse(v).environment_id}`));

  /** A random range inside the events' span (and a little beyond), sometimes on whole hours or days. */
  const range = () => {
    const edge = () => {
      const ms = T0 - DAY_MS - HOUR_MS + r.int(SPAN_MS + 2 * HOUR_MS);
      const kind = r.int(5);
      if (kind === 0) return micros(Math.floor(ms / HOUR_MS) * HOUR_MS, 0);
      if (kind === 1) return micros(Math.floor(ms / DAY_MS) * DAY_MS, 0);
      if (kind === 2) return micros(Math.floor(ms / MINUTE_MS) * MINUTE_MS, 0);
      return micros(ms, r.int(1000));
    };
    const [a, b] = [edge(), edge()].sort();
    return a === b ? { from: a, to: micros(Date.parse(b) + HOUR_MS, 0) } : { from: a, to: b };
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await migratedDb(database.url, SCHEMA, migrations);
    const partitions = new EventPartitions(db, testLogger('p'));
    await partitions.load();
    await partitions.ensureFor(['2026-06-30T00:00:00.000000Z', '2026-07-01T00:00:00.000000Z']);
    builder = new RollupBuilder(db, meterStore, testLogger('rollups'));

    for (const [type, field] of TYPES) for (const filters of [[], REGION_FILTER]) early.push(await newMeter(type, field, filters));
    await builder.build(early.map((m) => m.id));
    for (let b = 0; b < 3; b += 1) await store(batch(400));
    await store(batch(300, dense));
    // Meters created after events: built while more batches (late events and duplicates) are stored.
    // The unfiltered ones share their series with the early ones (rows recounted); the filtered
    // ones name the values in another order (a new series, built from the events alone); two
    // more share a series with the UNIQUE_COUNT ones (partials and digests in one series).
    for (const [type, field] of TYPES) for (const filters of [[], REGION_FILTER_REORDERED]) late.push(await newMeter(type, field, filters));
    late.push(await newMeter('SUM', 'user', []), await newMeter('MAX', 'user', REGION_FILTER));
    await Promise.all([
      (async () => {
        for (const m of late) await builder.build([m.id]);
      })(),
      (async () => {
        for (let b = 0; b < 4; b += 1) await store(batch(200, b % 2 === 0 ? dense : undefined));
      })(),
    ]);
    await store(batch(400));
    await store(batch(300, dense));
    // Events at the same instant with other values, after all others, in two batches (LATEST breaks the tie by event id).
    const tie = (id: string, n: number) =>
      JSON.stringify({ tenant_id: SCOPE.tenantId, environment_id: 'production', event_id: id, event_name: 'api', external_customer_id: 'c0', timestamp: TIE, properties: { n, region: 'eu', user: 'tie' }, source: null, received_at: '2026-07-10T00:00:00.000Z' });
    await store([tie('tie-b', 11)]);
    await store([tie('tie-a', 10), tie('tie-0', 9)]);
  }, 120_000);

  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('marks every meter ready once built, and its rollup rows hold exactly the events it counts', async () => {
    for (const m of [...early, ...late]) {
      const meter = await fresh(m);
      expect(meter.rollupReadyAt).toBeInstanceOf(Date);
      if (meter.aggregationType !== 'COUNT') continue;
      const all = await raw.aggregate(db, SCOPE, { meter, externalCustomerId: 'c0', from: '2026-06-01T00:00:00.000000Z', to: '2026-08-01T00:00:00.000000Z' });
      const [{ n }] = await db('usage_rollups').where({ series: meter.rollupSeries, external_customer_id: 'c0' }).sum({ n: 'event_count' });
      const [{ n: inMinutes }] = await db('usage_rollup_minutes').where({ series: meter.rollupSeries, external_customer_id: 'c0' }).sum({ n: 'event_count' });
      expect(Number(all.total)).toBeGreaterThan(100);
      expect(String(n)).toBe(all.total);
      expect(String(inMinutes)).toBe(all.total);
    }
  });

  it('answers every random query (totals, HOUR and DAY windows) exactly as the raw scan', async () => {
    let compared = 0;
    for (const m of [...early, ...late]) {
      const meter = await fresh(m);
      for (let i = 0; i < 25; i += 1) {
        const { from, to } = range();
        const windowSize = r.pick([undefined, 'HOUR', 'DAY'] as const);
        const extraFilters = meter.filters.length > 0 && r.next() < 0.5 ? [{ key: 'region', values: ['ap', 'us', 'eu'] }] : undefined;
        expect(rollupCovers(meter, extraFilters)).toBe(true);
        const q = { meter, externalCustomerId: r.pick(CUSTOMERS), from, to, windowSize, extraFilters };
        const expected = usageView(await raw.aggregate(db, SCOPE, q), from, to, windowSize);
        expect({ meter: meter.name, from, to, windowSize, ...usageView(await rolled.aggregate(db, SCOPE, q), from, to, windowSize) }).toEqual({
          meter: meter.name,
          from,
          to,
          windowSize,
          ...expected,
        });
        compared += 1;
      }
    }
    expect(compared).toBe(25 * (early.length + late.length));
  });

  it('answers ranges across the June/July month boundary exactly as the raw scan (UNIQUE_COUNT month bitmaps)', async () => {
    const ranges = [
      ['2026-06-30T00:00:00.000000Z', '2026-07-02T00:00:00.000000Z'],
      ['2026-06-30T05:17:00.123456Z', '2026-07-01T03:10:00.000001Z'],
      ['2026-06-30T23:00:00.000000Z', '2026-07-01T01:00:00.000000Z'],
      ['2026-06-30T23:30:00.000000Z', '2026-07-01T00:30:00.000000Z'],
      ['2026-06-29T22:00:00.000001Z', '2026-07-05T00:00:00.000000Z'],
    ];
    for (const m of [...early, ...late]) {
      const meter = await fresh(m);
      for (const [from, to] of ranges) {
        for (const windowSize of [undefined, 'HOUR', 'DAY'] as const) {
          for (const externalCustomerId of CUSTOMERS) {
            const q = { meter, externalCustomerId, from, to, windowSize };
            const expected = usageView(await raw.aggregate(db, SCOPE, q), from, to, windowSize);
            expect({ meter: meter.name, from, to, windowSize, ...usageView(await rolled.aggregate(db, SCOPE, q), from, to, windowSize) }).toEqual({ meter: meter.name, from, to, windowSize, ...expected });
          }
        }
      }
      const many = ranges.map(([from, to]) => ({ externalCustomerId: 'c0', from, to }));
      expect((await rolled.aggregateMany(db, SCOPE, { meter, ranges: many })).map(usageValue)).toEqual((await raw.aggregateMany(db, SCOPE, { meter, ranges: many })).map(usageValue));
    }
  });

  it('answers ranges cut inside minutes and inside hours exactly as the raw scan (minute rows, hour bitmaps, raw edges)', async () => {
    let compared = 0;
    for (const m of [...early, ...late]) {
      const meter = await fresh(m);
      const extras = meter.filters.length > 0 ? [undefined, [{ key: 'region', values: ['ap', 'us', 'eu'] }]] : [undefined];
      for (const [from, to] of CUT_RANGES) {
        for (const windowSize of [undefined, 'HOUR', 'DAY'] as const) {
          for (const extraFilters of extras) {
            for (const externalCustomerId of CUSTOMERS) {
              const q = { meter, externalCustomerId, from, to, windowSize, extraFilters };
              const expected = usageView(await raw.aggregate(db, SCOPE, q), from, to, windowSize);
              expect({ meter: meter.name, from, to, windowSize, ...usageView(await rolled.aggregate(db, SCOPE, q), from, to, windowSize) }).toEqual({ meter: meter.name, from, to, windowSize, ...expected });
              compared += 1;
            }
          }
        }
      }
      for (const extraFilters of extras) {
        const many = CUT_RANGES.flatMap(([from, to]) => CUSTOMERS.map((externalCustomerId) => ({ externalCustomerId, from, to })));
        expect({ meter: meter.name, values: (await rolled.aggregateMany(db, SCOPE, { meter, extraFilters, ranges: many })).map(usageValue) }).toEqual({
          meter: meter.name,
          values: (await raw.aggregateMany(db, SCOPE, { meter, extraFilters, ranges: many })).map(usageValue),
        });
      }
    }
    const filtered = [...early, ...late].filter((m) => m.filters.length > 0).length;
    expect(compared).toBe(CUT_RANGES.length * 3 * CUSTOMERS.length * (early.length + late.length + filtered));
    // The dense minutes hold events of every customer in the ranges' partial minutes and whole minutes.
    const count = await fresh(early[0]);
    for (const externalCustomerId of CUSTOMERS) {
      const edge = await raw.aggregate(db, SCOPE, { meter: count, externalCustomerId, from: '2026-07-02T10:17:23.456789Z', to: '2026-07-02T10:18:00.000000Z' });
      const minutes = await raw.aggregate(db, SCOPE, { meter: count, externalCustomerId, from: '2026-07-02T10:18:00.000000Z', to: '2026-07-02T10:21:00.000000Z' });
      expect(Number(edge.total)).toBeGreaterThan(0);
      expect(Number(minutes.total)).toBeGreaterThan(5);
    }
  });

  it('answers batches of ranges (aggregateMany) exactly as the raw scan', async () => {
    for (const m of [...early, ...late]) {
      const meter = await fresh(m);
      const ranges = Array.from({ length: 20 }, () => ({ externalCustomerId: r.pick([...CUSTOMERS, 'nobody']), ...range() }));
      const expected = (await raw.aggregateMany(db, SCOPE, { meter, ranges })).map(usageValue);
      expect({ meter: meter.name, values: (await rolled.aggregateMany(db, SCOPE, { meter, ranges })).map(usageValue) }).toEqual({ meter: meter.name, values: expected });
    }
  });

  it('keeps answering exactly after a redelivered batch (duplicates count once)', async () => {
    const again = batch(300);
    await store(again);
    expect(await store(again)).toEqual({ received: 300, stored: 0 });
    for (const m of late) {
      const meter = await fresh(m);
      const q = { meter, externalCustomerId: 'c1', from: '2026-06-30T00:30:00.000001Z', to: '2026-07-03T23:59:59.999999Z', windowSize: 'DAY' as const };
      expect(usageView(await rolled.aggregate(db, SCOPE, q), q.from, q.to, q.windowSize)).toEqual(usageView(await raw.aggregate(db, SCOPE, q), q.from, q.to, q.windowSize));
    }
  });

  it('breaks LATEST ties by event id, from the rollup hour, the minute rows and the raw edge alike', async () => {
    for (const m of [...early, ...late].filter((x) => x.aggregationType === 'LATEST')) {
      const meter = await fresh(m);
      for (const to of ['2026-07-05T13:00:00.000000Z', '2026-07-05T12:45:00.000000Z', '2026-07-05T12:31:00.000000Z', '2026-07-05T12:30:59.000000Z', '2026-07-05T12:30:00.000001Z']) {
        const q = { meter, externalCustomerId: 'c0', from: '2026-07-05T00:00:00.000000Z', to };
        expect((await raw.aggregate(db, SCOPE, q)).total).toBe('11');
        expect((await rolled.aggregate(db, SCOPE, q)).total).toBe('11');
      }
    }
  });

  it('shares rollup rows between meters of one definition, not between others', async () => {
    const series = async (m: Meter) => (await fresh(m)).rollupSeries;
    const [count, sum, max, unique, latest] = early.filter((m) => m.filters.length === 0);
    expect(await series(sum)).toBe(await series(max));
    expect(await series(sum)).toBe(await series(latest));
    expect(await series(sum)).not.toBe(await series(count));
    expect(await series(unique)).toBe(await series(late[late.length - 2]));
    expect(await series(early[1])).not.toBe(await series(late[1]));
    expect(await series(early[0])).toBe(await series(late[0]));
  });

  it('makes a meter ready at once when a ready meter of its series needs the same rows, else builds it', async () => {
    const shared = await newMeter('LATEST', 'n', REGION_FILTER);
    // A marker row in an hour without events: a recount of the series would delete it.
    const marker = { tenant_id: SCOPE.tenantId, environment_id: SCOPE.environmentId, series: shared.rollupSeries, external_customer_id: 'marker', bucket: '2026-07-04T05:00:00Z', event_count: 1 };
    await db('usage_rollups').insert(marker);
    await builder.build([shared.id]);
    expect((await fresh(shared)).rollupReadyAt).toBeInstanceOf(Date);
    expect(await db('usage_rollups').where({ series: shared.rollupSeries, external_customer_id: 'marker' }).count({ n: '*' })).toEqual([{ n: 1 }]);
    const digests = await newMeter('UNIQUE_COUNT', 'n', REGION_FILTER);
    await builder.build([digests.id]);
    expect(await db('usage_rollups').where({ series: shared.rollupSeries, external_customer_id: 'marker' }).count({ n: '*' })).toEqual([{ n: 0 }]);
    const meter = await fresh(digests);
    expect(meter.rollupReadyAt).toBeInstanceOf(Date);
    const q = { meter, externalCustomerId: 'c1', from: '2026-06-30T10:20:00.000000Z', to: '2026-07-03T00:00:00.000000Z', windowSize: 'DAY' as const };
    expect(usageView(await rolled.aggregate(db, SCOPE, q), q.from, q.to, q.windowSize)).toEqual(usageView(await raw.aggregate(db, SCOPE, q), q.from, q.to, q.windowSize));
  });

  it('does not use the rollup before it is built, nor with extra filters it cannot answer', async () => {
    const meter = early[1];
    expect(rollupCovers({ ...meter, rollupReadyAt: null }, undefined)).toBe(false);
    expect(rollupCovers(await fresh(meter), [{ key: 'tier', values: ['a'] }])).toBe(false);
    expect(rollupCovers(await fresh(meter), [{ key: 'region', values: ['eu'] }])).toBe(false);
    expect(rollupCovers(await fresh(meter), [{ key: 'region', values: ['us', 'eu'] }])).toBe(true);
  });

  it('a meter created through the service is built in the background, then read from its rollup', async () => {
    const service = new MeterService(db, meterStore, raw, rolled, builder);
    const meter = await service.create(SCOPE, { name: 'svc', eventName: 'api', aggregationType: 'SUM', aggregationField: 'n', filters: REGION_FILTER });
    const req = { externalCustomerId: 'c2', from: '2026-06-30T05:17:00.123456Z', to: '2026-07-03T20:00:00.000000Z', windowSize: 'DAY' as const };
    const before = await service.usage(SCOPE, meter.id, req);
    for (let i = 0; i < 100 && !(await fresh(meter)).rollupReadyAt; i += 1) await new Promise((res) => setTimeout(res, 50));
    expect((await fresh(meter)).rollupReadyAt).toBeInstanceOf(Date);
    expect(await service.usage(SCOPE, meter.id, req)).toEqual(before);
    expect(Number(before.value)).not.toBe(0);
  });

  it('on start, builds the meters left unbuilt (a crash mid-build, meters older than rollups)', async () => {
    const pending = await newMeter('MAX', 'n', [{ key: 'tier', values: ['a'] }]);
    const stale = { tenant_id: SCOPE.tenantId, environment_id: SCOPE.environmentId, series: pending.rollupSeries, external_customer_id: 'c0', event_count: 999, value_max: '999999' };
    await db('usage_rollups').insert({ ...stale, bucket: '2026-07-04T05:00:00Z' });
    await db('usage_rollup_minutes').insert({ ...stale, bucket: '2026-07-04T05:07:00Z' });
    const restarted = new RollupBuilder(db, meterStore, testLogger('rollups'));
    await restarted.start();
    for (let i = 0; i < 100 && !(await fresh(pending)).rollupReadyAt; i += 1) await new Promise((res) => setTimeout(res, 50));
    await restarted.stop();
    const meter = await fresh(pending);
    expect(meter.rollupReadyAt).toBeInstanceOf(Date);
    for (const [from, to] of [
      ['2026-06-30T00:00:00.000000Z', '2026-07-06T00:00:00.000000Z'],
      ['2026-07-04T04:30:30.000000Z', '2026-07-04T05:30:30.000000Z'],
    ]) {
      const q = { meter, externalCustomerId: 'c0', from, to, windowSize: 'HOUR' as const };
      expect(usageView(await rolled.aggregate(db, SCOPE, q), q.from, q.to, q.windowSize)).toEqual(usageView(await raw.aggregate(db, SCOPE, q), q.from, q.to, q.windowSize));
    }
  });

  it('cuts ranges into raw edges, whole minutes of the partial hours and whole hours', () => {
    expect(cutRange('2026-07-01T10:30:00.000000Z', '2026-07-04T02:00:00.000001Z')).toEqual({
      from: '2026-07-01T10:30:00.000000Z',
      mStart: '2026-07-01T10:30:00.000000Z',
      hStart: '2026-07-01T11:00:00.000000Z',
      hEnd: '2026-07-04T02:00:00.000000Z',
      mEnd: '2026-07-04T02:00:00.000000Z',
      to: '2026-07-04T02:00:00.000001Z',
    });
    expect(cutRange('2026-07-01T10:17:23.456789Z', '2026-07-04T02:42:10.000000Z')).toEqual({
      from: '2026-07-01T10:17:23.456789Z',
      mStart: '2026-07-01T10:18:00.000000Z',
      hStart: '2026-07-01T11:00:00.000000Z',
      hEnd: '2026-07-04T02:00:00.000000Z',
      mEnd: '2026-07-04T02:42:00.000000Z',
      to: '2026-07-04T02:42:10.000000Z',
    });
    expect(cutRange('2026-07-01T00:00:00.000000Z', '2026-07-02T00:00:00.000000Z')).toMatchObject({
      mStart: '2026-07-01T00:00:00.000000Z',
      hStart: '2026-07-01T00:00:00.000000Z',
      hEnd: '2026-07-02T00:00:00.000000Z',
      mEnd: '2026-07-02T00:00:00.000000Z',
    });
    // No whole hour: the whole minutes are one piece, across the hour boundary.
    expect(cutRange('2026-07-01T10:30:15.000000Z', '2026-07-01T11:20:45.000000Z')).toMatchObject({
      mStart: '2026-07-01T10:31:00.000000Z',
      hStart: '2026-07-01T10:31:00.000000Z',
      hEnd: '2026-07-01T10:31:00.000000Z',
      mEnd: '2026-07-01T11:20:00.000000Z',
    });
    // No whole minute: all raw.
    expect(cutRange('2026-07-01T10:00:00.000001Z', '2026-07-01T10:00:59.000000Z')).toMatchObject({
      mStart: '2026-07-01T10:00:00.000001Z',
      hStart: '2026-07-01T10:00:00.000001Z',
      hEnd: '2026-07-01T10:00:00.000001Z',
      mEnd: '2026-07-01T10:00:00.000001Z',
    });
  });
});
