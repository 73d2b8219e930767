/**
 * The machine's ceilings, measured in the same run as the bench that reads its figures against
 * them (issue #34): these VMs change speed by 1.5 times from hour to hour, so a figure means
 * something only next to what the same machine did in the same minutes.
 *
 * - `rawInsert`: event-shaped rows (the aggregator's key, a customer, a name, a timestamp, a
 *   JSON properties object) inserted straight into Postgres in batches of 1,000 from 2
 *   connections, into a table with a primary key and one index: the most rows/s any ingestion
 *   path on this Postgres could store. Also its Postgres CPU per row.
 * - `proxiedFloor`: the entitlement bench's floor (bench/entitlements/floor: a plain `node:http`
 *   server answering a check behind a minimal proxy that parses the JSON body and forwards it
 *   with undici), driven open loop at a rate: the floor of a proxied request, as CPU per request
 *   per process and as latency percentiles at that rate.
 *
 * `node bench/limits/ceilings.js` prints both (ROWS, RATE, SECONDS); the other benches require
 * this module and call them around their own measurement.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { Client } = require('pg');
const { ADMIN_URL, adminQuery, freePort, percentile, sleep } = require('../common');
const { leanClient } = require('../lean-client');
const { processCpu, postgresCpu } = require('./report');

const BATCH = 1000;

/** Rows/s of the raw insert of `rows` event-shaped rows, and Postgres' CPU µs per row. */
async function rawInsert({ rows = 200_000, connections = 2 } = {}) {
  const db = `bench_limits_${process.pid}_${Date.now().toString(36)}`;
  await adminQuery(`CREATE DATABASE "${db}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${db}`;
  const clients = [];
  try {
    for (let i = 0; i < connections; i += 1) {
      const c = new Client({ connectionString: url.toString() });
      await c.connect();
      clients.push(c);
    }
    await clients[0].query(`CREATE TABLE events (
      tenant_id text NOT NULL, environment_id text NOT NULL, event_id text NOT NULL,
      external_customer_id text NOT NULL, event_name text NOT NULL, ts timestamptz NOT NULL,
      properties jsonb NOT NULL, ingested_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, environment_id, event_id))`);
    await clients[0].query('CREATE INDEX events_customer_ts ON events (tenant_id, environment_id, external_customer_id, ts)');
    const batches = Math.ceil(rows / BATCH);
    let next = 0;
    const now = Date.now();
    const insertBatch = (c, b) => {
      const ids = [];
      const customers = [];
      const stamps = [];
      const props = [];
      for (let j = b * BATCH; j < Math.min(rows, (b + 1) * BATCH); j += 1) {
        ids.push(`evt_${j.toString(36).padStart(8, '0')}_${db}`);
        customers.push(`cust-${j % 10_000}`);
        stamps.push(new Date(now - (rows - j) * 10).toISOString());
        props.push(JSON.stringify({ tokens: j % 1000, model: 'small', region: 'eu' }));
      }
      return c.query(
        `INSERT INTO events (tenant_id, environment_id, event_id, external_customer_id, event_name, ts, properties)
         SELECT 'ten_bench', 'env_bench', i, c, 'api_call', t, p::jsonb
         FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[]) AS u (i, c, t, p)`,
        [ids, customers, stamps, props],
      );
    };
    const pgBefore = postgresCpu();
    const started = process.hrtime.bigint();
    await Promise.all(
      clients.map(async (c) => {
        for (let b = next++; b < batches; b = next++) await insertBatch(c, b);
      }),
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const pgSeconds = postgresCpu() - pgBefore;
    return { rows, seconds: round(seconds, 2), rows_per_s: Math.round(rows / seconds), postgres_cpu_us_per_row: round((pgSeconds * 1e6) / rows, 1) };
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    await adminQuery(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
  }
}

/** The entitlement bench's floor processes (bench/entitlements/floor): `upstream.js` or `proxy.js`. */
function child(script, env) {
  const proc = spawn(process.execPath, [path.join(__dirname, '../entitlements/floor', script)], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    proc.once('message', () => resolve(proc));
    proc.once('exit', (code) => reject(new Error(`a floor process exited (${code})`)));
  });
}

/**
 * The proxied floor at `rate` requests/s for `seconds`, open loop (each request sent at its
 * slot, its latency counted from the slot): p50/p99/max and CPU µs per request of the server
 * and the proxy.
 */
async function proxiedFloor({ rate = 1000, seconds = 10, warmupSeconds = 2 } = {}) {
  const serverPort = await freePort();
  const proxyPort = await freePort();
  const server = await child('upstream.js', { PORT: String(serverPort) });
  const proxy = await child('proxy.js', { PORT: String(proxyPort), TARGET: String(serverPort) });
  const client = leanClient(`http://127.0.0.1:${proxyPort}`, { headers: { 'content-type': 'application/json' }, connections: 64 });
  const body = JSON.stringify({ customer_id: 'cust_floor', feature_key: 'api_calls' });
  try {
    await openLoop(() => client.call('POST', '/v1/entitlements/check', body), rate, warmupSeconds);
    const before = { server: processCpu(server.pid), proxy: processCpu(proxy.pid) };
    const latencies = await openLoop(() => client.call('POST', '/v1/entitlements/check', body), rate, seconds);
    const after = { server: processCpu(server.pid), proxy: processCpu(proxy.pid) };
    const n = latencies.length;
    latencies.sort((a, b) => a - b);
    return {
      rate,
      requests: n,
      p50_ms: round(percentile(latencies, 50), 2),
      p99_ms: round(percentile(latencies, 99), 2),
      max_ms: round(latencies[n - 1], 2),
      cpu_us_per_request: { server: round(((after.server - before.server) * 1e6) / n, 1), proxy: round(((after.proxy - before.proxy) * 1e6) / n, 1) },
    };
  } finally {
    await client.close();
    server.kill('SIGKILL');
    proxy.kill('SIGKILL');
  }
}

/** Sends `send(slot)` at `rate`/s for `seconds` (`slot`: when it was due, performance.now()); answers each request's latency from its slot, in ms. */
async function openLoop(send, rate, seconds) {
  const total = Math.round(rate * seconds);
  const latencies = [];
  const inflight = new Set();
  const start = performance.now();
  let sent = 0;
  while (sent < total) {
    const now = performance.now();
    const due = Math.min(total, Math.floor(((now - start) * rate) / 1000) + 1);
    for (; sent < due; sent += 1) {
      const slot = start + (sent * 1000) / rate;
      const p = send(slot).then(
        () => latencies.push(performance.now() - slot),
        () => latencies.push(performance.now() - slot),
      );
      inflight.add(p);
      p.finally(() => inflight.delete(p));
    }
    await sleep(Math.max(0, start + (sent * 1000) / rate - performance.now()));
  }
  await Promise.all(inflight);
  return latencies;
}

function round(x, digits) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

module.exports = { rawInsert, proxiedFloor, openLoop };

if (require.main === module) {
  (async () => {
    const cpu = (fs.readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/) || [])[1];
    console.log(JSON.stringify({ date: new Date().toISOString(), cpu, load: fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ') }));
    console.log(JSON.stringify({ raw_insert: await rawInsert({ rows: Number(process.env.ROWS || 200_000) }) }));
    console.log(JSON.stringify({ proxied_floor: await proxiedFloor({ rate: Number(process.env.RATE || 1000), seconds: Number(process.env.SECONDS || 10) }) }));
  })().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
