/**
 * One file: a benchmark is one program, read and run top to bottom; its set-up, load, probes and report share the state of one run.
 *
 * The entitlement check on the hot path (issue #14 item 4): p99 < 10 ms at 1,000 checks/s
 * through the gateway, with usage at most 2 s old.
 *
 *   npx tsc -b tsconfig.build.json && node bench/entitlements/check.js
 *
 * Starts customer, ingestion-aggregator, billing and gateway as separate processes (their
 * dist/main.js with the Dockerfile's node flags, as deployed) on a fresh database of the local
 * Postgres and Kafka (KAFKA_BROKERS, default 127.0.0.1:9092).
 *
 * set-up (not timed), through the gateway: a meter `api_call` (COUNT); three features, BOOLEAN
 *   `sso`, METERED `api_calls` (the meter) and STATIC `seats_tier`; a plan with a FIXED monthly
 *   price and an entitlement to each (METERED: limit 1,000,000, MONTHLY, hard); CUSTOMERS
 *   customers (external ids `cc-<i>`) and a probe customer, one subscription each; waits until
 *   the set-up's events are consumed.
 *
 * measured (per run, after WARMUP_S of the same load): for DURATION_S,
 *   The warm-up is 30 s: fresh processes take 15-20 s to settle (billing's first seconds fill
 *   the cache from the database and run with short lifetimes until its notice consumers have
 *   joined, and V8 and the broker's JIT compile), and #14 asks for the steady state. The first
 *   seconds after a start are in the README's results (2026-11-27 19:20).
 *   - checks at RATE per second, open loop: each check is sent when its slot comes, whether or
 *     not earlier ones have answered, and its latency counts from its slot (no coordinated
 *     omission); a random customer of the set-up, the feature METERED 50 %, BOOLEAN 25 %,
 *     STATIC 25 %, the customer named by `customer_id` or `external_customer_id` alternately;
 *     keep-alive connections of bench/lean-client.js (CLIENT=undici: an undici pool instead);
 *   - usage events at EVENT_RATE per second (bulks of EVENT_BULK every EVENT_BULK/EVENT_RATE s)
 *     for random customers of the set-up, so the aggregator stores while the checks read;
 *   - staleness probe: one event for the probe customer, then its METERED check every
 *     PROBE_POLL_MS until `usage` counts it; the delay from the event's 202 to the first check
 *     that counts it is one sample (then a pause of 200-500 ms and the next one). Goal: <= 2 s.
 *     The probe's own checks are not in the latency figures.
 *
 * Reports per run p50/p95/p99/max of the checks, errors, the achieved rate, the staleness
 * samples, the cores each process used and CPU ms per check (`postgres` and `kafka` count every
 * such process on the machine, other work included), and the machine's speed before and after
 * the run (`spin_ms`: a fixed loop in a fresh node process, bench/common.js spinMs; a shared host
 * runs the same code slower in some periods). The run's Kafka topics are deleted after it.
 *
 * STACK=standalone runs the one-process deployment instead (services/standalone, `npm start`
 * with DATABASE_URL and KAFKA_BROKERS): the gateway answers the check through billing's route
 * in its own process; its cores are reported as `standalone`.
 *
 * RUNS (default 3) runs, each on fresh processes on a copy of the set-up (CREATE DATABASE ...
 * TEMPLATE); the worst of each figure is reported. Settings: RATE (1000), DURATION_S (30),
 * WARMUP_S (30), EVENT_RATE (200), EVENT_BULK (20), CUSTOMERS (1000), PROBE_POLL_MS (20),
 * CLIENT (lean), PROFILE=<service> (CPU profile summary of that process over the run), TRACE_DIR=<dir> (per-hop
 * and per-process traces of the checks, then `node bench/entitlements/trace/analyze.js <dir>`), KEEP_DB=1,
 * WRITE_README=0 (else the figures go to bench/entitlements/README.md between the RESULTS
 * markers).
 */
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { performance } = require('node:perf_hooks');

const { leanClient } = require('../lean-client');
const { spinMs, deleteTopics, apiClient, inParallel, commonServiceEnv, launchAll, settleSetup, cpuSeconds, coresBusy, ADMIN_URL, adminQuery: admin, percentile, sleep, freePort, stopProcess, summarizeProfile } = require('../common');

const README = path.join(__dirname, 'README.md');
const RUNS = Number(process.env.RUNS || 3);
const RATE = Number(process.env.RATE || 1000);
const DURATION_S = Number(process.env.DURATION_S || 30);
const WARMUP_S = Number(process.env.WARMUP_S || 30);
const EVENT_RATE = Number(process.env.EVENT_RATE || 200);
const EVENT_BULK = Number(process.env.EVENT_BULK || 20);
const CUSTOMERS = Number(process.env.CUSTOMERS || 1000);
const PROBE_POLL_MS = Number(process.env.PROBE_POLL_MS || 20);
const PROFILE = process.env.PROFILE || '';
/** The measured checks' client: `lean` (bench/lean-client.js) or `undici` (the pool the set-up, events and probe use). */
const CLIENT = process.env.CLIENT || 'lean';
if (!['lean', 'undici'].includes(CLIENT)) throw new Error(`CLIENT must be lean or undici, not ${CLIENT}`);
/** What serves: `processes` (customer, ingestion-aggregator, billing and gateway, one process each) or `standalone` (one process). */
const STACK = process.env.STACK || 'processes';
if (!['processes', 'standalone'].includes(STACK)) throw new Error(`STACK must be processes or standalone, not ${STACK}`);
const TIMELINE = process.env.TIMELINE === '1';
/** Diagnostics (trace/preload.js, trace/analyze.js): where each check's time went, per hop and process. */
const TRACE_DIR = process.env.TRACE_DIR || '';
if (TRACE_DIR) {
  fs.mkdirSync(TRACE_DIR, { recursive: true });
  process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, '--require', path.join(__dirname, 'trace', 'preload.js')].filter(Boolean).join(' ');
}
const BROKERS = process.env.KAFKA_BROKERS || '127.0.0.1:9092';
const TENANT = 'bench-tenant';
const ENV = 'production';
const P99_GOAL_MS = 10;
const STALENESS_GOAL_MS = 2000;

/** The five services (the check is the entitlements service's, ADR 0061) on database `dbName`, as separate processes (STACK=processes) or one (STACK=standalone). */
async function startStack(dbName, key, profileDir) {
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  if (STACK === 'standalone') return startStandalone(dbUrl, dbName, key, profileDir);
  const names = ['customer', 'ingestion-aggregator', 'billing', 'entitlements', 'gateway'];
  const ports = {};
  for (const n of names) ports[n] = await freePort();
  const url = (n) => `http://127.0.0.1:${ports[n]}`;
  const unused = 'http://127.0.0.1:9';
  const common = commonServiceEnv({ dbUrl, dbName, brokers: BROKERS });
  const env = {
    customer: {},
    'ingestion-aggregator': {},
    billing: {
      CUSTOMER_SERVICE_URL: url('customer'),
      INGESTION_SERVICE_URL: url('ingestion-aggregator'),
      WALLET_SERVICE_URL: unused,
      // The period job does nothing here (subscriptions renew in a month); keep it out of the way.
      BILLING_INTERVAL_MS: '3600000',
    },
    entitlements: { CUSTOMER_SERVICE_URL: url('customer'), INGESTION_SERVICE_URL: url('ingestion-aggregator'), BILLING_SERVICE_URL: url('billing') },
    gateway: {
      CUSTOMER_SERVICE_URL: url('customer'),
      WALLET_SERVICE_URL: unused,
      INGESTION_SERVICE_URL: url('ingestion-aggregator'),
      BILLING_SERVICE_URL: url('billing'),
      ENTITLEMENTS_SERVICE_URL: url('entitlements'),
      WEBHOOK_SERVICE_URL: unused,
      BOOTSTRAP_API_KEY: key,
      BOOTSTRAP_TENANT_ID: TENANT,
      BOOTSTRAP_ENVIRONMENT_ID: ENV,
      RATE_LIMIT_RPS: '1000000',
      RATE_LIMIT_BURST: '1000000',
    },
  };
  const procs = await launchAll(names, (n) => ({ ...common, ...env[n], PORT: String(ports[n]) }), url, (n) => (PROFILE === n ? profileDir : undefined));
  return {
    url: url('gateway'),
    databaseUrl: dbUrl.toString(),
    pids: Object.fromEntries(names.map((n, i) => [n, procs[i].child.pid])),
    stop: async () => {
      for (const proc of [...procs].reverse()) await stopProcess(proc);
    },
  };
}

/**
 * Every service in one process (services/standalone, `npm start` with DATABASE_URL and
 * KAFKA_BROKERS): the gateway answers the check through billing's route in its own process.
 */
async function startStandalone(dbUrl, dbName, key, profileDir) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = {
    ...commonServiceEnv({ dbUrl, dbName, brokers: BROKERS }),
    PORT: String(port),
    DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'bench-standalone-')),
    BOOTSTRAP_API_KEY: key,
    BOOTSTRAP_TENANT_ID: TENANT,
    BOOTSTRAP_ENVIRONMENT_ID: ENV,
    RATE_LIMIT_RPS: '1000000',
    RATE_LIMIT_BURST: '1000000',
    BILLING_INTERVAL_MS: '3600000',
  };
  const [proc] = await launchAll(['standalone'], () => env, () => url, () => (PROFILE === 'standalone' ? profileDir : undefined));
  return {
    url,
    databaseUrl: dbUrl.toString(),
    pids: { standalone: proc.child.pid },
    stop: async () => {
      await stopProcess(proc);
      fs.rmSync(env.DATA_DIR, { recursive: true, force: true });
    },
  };
}

/** The set-up on database `dbName` (fresh stack, stopped at the end). */
async function setUp(dbName, key) {
  const stack = await startStack(dbName, key);
  const api = apiClient(stack.url, key, { connections: 32 });
  const pg = new Client({ connectionString: stack.databaseUrl });
  await pg.connect();
  try {
    const meter = (await api.must('POST', '/v1/meters', { name: 'calls', event_name: 'api_call', aggregation: { type: 'COUNT' } }, 201)).id;
    const sso = await api.must('POST', '/v1/features', { name: 'SSO', lookup_key: 'sso', type: 'BOOLEAN' }, 201);
    const calls = await api.must('POST', '/v1/features', { name: 'API calls', lookup_key: 'api_calls', type: 'METERED', meter_id: meter }, 201);
    const tier = await api.must('POST', '/v1/features', { name: 'Seats tier', lookup_key: 'seats_tier', type: 'STATIC' }, 201);
    const plan = await api.must('POST', '/v1/plans', { name: 'Pro', prices: [{ type: 'FIXED', amount: '49', currency: 'usd', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }] }, 201);
    await api.must('POST', '/v1/entitlements', { plan_id: plan.id, feature_id: sso.id, is_enabled: true }, 201);
    await api.must('POST', '/v1/entitlements', { plan_id: plan.id, feature_id: calls.id, usage_limit: '1000000', usage_reset_period: 'MONTHLY', is_soft_limit: false }, 201);
    await api.must('POST', '/v1/entitlements', { plan_id: plan.id, feature_id: tier.id, static_value: 'pro-25' }, 201);
    const customers = new Array(CUSTOMERS);
    const externals = [...Array.from({ length: CUSTOMERS }, (_, i) => `cc-${i}`), 'probe'];
    const ids = new Array(externals.length);
    await inParallel(externals.length, 16, async (i) => {
      const c = await api.must('POST', '/v1/customers', { external_customer_id: externals[i] }, 201);
      ids[i] = c.id;
    });
    await settleSetup(pg, externals.length, 'customers');
    await inParallel(externals.length, 16, async (i) => {
      await api.must('POST', '/v1/subscriptions', { customer_id: ids[i], plan_id: plan.id }, 201);
    });
    await settleSetup(pg, externals.length, 'subscriptions');
    for (let i = 0; i < CUSTOMERS; i += 1) customers[i] = { id: ids[i], external: externals[i] };
    return { customers, probe: { id: ids[CUSTOMERS], external: 'probe' } };
  } finally {
    await pg.end();
    await api.pool.close();
    await stack.stop();
  }
}

const FEATURES = (process.env.FEATURES || 'api_calls,api_calls,sso,seats_tier').split(',');

/** Checks at `rate` per second for `seconds`, open loop; returns latencies from the slots. */
async function driveChecks(api, customers, rate, seconds, stop) {
  const total = Math.round(rate * seconds);
  const latencies = [];
  const timeline = [];
  const errors = {};
  const inflight = new Set();
  const traced = [];
  const start = performance.now() + 20;
  let sent = 0;
  let wrong = 0;
  while (sent < total) {
    const now = performance.now();
    const due = Math.min(total, Math.floor(((now - start) * rate) / 1000) + 1);
    while (sent < due) {
      const slot = start + (sent * 1000) / rate;
      const c = customers[Math.floor(Math.random() * customers.length)];
      const feature = FEATURES[sent % FEATURES.length];
      const body = sent % 2 === 0 ? { customer_id: c.id, feature_lookup_key: feature } : { external_customer_id: c.external, feature_lookup_key: feature };
      sent += 1;
      const rid = `chk-${sent}`;
      const sentAt = performance.timeOrigin + performance.now();
      const p = api
        .call('POST', '/v1/entitlements/check', body, TRACE_DIR ? { 'x-request-id': rid } : undefined)
        .then((res) => {
          if (TRACE_DIR) traced.push(`${rid} ${(performance.timeOrigin + slot).toFixed(3)} ${sentAt.toFixed(3)} ${(performance.timeOrigin + performance.now()).toFixed(3)}`);
          if (res.status === 200) {
            latencies.push(performance.now() - slot);
            if (TIMELINE) timeline.push([slot - start, performance.now() - slot]);
            if (res.body.allowed !== true) wrong += 1;
          } else errors[res.status] = (errors[res.status] || 0) + 1;
        })
        .catch((err) => {
          errors[err.code || 'network'] = (errors[err.code || 'network'] || 0) + 1;
        })
        .finally(() => inflight.delete(p));
      inflight.add(p);
    }
    await sleep(1);
  }
  await Promise.all(inflight);
  stop.done = true;
  if (TIMELINE) printTimeline(timeline, performance.timeOrigin + start);
  if (TRACE_DIR) fs.writeFileSync(path.join(TRACE_DIR, `client-${Date.now()}.txt`), traced.join('\n'));
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: total,
    ok: latencies.length,
    not_allowed: wrong,
    errors,
    achieved_rps: Math.round((latencies.length / elapsed) * 10) / 10,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1],
  };
}

/** TIMELINE=1: the checks' latency per 250 ms of their slots (p50, p99, max; `at` the window's start in epoch ms, to match with other logs), to see stalls. */
function printTimeline(samples, epochStart) {
  const buckets = new Map();
  for (const [at, latency] of samples) {
    const b = Math.floor(at / 250);
    if (!buckets.has(b)) buckets.set(b, []);
    buckets.get(b).push(latency);
  }
  for (const [b, values] of [...buckets].sort((x, y) => x[0] - y[0])) {
    values.sort((x, y) => x - y);
    console.log(`t=${(b / 4).toFixed(2)}s at=${Math.round(epochStart + b * 250)} n=${values.length} p50=${percentile(values, 50).toFixed(1)} p99=${percentile(values, 99).toFixed(1)} max=${values[values.length - 1].toFixed(1)}`);
  }
}

/** Usage events at EVENT_RATE per second in bulks of EVENT_BULK until `stop.done`. */
async function driveEvents(api, customers, stop, label) {
  if (!(EVENT_RATE > 0)) return { accepted: 0, per_s: 0, errors: {} };
  const every = (EVENT_BULK * 1000) / EVENT_RATE;
  const start = performance.now();
  let n = 0;
  let sent = 0;
  const errors = {};
  const inflight = new Set();
  const ts = () => new Date().toISOString();
  while (!stop.done) {
    const wait = start + n * every - performance.now();
    if (wait > 0) await sleep(wait);
    const events = Array.from({ length: EVENT_BULK }, (_, j) => ({
      event_id: `${label}-${n}-${j}`,
      event_name: 'api_call',
      external_customer_id: customers[Math.floor(Math.random() * customers.length)].external,
      timestamp: ts(),
    }));
    n += 1;
    const p = api
      .call('POST', '/v1/events/bulk', { events })
      .then((res) => {
        if (res.status === 202) sent += EVENT_BULK;
        else errors[res.status] = (errors[res.status] || 0) + 1;
      })
      .catch((err) => {
        errors[err.code || 'network'] = (errors[err.code || 'network'] || 0) + 1;
      })
      .finally(() => inflight.delete(p));
    inflight.add(p);
  }
  await Promise.all(inflight);
  return { accepted: sent, per_s: Math.round(sent / ((performance.now() - start) / 1000)), errors };
}

/** Staleness samples: event for the probe, then its METERED check until it counts it. */
async function probe(api, customer, stop, label) {
  const delays = [];
  const errors = {};
  let expected = Number((await api.must('POST', '/v1/entitlements/check', { customer_id: customer.id, feature_lookup_key: 'api_calls' }, 200)).usage);
  let n = 0;
  while (!stop.done) {
    const event = { event_id: `${label}-probe-${n}`, event_name: 'api_call', external_customer_id: customer.external, timestamp: new Date().toISOString() };
    n += 1;
    const res = await api.call('POST', '/v1/events', event);
    if (res.status !== 202) {
      errors[`event ${res.status}`] = (errors[`event ${res.status}`] || 0) + 1;
      await sleep(200);
      continue;
    }
    const accepted = performance.now();
    expected += 1;
    for (;;) {
      const check = await api.call('POST', '/v1/entitlements/check', { customer_id: customer.id, feature_lookup_key: 'api_calls' });
      if (check.status === 200 && Number(check.body.usage) >= expected) {
        delays.push(performance.now() - accepted);
        break;
      }
      if (check.status !== 200) errors[`check ${check.status}`] = (errors[`check ${check.status}`] || 0) + 1;
      if (performance.now() - accepted > 30_000) {
        errors.not_seen_in_30s = (errors.not_seen_in_30s || 0) + 1;
        break;
      }
      await sleep(PROBE_POLL_MS);
    }
    await sleep(200 + Math.random() * 300);
  }
  delays.sort((a, b) => a - b);
  return { samples: delays.length, p50: percentile(delays, 50), p99: percentile(delays, 99), max: delays[delays.length - 1], errors };
}

/** Checks, events and the probe together for `seconds`. */
async function phase(api, checkApi, setup, rate, seconds, label) {
  const stop = { done: false };
  const [checks, events, staleness] = await Promise.all([
    driveChecks(checkApi, setup.customers, rate, seconds, stop),
    driveEvents(api, setup.customers, stop, label),
    probe(api, setup.probe, stop, label),
  ]);
  return { checks, events, staleness };
}

async function run(dbName, key, setup, index) {
  const profileDir = PROFILE ? fs.mkdtempSync(path.join(os.tmpdir(), 'billstream-prof-')) : undefined;
  const spin = { before: spinMs(), after: undefined };
  const stack = await startStack(dbName, key, profileDir);
  const api = apiClient(stack.url, key, { connections: 256 });
  const checkApi = CLIENT === 'undici' ? api : leanClient(stack.url, { headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, connections: 256 });
  try {
    const load = os.loadavg()[0];
    if (WARMUP_S > 0) await phase(api, checkApi, setup, RATE, WARMUP_S, `r${index}-warm`);
    const pids = { ...stack.pids, client: process.pid };
    const before = cpuSeconds(pids);
    const t0 = performance.now();
    const result = await phase(api, checkApi, setup, RATE, DURATION_S, `r${index}`);
    const cores = coresBusy(before, cpuSeconds(pids), (performance.now() - t0) / 1000);
    // CPU per check (events and probe included), per process: what other work on the machine disturbs least.
    const cpuMsPerCheck = Object.fromEntries(Object.entries(cores).map(([k, v]) => [k, Number(((v * 1000) / result.checks.achieved_rps).toFixed(2))]));
    return { ...result, cores, cpu_ms_per_check: cpuMsPerCheck, load_at_start: Number(load.toFixed(1)), spin_ms: spin };
  } finally {
    if (checkApi !== api) await checkApi.close();
    await api.pool.close();
    await stack.stop();
    // The run's topics go with it: a broker shared by many runs would keep hundreds of partitions.
    await deleteTopics(BROKERS, `bench-${dbName}.`).catch((err) => console.error(`could not delete the run's topics: ${err.message}`));
    spin.after = spinMs();
    if (profileDir) console.log(JSON.stringify(summarizeProfile(profileDir), null, 2));
  }
}

const ms = (v) => (Number.isFinite(v) ? `${v.toFixed(1)} ms` : 'n/a');

function writeReadme(runs, meta) {
  const worst = (f) => Math.max(...runs.map(f));
  const rows = runs.map(
    (r, i) =>
      `| ${i + 1} | ${r.load_at_start} | ${r.checks.achieved_rps}/s | ${r.checks.ok} | ${JSON.stringify(r.checks.errors)} | ${ms(r.checks.p50)} | ${ms(r.checks.p95)} | ${ms(r.checks.p99)} | ${ms(r.checks.max)} | ${r.events.per_s}/s | ${r.staleness.samples} | ${ms(r.staleness.p50)} | ${ms(r.staleness.p99)} | ${ms(r.staleness.max)} | ${Object.entries(r.cores).map(([k, v]) => `${k} ${v}`).join(', ')} | ${Object.entries(r.cpu_ms_per_check).map(([k, v]) => `${k} ${v}`).join(', ')} | ${r.spin_ms.before} / ${r.spin_ms.after} ms |`,
  );
  const lines = [
    '<!-- RESULTS:START -->',
    `Run ${meta.date} on ${meta.cpus} cores (${meta.cpuModel}), load average at start ${meta.load}; Kafka ${BROKERS}; ${runs.length} runs of ${DURATION_S} s after ${WARMUP_S} s of warm-up, each on fresh processes; ${RATE} checks/s, ${EVENT_RATE} events/s, ${CUSTOMERS} customers; the checks sent by the ${CLIENT} client.`,
    '',
    '| run | load | achieved | ok | errors | p50 | p95 | p99 | max | events | staleness samples | staleness p50 | staleness p99 | staleness max | cores busy | CPU ms per check | spin before / after |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `Worst of ${runs.length}: check p99 **${ms(worst((r) => r.checks.p99))}** (goal < ${P99_GOAL_MS} ms: ${worst((r) => r.checks.p99) < P99_GOAL_MS ? 'met' : 'MISSED'}), lowest achieved rate ${Math.min(...runs.map((r) => r.checks.achieved_rps))}/s, staleness p99 **${ms(worst((r) => r.staleness.p99))}** (goal <= ${STALENESS_GOAL_MS} ms: ${worst((r) => r.staleness.p99) <= STALENESS_GOAL_MS ? 'met' : 'MISSED'}).`,
    '<!-- RESULTS:END -->',
  ];
  const block = lines.join('\n');
  const current = fs.existsSync(README) ? fs.readFileSync(README, 'utf8') : '';
  fs.writeFileSync(README, current.includes('<!-- RESULTS:START -->') ? current.replace(/<!-- RESULTS:START -->[\s\S]*<!-- RESULTS:END -->/, block) : `${current}\n${block}\n`);
}

async function main() {
  const cpuModel = (fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m) || [])[1] || os.cpus()[0]?.model || 'unknown';
  const meta = { date: new Date().toISOString(), cpus: os.cpus().length, cpuModel, load: os.loadavg().map((l) => l.toFixed(1)).join(' ') };
  console.log(JSON.stringify(meta));
  const base = `bench_check_${Date.now().toString(36)}`;
  const key = `bsk_bench_${randomBytes(18).toString('base64url')}`;
  await admin(`CREATE DATABASE "${base}"`);
  const dbs = [base];
  try {
    const setup = await setUp(base, key);
    for (let i = 1; i <= RUNS; i += 1) {
      dbs.push(`${base}_${i}`);
      await admin(`CREATE DATABASE "${base}_${i}" TEMPLATE "${base}"`);
    }
    const runs = [];
    for (let i = 1; i <= RUNS; i += 1) {
      const r = await run(`${base}_${i}`, key, setup, i);
      console.log(JSON.stringify({ run: i, ...r }));
      runs.push(r);
    }
    const worst = (f) => Math.max(...runs.map(f));
    console.log(
      JSON.stringify({
        worst_p99_ms: worst((r) => r.checks.p99),
        worst_staleness_p99_ms: worst((r) => r.staleness.p99),
        lowest_achieved_rps: Math.min(...runs.map((r) => r.checks.achieved_rps)),
      }),
    );
    if (process.env.WRITE_README !== '0') writeReadme(runs, meta);
  } finally {
    if (!process.env.KEEP_DB) for (const db of dbs.reverse()) await admin(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
    await deleteTopics(BROKERS, `bench-${base}`).catch((err) => console.error(`could not delete the set-up's topics: ${err.message}`));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
