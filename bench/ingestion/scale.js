/**
 * Storage, query and usage paths over a large events table (docs/ingestion-storage.md; the
 * 100,000,000-event figures of docs/adr/0051-beyond-one-postgres.md).
 *
 *   npx tsc -b tsconfig.build.json && ROWS=5000000 node bench/ingestion/scale.js
 *   ROWS=100000000 MONTHS=12 KEEP_DB=1 node bench/ingestion/scale.js   # then DB_NAME=<it> ingest.js
 *
 * Fills a fresh database (the aggregator's own migrations and monthly partitions) with ROWS events
 * over the MONTHS months up to the current hour, in time order as they arrive, 20 tenants
 * and 2,000 customers per tenant, with ids as clients make them (28 characters, random order),
 * their dedup keys and the per-hour and per-scope counters, using bulk SQL with every index in
 * place; it prints the load rate as the tables grow. Then it builds the rollups of two meters of
 * one tenant (a COUNT and a SUM, with the aggregator's RollupBuilder), reports the bytes on disk
 * of every table and index, and times (p50/p95 of 30 calls each, with the aggregator's own store
 * classes) the event query of one customer, the newest page of a whole tenant, a page at offset
 * 10,000, a one-day window of a tenant, a month of usage of one customer in daily windows from
 * the events and from the rollups, and the console's hourly counts.
 * Settings: ADMIN_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), ROWS
 * (5,000,000), MONTHS (3), KEEP_DB=1 (keep the database and print its name), DB_NAME (an existing
 * database filled before: only measure it).
 */
const { performance } = require('node:perf_hooks');
const { createDb, migrate } = require('@billstream/db');
const { createLogger } = require('@billstream/logger');
const { EventPartitions, EventStore, MeterStore, RollupBuilder, RollupUsageStore, UsageStore, eventScopeSql, migrations, SCHEMA } = require('@billstream/ingestion-aggregator');

const { ADMIN_URL, adminQuery: admin } = require('../common');
const { diskBytes, structureBytes } = require('./disk');

const ROWS = Number(process.env.ROWS || 5_000_000);
const MONTHS = Number(process.env.MONTHS || 3);
const KEEP_DB = process.env.KEEP_DB === '1';
const DB_NAME = process.env.DB_NAME || '';
const CHUNK = 250_000;
const TENANTS = 20;
const CUSTOMERS = 2000;

const now = new Date();
const monthStart = (back) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1));
const FIRST = monthStart(MONTHS - 1);
// Up to the current hour: the newest events are the latest received.
const END = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000);
// A whole month inside the data (the one before the current, unless there is only one).
const MONTH = monthStart(MONTHS > 1 ? 1 : 0);
const day = (n) => new Date(MONTH.getTime() + n * 86_400_000).toISOString();

async function timed(label, fn, runs = 30) {
  const ms = [];
  let last;
  for (let i = 0; i < runs; i += 1) {
    const t0 = performance.now();
    last = await fn(i);
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  const out = { label, p50_ms: Number(ms[Math.floor(runs / 2)].toFixed(1)), p95_ms: Number(ms[Math.floor(runs * 0.95)].toFixed(1)) };
  console.log(JSON.stringify({ ...out, sample: last }));
  return out;
}

/** ROWS events in time order over [FIRST, END), with their dedup keys and counters, CHUNK rows a statement. */
async function load(db) {
  const spanS = (END.getTime() - FIRST.getTime()) / 1000;
  const series = [];
  const t0 = performance.now();
  let mark = { rows: 0, at: t0 };
  const step = Math.max(CHUNK, Math.floor(ROWS / 20 / CHUNK) * CHUNK);
  for (let from = 0; from < ROWS; from += CHUNK) {
    const to = Math.min(ROWS, from + CHUNK) - 1;
    await db.raw(
      `WITH g AS MATERIALIZED (
         SELECT i, 'tenant-' || (i % ${TENANTS}) AS t, 'cust-' || ((i / ${TENANTS}) % ${CUSTOMERS}) AS c,
           'evt_' || substr(md5(i::text), 1, 24) AS id,
           timestamptz '${FIRST.toISOString()}' + make_interval(secs => i::float8 * ${spanS} / ${ROWS}) AS ts
         FROM generate_series(?::int, ?::int) i),
       k AS (INSERT INTO event_keys SELECT ${eventScopeSql('t', "'production'")}, id FROM g),
       h AS (INSERT INTO event_hours SELECT t, 'production', date_trunc('hour', ts, 'UTC'), count(*) FROM g GROUP BY 1, 3
             ON CONFLICT (tenant_id, environment_id, hour) DO UPDATE SET events = event_hours.events + excluded.events),
       s AS (INSERT INTO event_stats SELECT t, 'production', count(*), max(ts) FROM g GROUP BY 1
             ON CONFLICT (tenant_id, environment_id) DO UPDATE SET total_events = event_stats.total_events + excluded.total_events,
               last_event_at = greatest(event_stats.last_event_at, excluded.last_event_at))
       INSERT INTO events (tenant_id, environment_id, event_id, event_name, external_customer_id, customer_id, timestamp, properties, source, received_at)
       SELECT t, 'production', id, CASE WHEN i % 3 = 0 THEN 'storage' ELSE 'api_call' END, c, 'cust_' || c, ts,
         jsonb_build_object('tokens', i % 97, 'region', CASE WHEN i % 2 = 0 THEN 'eu' ELSE 'us' END), NULL, ts
       FROM g`,
      [from, to],
    );
    if ((to + 1) % step === 0 || to + 1 === ROWS) {
      const at = performance.now();
      const point = { rows: to + 1, rows_per_s: Math.round((to + 1 - mark.rows) / ((at - mark.at) / 1000)), elapsed_s: Math.round((at - t0) / 1000) };
      series.push(point);
      console.log(JSON.stringify({ load: point }));
      mark = { rows: to + 1, at };
    }
  }
  return { rows: ROWS, load_s: Math.round((performance.now() - t0) / 1000), rows_per_s_as_it_grows: series };
}

/** The COUNT and SUM meters of one tenant, their rollups built from its stored events (timed). */
async function meters(db, scope) {
  const store = new MeterStore();
  const existing = await db('meters').where({ tenant_id: scope.tenantId, name: 'bench calls' }).first('id');
  const ids = ['bench_calls', 'bench_tokens'];
  let build;
  if (!existing) {
    for (const [id, name, type, field] of [[ids[0], 'bench calls', 'COUNT', null], [ids[1], 'bench tokens', 'SUM', 'tokens']]) {
      const at = new Date();
      await store.insert(db, { id, ...scope, name, eventName: 'api_call', aggregationType: type, aggregationField: field, filters: [], createdAt: at, updatedAt: at, rollupReadyAt: null, rollupSeries: '' });
    }
    const t0 = performance.now();
    await new RollupBuilder(db, store, createLogger({ service: 'bench', level: 'warn' })).build(ids);
    const events = (await db('events').where({ ...{ tenant_id: scope.tenantId, environment_id: scope.environmentId }, event_name: 'api_call' }).count({ n: '*' }))[0].n;
    build = { tenant_events_counted: Number(events), rollup_build_s: Math.round((performance.now() - t0) / 1000) };
    console.log(JSON.stringify({ rollups: build }));
  }
  return { built: build, meters: await Promise.all(ids.map((id) => store.get(db, scope, id))) };
}

async function main() {
  const dbName = DB_NAME || `bench_scale_${Date.now().toString(36)}`;
  if (!DB_NAME) await admin(`CREATE DATABASE "${dbName}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${dbName}`;
  const db = createDb({ databaseUrl: url.toString(), schema: SCHEMA, poolMax: 4 });
  const report = { database: dbName, rows: ROWS, months: [FIRST.toISOString(), END.toISOString()] };
  try {
    await migrate(db, SCHEMA, migrations);
    if (!DB_NAME) {
      const partitions = new EventPartitions(db, createLogger({ service: 'bench', level: 'warn' }));
      await partitions.load();
      await partitions.ensureFor(Array.from({ length: MONTHS }, (_, i) => monthStart(MONTHS - 1 - i).toISOString()));
      report.load = await load(db);
      await db.raw('ANALYZE events; ANALYZE event_keys');
    }
    const scope = { tenantId: 'tenant-7', environmentId: 'production' };
    const built = await meters(db, scope);
    report.rollups = built.built;
    const pg = await db.client.acquireConnection();
    try {
      const stored = Number((await pg.query('SELECT sum(total_events)::bigint AS n FROM ingestion.event_stats')).rows[0].n);
      const parts = await diskBytes(pg);
      report.stored_events = stored;
      report.disk_gb = Object.fromEntries(Object.entries(parts).map(([k, b]) => [k, Number((b / 1e9).toFixed(2))]));
      report.bytes_per_event = Object.fromEntries(Object.entries(parts).map(([k, b]) => [k, Math.round(b / stored)]));
      report.structures_gb = (await structureBytes(pg)).slice(0, 12).map((s) => ({ ...s, bytes: undefined, gb: Number((s.bytes / 1e9).toFixed(2)) }));
    } finally {
      await db.client.releaseConnection(pg);
    }
    console.log(JSON.stringify(report, null, 2));

    const store = new EventStore();
    const usage = new UsageStore();
    const rollupUsage = new RollupUsageStore();
    const results = [];
    const customer = (i) => `cust-${(i * 37) % CUSTOMERS}`;
    results.push(await timed('query one customer, newest 50 + total_count', (i) =>
      store.query(db, scope, { externalCustomerId: customer(i) }, 50, 0).then((r) => ({ total: r.total, n: r.events.length }))));
    results.push(await timed('query one customer + event_name + one week', (i) =>
      store.query(db, scope, { externalCustomerId: customer(i), eventName: 'storage', from: day(0), to: day(7) }, 100, 0).then((r) => ({ total: r.total }))));
    results.push(await timed('query a tenant, one day, newest 100 + total_count', (i) =>
      store.query(db, scope, { from: day(i % 28), to: day(1 + (i % 28)) }, 100, 0).then((r) => ({ total: r.total }))));
    results.push(await timed('query a whole tenant, newest 50 + total_count (no filter)', () =>
      store.query(db, scope, {}, 50, 0).then((r) => ({ total: r.total })), 10));
    results.push(await timed('query a whole tenant, offset 10,000', () =>
      store.query(db, scope, {}, 50, 10_000).then((r) => ({ n: r.events.length })), 10));
    const month = { from: MONTH.toISOString(), to: monthStart(MONTHS > 1 ? 0 : -1).toISOString(), windowSize: 'DAY' };
    const adHoc = (type, field) => ({ id: 'meter_x', ...scope, name: 'm', eventName: 'api_call', aggregationType: type, aggregationField: field, filters: [], rollupReadyAt: null });
    for (const [type, field] of [['COUNT', null], ['SUM', 'tokens'], ['UNIQUE_COUNT', 'region']]) {
      results.push(await timed(`usage ${type} from the events, one customer, a month, DAY windows`, (i) =>
        usage.aggregate(db, scope, { meter: adHoc(type, field), externalCustomerId: customer(i), ...month }).then((r) => ({ total: r.total, windows: r.byWindow.size }))));
    }
    for (const meter of built.meters) {
      results.push(await timed(`usage ${meter.aggregationType} from the rollups, one customer, a month, DAY windows`, (i) =>
        rollupUsage.aggregate(db, scope, { meter, externalCustomerId: customer(i), ...month }).then((r) => ({ total: r.total, windows: r.byWindow.size }))));
    }
    for (const hours of [24, 720]) {
      results.push(await timed(`events per hour, a tenant, last ${hours} hours (console overview)`, () =>
        store.hourly(db, scope, new Date(Date.now() - hours * 3_600_000)).then((r) => ({ hours: r.length }))));
    }
    console.log(JSON.stringify({ queries: results.map(({ label, p50_ms, p95_ms }) => ({ label, p50_ms, p95_ms })) }, null, 2));
  } finally {
    await db.destroy();
    if (!KEEP_DB && !DB_NAME) await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    else console.log(JSON.stringify({ kept_database: dbName }));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
