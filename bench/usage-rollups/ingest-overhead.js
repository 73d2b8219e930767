#!/usr/bin/env node
// What the rollups add to storing a batch of usage events (ADR 0023): EventStore.storeBatch, the
// consumer's statement, timed on batches of BATCH events (one scope, 100 customers, spread over a
// month), in a fresh database, with meters of the events' name: none, then 4 (COUNT, SUM, MAX,
// LATEST: hour and minute rows), then the same plus one UNIQUE_COUNT (per distinct value and
// customer, a bitmap of the hour's minutes and one of the month's hours). Rounds are interleaved
// so that load from elsewhere hits each case alike.
//
//   npx tsc -b tsconfig.build.json
//   node bench/usage-rollups/ingest-overhead.js
//
// Options (env): BATCH (1000), BATCHES (20 per case and round), ROUNDS (3), SPREAD (month:
// timestamps all over the month, so nearly every event of a batch has its own (customer, hour)
// and (customer, minute) rollup rows, the worst case; hour: within one hour, hour rows shared by
// a customer's events of the batch, minute rows mostly not; minute: within one minute, as live
// traffic at a high rate (a batch spans well under a minute), minute rows shared too).
const os = require('node:os');
const { execSync } = require('node:child_process');
const { createDb, migrate } = require('@billstream/db');
const { ADMIN_URL, adminQuery, percentile } = require('../common');
const { EventStore } = require('../../services/ingestion-aggregator/dist/events/store');
const { EventPartitions } = require('../../services/ingestion-aggregator/dist/events/partitions');
const { migrations, SCHEMA } = require('../../services/ingestion-aggregator/dist/migrations');
const { ROLLUP_SERIES_OF_VALUES } = require('../../services/ingestion-aggregator/dist/meters/rollup-sql');

const BATCH = Number(process.env.BATCH || 1000);
const BATCHES = Number(process.env.BATCHES || 20);
const SPREAD = ['hour', 'minute'].includes(process.env.SPREAD) ? process.env.SPREAD : 'month';
const SPREAD_SECONDS = { month: 28 * 86_400, hour: 3600, minute: 60 }[SPREAD];
const ROUNDS = Number(process.env.ROUNDS || 3);
const silent = { info() {}, warn() {}, error() {}, debug() {}, child() { return silent; } };

async function main() {
  const cpu = execSync("grep -m1 'model name' /proc/cpuinfo | sed 's/.*: *//'").toString().trim();
  console.log(`cpu: ${cpu} (${os.cpus().length} cores); load: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; spread: ${SPREAD}`);
  const name = `bench_rollup_ingest_${Date.now()}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const db = createDb({ databaseUrl: url.toString(), schema: SCHEMA });
  try {
    await migrate(db, SCHEMA, migrations);
    const now = new Date();
    const month = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const partitions = new EventPartitions(db, silent);
    await partitions.load();
    await partitions.ensureAhead();
    const store = new EventStore();
    let seq = 0;
    const batchOf = (tenant) =>
      Array.from({ length: BATCH }, () => {
        seq += 1;
        return JSON.stringify({
          tenant_id: tenant,
          environment_id: 'production',
          event_id: `ev${seq}`,
          event_name: 'api_call',
          external_customer_id: `cust-${seq % 100}`,
          timestamp: new Date(month + ((seq * 7919) % SPREAD_SECONDS) * 1000).toISOString().replace('Z', '000Z'),
          properties: { tokens: seq % 97, user: `u${seq % 1000}`, region: seq % 3 === 0 ? 'eu' : 'us' },
          source: null,
          received_at: now.toISOString(),
        });
      });
    const meter = async (tenant, type, field) => {
      const t = new Date();
      await db('meters').insert({ id: `meter_${tenant}_${type}`, tenant_id: tenant, environment_id: 'production', name: type, event_name: 'api_call', aggregation_type: type, aggregation_field: field, filters: '[]', created_at: t, updated_at: t, rollup_ready_at: t, rollup_series: db.raw(ROLLUP_SERIES_OF_VALUES, [tenant, 'production', 'api_call', field, '[]']) });
    };
    // One tenant per case: no meters; 4 meters; 4 + UNIQUE_COUNT.
    const cases = { 'no meter': 't0', 'COUNT, SUM, MAX, LATEST': 't4', '+ UNIQUE_COUNT': 't5' };
    for (const [type, field] of [['COUNT', null], ['SUM', 'tokens'], ['MAX', 'tokens'], ['LATEST', 'tokens']]) {
      await meter('t4', type, field);
      await meter('t5', type, field);
    }
    await meter('t5', 'UNIQUE_COUNT', 'user');
    const times = Object.fromEntries(Object.keys(cases).map((c) => [c, []]));
    for (let round = 0; round < ROUNDS; round += 1) {
      for (let b = 0; b < BATCHES; b += 1) {
        for (const [label, tenant] of Object.entries(cases)) {
          const values = batchOf(tenant);
          const t = process.hrtime.bigint();
          await store.storeBatch(db, values, values.map(() => `${tenant}:production`));
          times[label].push(Number(process.hrtime.bigint() - t) / 1e6);
        }
      }
    }
    const base = percentile([...times['no meter']].sort((a, b) => a - b), 50);
    for (const [label, list] of Object.entries(times)) {
      list.sort((a, b) => a - b);
      const p50 = percentile(list, 50);
      console.log(
        `${label.padEnd(24)} batch of ${BATCH}: p50 ${p50.toFixed(1)} ms, p95 ${percentile(list, 95).toFixed(1)} ms ` +
          `(${((BATCH / p50) * 1000).toFixed(0)} events/s in one transaction; +${(((p50 - base) / base) * 100).toFixed(0)} % on the p50)`,
      );
    }
    console.log(`load after: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    await db.destroy();
    await adminQuery(`DROP DATABASE IF EXISTS ${name}`).catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
