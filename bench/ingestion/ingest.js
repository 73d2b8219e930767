/**
 * Usage event ingestion: throughput and visibility latency, gateway -> Kafka -> aggregator -> Postgres.
 *
 *   npx tsc -b tsconfig.build.json && KAFKA_BROKERS=127.0.0.1:9092 node bench/ingestion/ingest.js
 *
 * Starts the gateway and the ingestion-aggregator as separate processes (their dist/main.js,
 * exactly as deployed) on a fresh Postgres database and the given Kafka broker (topics under a
 * unique prefix), then:
 *   1. throughput: CONCURRENCY clients send bulk requests of 1,000 events for DURATION_S seconds;
 *      accepted/s (202s), stored/s (rows committed, read from ingestion.event_stats every second)
 *      and the time until every accepted event is stored; gateway RSS sampled every 500 ms;
 *   2. latency: RATE events/s in bulks of 100 for LATENCY_S seconds; for each request the time
 *      from its 202 until all its events are committed (polled every 10 ms in Postgres, the table
 *      the query endpoint reads), p50/p95/p99; a sample is checked through POST /v1/events/query.
 * Issue #34: the raw insert ceiling (bench/limits) is measured before and after, on the same
 * machine in the same minutes; the throughput phase reports stored/s as a ratio to it, the CPU µs
 * per stored event of each process (gateway, aggregator, Postgres, Kafka) from the first send
 * until every accepted event is stored, Postgres' statements by execution time per event, and the
 * bytes on disk per stored event (events and their indexes, dedup keys, counters, rollups).
 * METERS (2: a COUNT and a SUM of the events) exist while it runs, so the rollups are kept as in
 * use. TOTAL_EVENTS=<n> sends that many events instead of for DURATION_S (the size at scale) and
 * LATENCY_S=0 skips the visibility phase.
 * PROFILE=gateway|ingestion-aggregator runs that process with --cpu-prof and prints its top
 * self-time functions. AGGREGATOR_LOG_FILE=<path> keeps the aggregator's info log (one line per
 * stored batch, with its size and duration). Results go to stdout as JSON (copy them to README.md).
 *
 * Settings: ADMIN_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres),
 * KAFKA_BROKERS (default 127.0.0.1:9092), DURATION_S (60), CONCURRENCY (6), RATE (5000),
 * LATENCY_S (30), KAFKA_PARTITIONS (4), METERS (2), TOTAL_EVENTS (unset), CEILING (1; 0 skips it),
 * DB_NAME (an existing database kept by `scale.js KEEP_DB=1`: ingest into it and keep it).
 */
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { Pool } = require('undici');
const { KafkaBus, TOPICS } = require('@billstream/bus');
const { createLogger } = require('@billstream/logger');
const { performance } = require('node:perf_hooks');

const { cpuSeconds, coresBusy, ADMIN_URL, adminQuery: admin, percentile, sleep, freePort, waitReady, stopProcess, summarizeProfile } = require('../common');
const launch = (name, env, profileDir) => require('../common').launch(name, env, PROFILE === name ? profileDir : undefined);
const KAFKA_BROKERS = process.env.KAFKA_BROKERS || '127.0.0.1:9092';
const DURATION_S = Number(process.env.DURATION_S || 60);
const CONCURRENCY = Number(process.env.CONCURRENCY || 6);
const RATE = Number(process.env.RATE || 5000);
const LATENCY_S = Number(process.env.LATENCY_S || 30);
const PARTITIONS = process.env.KAFKA_PARTITIONS || '4';
const PROFILE = process.env.PROFILE || '';
const METERS = Number(process.env.METERS ?? 2);
const TOTAL_EVENTS = Number(process.env.TOTAL_EVENTS || 0);
const CEILING = process.env.CEILING !== '0';
const { rawInsert } = require('../limits/ceilings');
const { diskBytes } = require('./disk');
/** An existing database (`scale.js` with KEEP_DB=1) to ingest into, kept afterwards; unset: a fresh one. */
const DB_NAME = process.env.DB_NAME || '';
// Event ids unique across runs into one kept database.
const RUN_TAG = DB_NAME ? `r${Date.now().toString(36)}` : '';
const { cpuMeter, ratio, cpuModel, statements } = require('../limits/report');
const TENANT = 'bench-tenant';
const ENV = 'production';



function rssMb(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
    return kb / 1024;
  } catch {
    return 0;
  }
}

/** A bulk body of `count` events with unique ids `${prefix}-${i}` (built as a string: the client stays cheap). */
function bulkBody(prefix, count, customer, baseMs) {
  const parts = new Array(count);
  for (let i = 0; i < count; i += 1) {
    const ts = new Date(baseMs + i).toISOString();
    parts[i] = `{"event_id":"${prefix}-${i}","event_name":"api_call","external_customer_id":"${customer ?? `c${i % 500}`}","timestamp":"${ts}","properties":{"tokens":${i % 97},"model":"m${i % 5}","region":"eu"}}`;
  }
  return `{"events":[${parts.join(',')}]}`;
}

async function main() {
  const ceilingBefore = CEILING ? await rawInsert() : undefined;
  const dbName = DB_NAME || `bench_ingest_${Date.now().toString(36)}`;
  if (!DB_NAME) await admin(`CREATE DATABASE "${dbName}"`);
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const databaseUrl = dbUrl.toString();
  const prefix = `bench-${Date.now().toString(36)}.`;
  const key = `bsk_bench_${randomBytes(18).toString('base64url')}`;
  const internalToken = randomBytes(24).toString('hex');
  const [gwPort, aggPort] = [await freePort(), await freePort()];
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billstream-prof-'));
  const common = {
    DATABASE_URL: databaseUrl,
    KAFKA_BROKERS,
    KAFKA_TOPIC_PREFIX: prefix,
    KAFKA_PARTITIONS: PARTITIONS,
    INTERNAL_TOKEN: internalToken,
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
  };
  const aggLog = process.env.AGGREGATOR_LOG_FILE;
  const aggregator = launch(
    'ingestion-aggregator',
    { ...common, PORT: String(aggPort), ...(aggLog ? { LOG_LEVEL: 'info' } : {}) },
    profileDir,
  );
  if (aggLog) aggregator.child.stdout.pipe(fs.createWriteStream(aggLog));
  const aggUrl = `http://127.0.0.1:${aggPort}`;
  await waitReady(aggUrl, aggregator);
  const unused = 'http://127.0.0.1:9';
  const gateway = launch(
    'gateway',
    {
      ...common,
      PORT: String(gwPort),
      CUSTOMER_SERVICE_URL: unused,
      WALLET_SERVICE_URL: unused,
      WEBHOOK_SERVICE_URL: unused,
      BILLING_SERVICE_URL: unused,
      INGESTION_SERVICE_URL: aggUrl,
      BOOTSTRAP_API_KEY: key,
      BOOTSTRAP_TENANT_ID: TENANT,
      BOOTSTRAP_ENVIRONMENT_ID: ENV,
      RATE_LIMIT_RPS: '100000',
      RATE_LIMIT_BURST: '100000',
    },
    profileDir,
  );
  const gwUrl = `http://127.0.0.1:${gwPort}`;
  await waitReady(gwUrl, gateway);

  const pool = new Pool(gwUrl, { connections: 64, keepAliveTimeout: 30000 });
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const post = async (p, body) => {
    const res = await pool.request({ path: p, method: 'POST', headers, body });
    const text = await res.body.text();
    return { status: res.statusCode, text };
  };
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  const storedCount = async () => {
    const { rows } = await pg.query('SELECT coalesce(sum(total_events), 0)::bigint AS n FROM ingestion.event_stats');
    return Number(rows[0].n);
  };

  // The 500 bench customers exist (customer.created on customer-events), so events resolve customer_id.
  const bus = new KafkaBus({ brokers: KAFKA_BROKERS.split(','), clientId: 'bench', topicPrefix: prefix, logger: createLogger({ service: 'bench', level: 'warn' }) });
  await bus.start();
  await bus.publish(
    TOPICS.customerEvents,
    Array.from({ length: 500 }, (_, i) => {
      const event = {
        id: `evt_bench${i}`,
        type: 'customer.created',
        tenant_id: TENANT,
        environment_id: ENV,
        user_id: 'bench',
        occurred_at: new Date().toISOString(),
        payload: { customer: { id: `cust_bench${i}`, external_id: `c${i}`, tenant_id: TENANT, environment_id: ENV } },
      };
      return { key: event.payload.customer.id, value: JSON.stringify(event), headers: { 'message-id': event.id } };
    }),
  );
  await bus.stop();
  for (;;) {
    const { rows } = await pg.query('SELECT count(*)::int AS n FROM ingestion.customers');
    if (rows[0].n === 500) break;
    await sleep(200);
  }

  const meterBodies = [
    { name: 'API calls', event_name: 'api_call', aggregation: { type: 'COUNT' } },
    { name: 'Tokens', event_name: 'api_call', aggregation: { type: 'SUM', field: 'tokens' } },
    { name: 'Models', event_name: 'api_call', aggregation: { type: 'UNIQUE_COUNT', field: 'model' } },
  ].slice(0, METERS);
  for (const body of meterBodies) {
    const res = await post('/v1/meters', JSON.stringify(body));
    if (res.status !== 201) throw new Error(`meter: ${res.status} ${res.text}`);
  }

  // Warm-up (JIT, connections, partitions).
  const storedBefore = await storedCount();
  for (let i = 0; i < 5; i += 1) await post('/v1/events/bulk', bulkBody(`${RUN_TAG}warm-${i}`, 1000, null, Date.UTC(2026, 10, 1)));
  while ((await storedCount()) - storedBefore < 5000) await sleep(100);
  const baseStored = await storedCount();

  // 1. Throughput.
  let accepted = 0;
  const refused = {};
  const requestMs = [];
  let maxRss = 0;
  const rssTimer = setInterval(() => {
    maxRss = Math.max(maxRss, rssMb(gateway.child.pid));
  }, 500);
  const storedSeries = [];
  const pids = { gateway: gateway.child.pid, aggregator: aggregator.child.pid, client: process.pid };
  const cpuBefore = cpuSeconds(pids);
  const meter = cpuMeter({ gateway: gateway.child.pid, aggregator: aggregator.child.pid });
  const pgStatements = await statements(ADMIN_URL);
  await pgStatements.reset();
  // WAL written by the whole cluster while storing (nothing else writes during the bench).
  const walAt = async () => (await pg.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
  const walBefore = await walAt();
  const started = Date.now();
  const endAt = TOTAL_EVENTS > 0 ? Infinity : started + DURATION_S * 1000;
  let sent = 0;
  const storedTimer = setInterval(async () => {
    storedSeries.push({ t: (Date.now() - started) / 1000, stored: (await storedCount()) - baseStored });
  }, 1000);
  let seq = 0;
  const client = async () => {
    while (Date.now() < endAt && (TOTAL_EVENTS === 0 || sent < TOTAL_EVENTS)) {
      sent += 1000;
      seq += 1;
      const body = bulkBody(`${RUN_TAG}t${seq}`, 1000, null, Date.UTC(2026, 10, 1) + seq * 1000);
      const t0 = performance.now();
      const res = await post('/v1/events/bulk', body);
      requestMs.push(performance.now() - t0);
      if (res.status === 202) accepted += 1000;
      else refused[res.status] = (refused[res.status] || 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, client));
  const sendSeconds = (Date.now() - started) / 1000;
  const cores = coresBusy(cpuBefore, cpuSeconds(pids), sendSeconds);
  const storedAtSendEnd = (await storedCount()) - baseStored;
  while ((await storedCount()) - baseStored < accepted) await sleep(100);
  const drainSeconds = (Date.now() - started) / 1000;
  const cpuPerEvent = meter.perOp(accepted);
  const byStatement = await pgStatements.top(dbName, accepted, 6);
  const walBytes = Number((await pg.query('SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint AS b', [await walAt(), walBefore])).rows[0].b);
  clearInterval(storedTimer);
  clearInterval(rssTimer);
  requestMs.sort((a, b) => a - b);
  const throughput = {
    duration_s: Number(sendSeconds.toFixed(1)),
    concurrency: CONCURRENCY,
    accepted_events: accepted,
    refused_requests_by_status: refused,
    accepted_per_s: Math.round(accepted / sendSeconds),
    stored_during_send: storedAtSendEnd,
    stored_per_s_during_send: Math.round(storedAtSendEnd / sendSeconds),
    all_stored_after_s: Number(drainSeconds.toFixed(1)),
    stored_per_s_until_all_stored: Math.round(accepted / drainSeconds),
    bulk_request_ms: { p50: percentile(requestMs, 50), p99: percentile(requestMs, 99) },
    gateway_max_rss_mb: Math.round(maxRss),
    cores_busy_during_send: cores,
    stored_series: storedSeries.filter((_, i) => i % 10 === 9),
  };
  console.log(JSON.stringify({ throughput }, null, 2));
  const stored = await storedCount();
  const disk = await diskBytes(pg);
  const limits = {
    cpu: cpuModel(),
    meters: METERS,
    stored_events: stored,
    cpu_us_per_stored_event: cpuPerEvent,
    postgres_statements: byStatement,
    wal_bytes_per_stored_event: Math.round(walBytes / accepted),
    bytes_per_stored_event: Object.fromEntries([...Object.entries(disk), ['total', Object.values(disk).reduce((a, b) => a + b, 0)]].map(([k, b]) => [k, Math.round(b / stored)])),
  };
  console.log(JSON.stringify({ limits }, null, 2));

  if (LATENCY_S > 0) {
    // A kept database holds this tenant's events of earlier runs too: statistics of now, so the poll below reads its customers' index range.
    if (DB_NAME) await pg.query('ANALYZE ingestion.events');
    // 2. Visibility latency at RATE events/s (bulks of 100).
    const perRequest = 100;
    const intervalMs = (1000 * perRequest) / RATE;
    const pending = new Map();
    const latencies = [];
    const latencyRefused = {};
    let latencyDone = false;
    const poller = (async () => {
      for (;;) {
        if (pending.size > 0) {
          const { rows } = await pg.query(
            `SELECT external_customer_id AS c, count(*)::int AS n FROM ingestion.events
             WHERE tenant_id = $1 AND environment_id = $2 AND external_customer_id = ANY($3::text[]) GROUP BY 1`,
            [TENANT, ENV, [...pending.keys()]],
          );
          const now = performance.now();
          for (const r of rows) {
            const acceptedAt = pending.get(r.c);
            if (acceptedAt !== undefined && r.n === perRequest) {
              latencies.push(now - acceptedAt);
              pending.delete(r.c);
            }
          }
        } else if (latencyDone) {
          return;
        }
        await sleep(10);
      }
    })();
    const sends = [];
    const latencyStart = performance.now();
    for (let i = 0; performance.now() - latencyStart < LATENCY_S * 1000; i += 1) {
      const due = latencyStart + i * intervalMs;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const customer = `${RUN_TAG}lat-${i}`;
      sends.push(
        post('/v1/events/bulk', bulkBody(`${RUN_TAG}lat${i}`, perRequest, customer, Date.UTC(2026, 10, 2) + i * 1000)).then((res) => {
          if (res.status === 202) pending.set(customer, performance.now());
          else latencyRefused[res.status] = (latencyRefused[res.status] || 0) + 1;
        }),
      );
    }
    await Promise.all(sends);
    const latencySend = (performance.now() - latencyStart) / 1000;
    latencyDone = true;
    await poller;
    latencies.sort((a, b) => a - b);
    const sample = await post('/v1/events/query', JSON.stringify({ external_customer_id: `${RUN_TAG}lat-0`, page_size: 1000 }));
    const latency = {
      target_events_per_s: RATE,
      achieved_events_per_s: Math.round((latencies.length * perRequest) / latencySend),
      requests: latencies.length,
      refused_requests_by_status: latencyRefused,
      accepted_to_visible_ms: {
        p50: Math.round(percentile(latencies, 50)),
        p95: Math.round(percentile(latencies, 95)),
        p99: Math.round(percentile(latencies, 99)),
        max: Math.round(latencies[latencies.length - 1]),
      },
      query_sample_total_count: JSON.parse(sample.text).total_count,
    };
    console.log(JSON.stringify({ latency }, null, 2));
  }

  await pg.end();
  await pool.close();
  await stopProcess(gateway);
  await stopProcess(aggregator);
  if (PROFILE) console.log(JSON.stringify({ profile: summarizeProfile(profileDir) }, null, 2));
  if (!DB_NAME) await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  if (CEILING) {
    const ceilingAfter = await rawInsert();
    const rows = Math.max(ceilingBefore.rows_per_s, ceilingAfter.rows_per_s);
    console.log(JSON.stringify({ ceiling: { raw_insert_before: ceilingBefore, raw_insert_after: ceilingAfter, stored_until_all_stored_vs_raw_insert: ratio(throughput.stored_per_s_until_all_stored, rows), stored_during_send_vs_raw_insert: ratio(throughput.stored_per_s_during_send, rows) } }, null, 2));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
