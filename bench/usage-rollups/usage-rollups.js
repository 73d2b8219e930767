#!/usr/bin/env node
// A month of usage of one customer with EVENTS events (10,000,000 by default), in DAY windows,
// through `POST /v1/meters/{id}/usage` of the ingestion-aggregator (its own process,
// dist/main.js, real Postgres and Kafka), for each aggregation: COUNT, SUM, MAX, UNIQUE_COUNT,
// LATEST (issue #14 item 2, ADR 0023). Events are written straight into Postgres with one SQL
// INSERT over generate_series; the five meters are then created through the API, so their
// rollups are built by the aggregator's own backfill (timed here), as for any meter created
// after its events. Each query is timed on the client, one in flight.
//
//   npx tsc -b tsconfig.build.json
//   KAFKA_BROKERS=127.0.0.1:9092 node bench/usage-rollups/usage-rollups.js
//
// Options (env):
//   EVENTS (10000000)    events of the customer in the month
//   USERS (1000)         distinct values of the UNIQUE_COUNT property (every hour holds all of them)
//   QUERIES (200)        timed queries per aggregation (even ones on whole days, odd ones on
//                        ranges starting and ending inside an hour and a minute: hour rows,
//                        minute rows of the partial hours, raw events of the partial minutes)
//   RAW_CHECK (1)        per aggregation, one unaligned query also answered by the raw scan (an
//                        extra filter the rollup cannot answer but every event passes): the two
//                        values must be equal; its time is the raw scan's (0: skip)
//   SETUP_DB             database to use; when it already holds the events and ready meters,
//                        the load and backfill are skipped (rerun the queries only)
//   KEEP_SETUP (0)       1: keep the database afterwards (its name is printed; pass it as SETUP_DB)
const os = require('node:os');
const { execSync } = require('node:child_process');
const { Client } = require('pg');
const { ADMIN_URL, adminQuery, freePort, launch, percentile, sleep, stopProcess, waitReady } = require('../common');

const EVENTS = Number(process.env.EVENTS || 10_000_000);
const USERS = Number(process.env.USERS || 1000);
const QUERIES = Number(process.env.QUERIES || 200);
const RAW_CHECK = process.env.RAW_CHECK !== '0';
const KEEP_SETUP = process.env.KEEP_SETUP === '1' || Boolean(process.env.SETUP_DB);
// 48 random hex characters: a service refuses a shorter INTERNAL_TOKEN (ADR 0034).
const TOKEN = require('node:crypto').randomBytes(24).toString('hex');
const HEADERS = { 'content-type': 'application/json', 'x-internal-token': TOKEN, 'x-tenant-id': 'tenant-a', 'x-environment-id': 'production' };
const CUSTOMER = 'cust-big';
const TYPES = [
  ['COUNT', undefined],
  ['SUM', 'tokens'],
  ['MAX', 'tokens'],
  ['UNIQUE_COUNT', 'user'],
  ['LATEST', 'tokens'],
];

async function post(url, body) {
  const res = await fetch(url, { method: 'POST', headers: HEADERS, body: JSON.stringify(body) });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** What autovacuum does after the inserts: statistics, and the visibility map (index-only scans). */
async function vacuumRollups(pg) {
  for (const table of ['usage_rollups', 'usage_rollup_minutes', 'usage_rollup_value_months', 'usage_rollup_value_hours']) await pg.query(`VACUUM ANALYZE ${table}`);
}

async function main() {
  const cpu = execSync("grep -m1 'model name' /proc/cpuinfo | sed 's/.*: *//'").toString().trim();
  console.log(`cpu: ${cpu} (${os.cpus().length} cores); load: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const name = process.env.SETUP_DB || `bench_usage_rollups_${Date.now()}`;
  if (!process.env.SETUP_DB) await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const proc = launch('ingestion-aggregator', {
    DATABASE_URL: url.toString(),
    KAFKA_BROKERS: process.env.KAFKA_BROKERS || '127.0.0.1:9092',
    KAFKA_TOPIC_PREFIX: `${name}.`,
    INTERNAL_TOKEN: TOKEN,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
  });
  const pg = new Client({ connectionString: url.toString() });
  try {
    await waitReady(base, proc);
    await pg.connect();
    await pg.query('SET search_path TO ingestion');

    // The month: this one (its events partition exists ahead), or the one the reused database holds.
    const held = (await pg.query('SELECT min("timestamp") AS first FROM events')).rows[0];
    const now = held.first ? new Date(held.first) : new Date();
    const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    const monthSeconds = (to - from) / 1000;

    let meters = (await pg.query('SELECT id, aggregation_type AS type, rollup_ready_at FROM meters')).rows;
    if (!held.first) {
      let t = Date.now();
      await pg.query(
        `INSERT INTO events (tenant_id, environment_id, event_id, event_name, external_customer_id, timestamp, properties, received_at)
         SELECT 'tenant-a', 'production', 'ev' || g, 'api_call', $1, $2::timestamptz + ((g::bigint * $3) / $4) * interval '1 second' + (g % 1000) * interval '1 microsecond',
                jsonb_build_object('tokens', g % 97, 'user', 'u' || (g % $5), 'region', CASE WHEN g % 3 = 0 THEN 'eu' ELSE 'us' END), now()
         FROM generate_series(0, $4 - 1) g`,
        [CUSTOMER, from.toISOString(), monthSeconds, EVENTS, USERS],
      );
      await pg.query('ANALYZE events');
      console.log(`loaded ${EVENTS} events of ${CUSTOMER} in ${from.toISOString().slice(0, 7)} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
      t = Date.now();
      for (const [type, field] of TYPES) {
        await post(`${base}/v1/meters`, { name: type.toLowerCase(), event_name: 'api_call', aggregation: { type, ...(field ? { field } : {}) } });
      }
      for (;;) {
        meters = (await pg.query('SELECT id, aggregation_type AS type, rollup_ready_at FROM meters')).rows;
        if (meters.every((m) => m.rollup_ready_at)) break;
        await sleep(500);
      }
      await vacuumRollups(pg);
      console.log(`5 meters created after the events; their rollups built by the backfill in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    } else if (meters.length < TYPES.length) {
      throw new Error(`SETUP_DB=${name} holds events but not ${TYPES.length} meters; use a fresh database`);
    } else if (meters.some((m) => !m.rollup_ready_at)) {
      // A database set up by an older version: its migrations marked meters to rebuild, which the aggregator does on start.
      const t = Date.now();
      while (meters.some((m) => !m.rollup_ready_at)) {
        await sleep(500);
        meters = (await pg.query('SELECT id, aggregation_type AS type, rollup_ready_at FROM meters')).rows;
      }
      await vacuumRollups(pg);
      console.log(`meters of an older version rebuilt by the aggregator on start in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    }
    const rollupRows = (
      await pg.query(`SELECT (SELECT count(*) FROM usage_rollups) AS hours, (SELECT count(*) FROM usage_rollup_minutes) AS minutes,
        (SELECT count(*) FROM usage_rollup_value_months) AS months, (SELECT count(*) FROM usage_rollup_value_hours) AS value_hours`)
    ).rows[0];
    console.log(
      `rollup rows: ${rollupRows.hours} (series, customer, hour), ${rollupRows.minutes} (series, customer, minute); ` +
        `distinct-value rows: ${rollupRows.months} (series, customer, month, value: a bitmap of the month's hours), ` +
        `${rollupRows.value_hours} (series, customer, hour, value: a bitmap of the hour's minutes)`,
    );

    const monthStart = from.getTime();
    const monthEnd = to.getTime();
    /** Query i: even ones on whole days, odd ones cut inside the first and last hours. */
    const rangeOf = (i) => {
      const cut = i % 2 === 0 ? 0 : 60_000 + ((i * 7919) % 3_000_000);
      return { start_time: new Date(monthStart + cut).toISOString(), end_time: new Date(monthEnd - cut).toISOString() };
    };
    const results = [];
    for (const m of meters.sort((a, b) => TYPES.findIndex(([t]) => t === a.type) - TYPES.findIndex(([t]) => t === b.type))) {
      const body = (i) => ({ external_customer_id: CUSTOMER, window_size: 'DAY', ...rangeOf(i) });
      for (let i = 0; i < 5; i += 1) await post(`${base}/v1/meters/${m.id}/usage`, body(i)); // warm-up
      const times = { all: [], whole: [], cut: [] };
      let answer;
      for (let i = 0; i < QUERIES; i += 1) {
        const t = process.hrtime.bigint();
        const res = await post(`${base}/v1/meters/${m.id}/usage`, body(i));
        const ms = Number(process.hrtime.bigint() - t) / 1e6;
        times.all.push(ms);
        times[i % 2 === 0 ? 'whole' : 'cut'].push(ms);
        if (i === 0) answer = res;
        if (res.windows.length !== Math.round((monthEnd - monthStart) / 86_400_000)) throw new Error(`${m.type}: ${res.windows.length} windows`);
      }
      for (const k of Object.keys(times)) times[k].sort((a, b) => a - b);
      const row = {
        type: m.type,
        value: answer.value,
        p50: percentile(times.all, 50),
        p95: percentile(times.all, 95),
        p99: percentile(times.all, 99),
        p95Whole: percentile(times.whole, 95),
        p95Cut: percentile(times.cut, 95),
      };
      results.push(row);
      const f = (x) => x.toFixed(1);
      console.log(
        `${m.type.padEnd(12)} value ${answer.value}: p50 ${f(row.p50)} ms, p95 ${f(row.p95)} ms, p99 ${f(row.p99)} ms ` +
          `(p95 whole days ${f(row.p95Whole)} ms, cut ranges ${f(row.p95Cut)} ms) over ${QUERIES} queries`,
      );
    }
    // The raw checks after every timed query: a scan of 10 M rows empties the caches, and
    // would otherwise slow down the next aggregation's timed queries.
    if (RAW_CHECK) {
      for (const m of meters) {
        const q = { external_customer_id: CUSTOMER, window_size: 'DAY', ...rangeOf(1) };
        const rolled = await post(`${base}/v1/meters/${m.id}/usage`, q);
        const t = process.hrtime.bigint();
        // An extra filter the rollup cannot answer (the meter has none on region) that every event passes: the raw scan.
        const scanned = await post(`${base}/v1/meters/${m.id}/usage`, { ...q, filter_values: { region: ['eu', 'us'] } });
        const rawMs = Number(process.hrtime.bigint() - t) / 1e6;
        if (JSON.stringify(scanned) !== JSON.stringify(rolled)) throw new Error(`${m.type}: rollup ${JSON.stringify(rolled).slice(0, 300)} != raw ${JSON.stringify(scanned).slice(0, 300)}`);
        console.log(`${m.type.padEnd(12)} raw scan of a cut query: ${rawMs.toFixed(1)} ms, the same answer as the rollup`);
      }
    }
    console.log(`worst p95: ${Math.max(...results.map((r) => r.p95)).toFixed(1)} ms (goal < 50 ms); load after: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    await pg.end().catch(() => undefined);
    await stopProcess(proc);
    if (KEEP_SETUP) console.log(`kept the database: SETUP_DB=${name}`);
    else await adminQuery(`DROP DATABASE IF EXISTS ${name}`).catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
