#!/usr/bin/env node
// The aggregator's internal usage batch (POST /internal/v1/usage/batch) against one call per
// (customer, meter) (POST /v1/meters/{id}/usage), on the billing bench's data shape: 10,000
// customers, 1,000,000 events in one month, 2 meters (SUM of a property, COUNT). A batch is
// 200 customers x 2 meters = 400 queries (what the period job asks per batch of subscriptions).
// The aggregator runs as its own process (dist/main.js, real Postgres and Kafka); events are
// written with one SQL INSERT (the usage read does not care how they were stored).
//
//   npx tsc -b tsconfig.build.json
//   KAFKA_BROKERS=127.0.0.1:9092 node bench/usage-batch/usage-batch.js
//
// Options (env): CUSTOMERS (10000), EVENTS (1000000), BATCH (200), RUNS (3), BATCHES (10: batches timed per run).
const os = require('node:os');
const { execSync } = require('node:child_process');
const { Client } = require('pg');
const { ADMIN_URL, adminQuery, freePort, launch, waitReady, stopProcess } = require('../common');

const CUSTOMERS = Number(process.env.CUSTOMERS || 10000);
const EVENTS = Number(process.env.EVENTS || 1000000);
const BATCH = Number(process.env.BATCH || 200);
const RUNS = Number(process.env.RUNS || 3);
const BATCHES = Number(process.env.BATCHES || 10);
// 48 random hex characters: a service refuses a shorter INTERNAL_TOKEN (ADR 0034).
const TOKEN = require('node:crypto').randomBytes(24).toString('hex');
const HEADERS = { 'content-type': 'application/json', 'x-internal-token': TOKEN, 'x-tenant-id': 'tenant-a', 'x-environment-id': 'production' };

async function post(url, body) {
  const res = await fetch(url, { method: 'POST', headers: HEADERS, body: JSON.stringify(body) });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function main() {
  const cpu = execSync("lscpu | grep 'Model name' | sed 's/.*: *//'").toString().trim();
  console.log(`cpu: ${cpu}; load: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const name = `bench_usage_batch_${Date.now()}`;
  await adminQuery(`CREATE DATABASE ${name}`);
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
    // This month (its partition exists: the partition manager creates the months ahead).
    const now = new Date();
    const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    let t = Date.now();
    await pg.query(
      `INSERT INTO events (tenant_id, environment_id, event_id, event_name, external_customer_id, timestamp, properties, received_at)
       SELECT 'tenant-a', 'production', 'ev' || g, 'api_call', 'cust-' || (g % $1), $2::timestamptz + (g % 2500000) * interval '1 second',
              jsonb_build_object('tokens', g % 97, 'region', CASE WHEN g % 3 = 0 THEN 'eu' ELSE 'us' END), now()
       FROM generate_series(1, $3) g`,
      [CUSTOMERS, from, EVENTS],
    );
    await pg.query('ANALYZE events');
    console.log(`loaded ${EVENTS} events of ${CUSTOMERS} customers in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    const sum = await post(`${base}/v1/meters`, { name: 'tokens', event_name: 'api_call', aggregation: { type: 'SUM', field: 'tokens' }, filters: [{ key: 'region', values: ['eu', 'us'] }] });
    const count = await post(`${base}/v1/meters`, { name: 'calls', event_name: 'api_call', aggregation: { type: 'COUNT' } });

    const batchOf = (b) =>
      Array.from({ length: BATCH }, (_, i) => `cust-${(b * BATCH + i) % CUSTOMERS}`).flatMap((c) => [
        { meter_id: sum.id, external_customer_id: c, start_time: from, end_time: to },
        { meter_id: count.id, external_customer_id: c, start_time: from, end_time: to, filter_values: { region: ['eu'] } },
      ]);

    // Correctness on the first batch: the batch answers what the single endpoint answers.
    const first = batchOf(0);
    const answered = (await post(`${base}/internal/v1/usage/batch`, { queries: first })).values;
    for (let i = 0; i < first.length; i += 1) {
      const { meter_id: m, ...rest } = first[i];
      const single = await post(`${base}/v1/meters/${m}/usage`, rest);
      if (single.value !== answered[i].value) throw new Error(`query ${i}: batch ${answered[i].value}, single ${single.value}`);
    }
    console.log(`first batch checked against the single endpoint: ${first.length} of ${first.length} values equal`);

    const results = [];
    for (let run = 1; run <= RUNS; run += 1) {
      const load = os.loadavg()[0].toFixed(2);
      t = Date.now();
      for (let b = 0; b < BATCHES; b += 1) await post(`${base}/internal/v1/usage/batch`, { queries: batchOf(run * BATCHES + b) });
      const batchMs = (Date.now() - t) / BATCHES;
      t = Date.now();
      for (let b = 0; b < BATCHES; b += 1) {
        const queries = batchOf(run * BATCHES + b + 17);
        // 8 at a time, as a client with a connection pool would.
        for (let i = 0; i < queries.length; i += 8) {
          await Promise.all(queries.slice(i, i + 8).map(({ meter_id: m, ...rest }) => post(`${base}/v1/meters/${m}/usage`, rest)));
        }
      }
      const singleMs = (Date.now() - t) / BATCHES;
      results.push({ run, load, batchMs, singleMs });
      console.log(`run ${run} (load ${load}): one batch of ${BATCH * 2} queries ${batchMs.toFixed(1)} ms; the same as ${BATCH * 2} single calls (8 in flight) ${singleMs.toFixed(1)} ms`);
    }
    const worst = (k) => Math.max(...results.map((r) => r[k]));
    console.log(`worst of ${RUNS}: batch ${worst('batchMs').toFixed(1)} ms, single calls ${worst('singleMs').toFixed(1)} ms per ${BATCH * 2} queries`);
    const per10k = (worst('batchMs') * (10000 / BATCH)) / 1000;
    console.log(`10,000 subscriptions (${10000 / BATCH} batches) at the worst batch time: ${per10k.toFixed(1)} s of usage reads`);

    // The plan of one batch statement (SUM meter, 200 customers), as UsageStore.aggregateMany writes it,
    // and, for comparison, of the `external_customer_id = ANY(...) GROUP BY external_customer_id` form.
    const customers = Array.from({ length: BATCH }, (_, i) => `cust-${i * 37}`);
    const numeric = "CASE WHEN kind = 'number' THEN raw::numeric WHEN kind = 'string' AND raw ~ '^-{0,1}[0-9]+([.][0-9]+){0,1}$' THEN raw::numeric END";
    const source = (customerCondition, range) => `
           SELECT external_customer_id, "timestamp", event_id, properties ->> 'tokens' AS raw, jsonb_typeof(properties -> 'tokens') AS kind
           FROM events
           WHERE tenant_id = 'tenant-a' AND environment_id = 'production' AND ${customerCondition} AND event_name = 'api_call'
             AND ${range} AND properties ->> 'region' = ANY('{eu,us}'::text[])`;
    const plans = {
      'LATERAL over unnest (what aggregateMany runs)': [
        `SELECT q.i, a.value
         FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) WITH ORDINALITY AS q(customer, t_from, t_to, i)
         CROSS JOIN LATERAL (SELECT sum(${numeric}) AS value FROM (${source('external_customer_id = q.customer', '"timestamp" >= q.t_from AND "timestamp" < q.t_to')}) e) a`,
        [customers, customers.map(() => from), customers.map(() => to)],
      ],
      'ANY + GROUP BY (one range per statement)': [
        `SELECT external_customer_id, sum(${numeric}) AS value FROM (${source('external_customer_id = ANY($1::text[])', '"timestamp" >= $2 AND "timestamp" < $3')}) e
         GROUP BY external_customer_id`,
        [customers, from, to],
      ],
    };
    for (const [label, [sql, params]] of Object.entries(plans)) {
      for (let i = 0; i < 2; i += 1) await pg.query(sql, params); // warm the cache alike for both
      const plan = await pg.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`, params);
      console.log(`EXPLAIN ${label}, ${BATCH} customers:`);
      console.log(plan.rows.map((r) => `  ${r['QUERY PLAN'].replace(/'{cust-[^}]*}'/g, "'{cust-0,cust-37,...}'")}`).join('\n'));
    }
  } finally {
    await pg.end().catch(() => undefined);
    await stopProcess(proc);
    await adminQuery(`DROP DATABASE IF EXISTS ${name}`).catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
