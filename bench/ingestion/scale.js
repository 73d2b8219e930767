/**
 * Query and usage paths over a large events table (the storage plan of docs/ingestion-storage.md).
 *
 *   npx tsc -b tsconfig.build.json && ROWS=5000000 node bench/ingestion/scale.js
 *
 * Fills a fresh database (the aggregator's own migrations and monthly partitions) with ROWS events
 * over 3 months, 20 tenants and 2,000 customers per tenant, with their dedup keys, using bulk SQL;
 * then times (p50/p95 of 30 calls each, with the aggregator's own store classes) the event query
 * of one customer, the newest page of a whole tenant, a page at offset 10,000, a one-day window
 * of a tenant, and a month of usage of one customer in daily windows.
 * Settings: ADMIN_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), ROWS.
 */
const { performance } = require('node:perf_hooks');
const { createDb, migrate } = require('@billstream/db');
const { createLogger } = require('@billstream/logger');
const { EventPartitions, EventStore, UsageStore, migrations, SCHEMA } = require('@billstream/ingestion-aggregator');

const { ADMIN_URL, adminQuery: admin } = require('../common');
const ROWS = Number(process.env.ROWS || 5_000_000);
const CHUNK = 250_000;

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

async function main() {
  const dbName = `bench_scale_${Date.now().toString(36)}`;
  await admin(`CREATE DATABASE "${dbName}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${dbName}`;
  const db = createDb({ databaseUrl: url.toString(), schema: SCHEMA, poolMax: 4 });
  try {
    await migrate(db, SCHEMA, migrations);
    const partitions = new EventPartitions(db, createLogger({ service: 'bench', level: 'warn' }));
    await partitions.load();
    await partitions.ensureFor(['2026-08-01T00:00:00.000000Z', '2026-09-01T00:00:00.000000Z', '2026-10-01T00:00:00.000000Z']);
    const t0 = performance.now();
    const span = 92 * 86400; // seconds in Aug..Oct
    for (let from = 0; from < ROWS; from += CHUNK) {
      const to = Math.min(ROWS, from + CHUNK) - 1;
      await db.raw(
        `WITH g AS (
           SELECT i, 'tenant-' || (i % 20) AS t, 'cust-' || ((i / 20) % 2000) AS c,
             timestamptz '2026-08-01T00:00:00Z' + make_interval(secs => (i::bigint * 7919) % ${span}) AS ts
           FROM generate_series(?::int, ?::int) i),
         k AS (INSERT INTO event_keys SELECT t, 'production', 'e' || i, ts FROM g)
         INSERT INTO events (tenant_id, environment_id, event_id, event_name, external_customer_id, customer_id, timestamp, properties, source, received_at)
         SELECT t, 'production', 'e' || i, CASE WHEN i % 3 = 0 THEN 'storage' ELSE 'api_call' END, c, 'cust_' || c, ts,
           jsonb_build_object('tokens', i % 97, 'region', CASE WHEN i % 2 = 0 THEN 'eu' ELSE 'us' END), NULL, ts
         FROM g`,
        [from, to],
      );
      process.stdout.write(`\rloaded ${to + 1} rows`);
    }
    await db.raw('ANALYZE events; ANALYZE event_keys');
    const size = (await db.raw(`SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) AS s FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'ingestion' AND c.relkind IN ('r', 'i')`)).rows[0].s;
    console.log(`\n${JSON.stringify({ rows: ROWS, load_s: Number(((performance.now() - t0) / 1000).toFixed(1)), schema_size: size })}`);

    const store = new EventStore();
    const usage = new UsageStore();
    const scope = { tenantId: 'tenant-7', environmentId: 'production' };
    const results = [];
    results.push(await timed('query one customer, newest 50 + total_count', (i) =>
      store.query(db, scope, { externalCustomerId: `cust-${(i * 37) % 2000}` }, 50, 0).then((r) => ({ total: r.total, n: r.events.length }))));
    results.push(await timed('query one customer + event_name + one week', (i) =>
      store.query(db, scope, { externalCustomerId: `cust-${(i * 37) % 2000}`, eventName: 'storage', from: '2026-09-01T00:00:00Z', to: '2026-09-08T00:00:00Z' }, 100, 0).then((r) => ({ total: r.total }))));
    results.push(await timed('query a tenant, one day, newest 100 + total_count', (i) =>
      store.query(db, scope, { from: `2026-09-${String(1 + (i % 28)).padStart(2, '0')}T00:00:00Z`, to: `2026-09-${String(2 + (i % 28)).padStart(2, '0')}T00:00:00Z` }, 100, 0).then((r) => ({ total: r.total }))));
    results.push(await timed('query a whole tenant, newest 50 + total_count (no filter)', () =>
      store.query(db, scope, {}, 50, 0).then((r) => ({ total: r.total })), 10));
    results.push(await timed('query a whole tenant, offset 10,000', () =>
      store.query(db, scope, {}, 50, 10_000).then((r) => ({ n: r.events.length })), 10));
    const meter = (type, field) => ({ id: 'meter_x', tenantId: scope.tenantId, environmentId: scope.environmentId, name: 'm', eventName: 'api_call', aggregationType: type, aggregationField: field, filters: [] });
    for (const [type, field] of [['COUNT', null], ['SUM', 'tokens'], ['UNIQUE_COUNT', 'region']]) {
      results.push(await timed(`usage ${type}, one customer, September, DAY windows`, (i) =>
        usage.aggregate(db, scope, { meter: meter(type, field), externalCustomerId: `cust-${(i * 37) % 2000}`, from: '2026-09-01T00:00:00.000000Z', to: '2026-10-01T00:00:00.000000Z', windowSize: 'DAY' }).then((r) => ({ total: r.total, windows: r.byWindow.size }))));
    }
  } finally {
    await db.destroy();
    await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
