/**
 * The tail under light load (issue #34 item 5): RATE mixed requests/s for SECONDS on the process
 * stack, and every kind's p99 against its p50 (goal: p99 <= 5 x p50 for every kind).
 *
 *   npx tsc -b tsconfig.build.json && KAFKA_BROKERS=127.0.0.1:9092 node bench/soak/soak.js
 *
 * Per run, a fresh database and a fresh stack (bench/limits/stack.js: customer, wallet,
 * ingestion-aggregator, billing and gateway as separate processes, on Kafka), set up with
 * CUSTOMERS customers with a subscription and a wallet each. Then WARMUP_S of the load, and
 * SECONDS of it measured: open loop (each request sent at its slot, its latency counted from the
 * slot) with bench/lean-client.js, the kinds interleaved by weight (KINDS below): the
 * entitlement check, a customer read, a wallet's balance, a bulk of 10 usage events, a debit, a
 * top-up, a customer created and a wallet created for a customer created earlier in the run.
 * Reported per kind: count, unexpected statuses, p50, p99, max and p99 / p50; the slowest
 * requests with the second they were due in; and Postgres' slowest statements by their
 * maximum time (pg_stat_statements, when loaded).
 *
 * TRACE_DIR=<dir> preloads bench/entitlements/trace/preload.js into every process (one line per
 * 250 ms per process: event loop delay, GC pauses, CPU), runs bench/soak/cpu-sampler.js (every
 * process of the machine's CPU per 100 ms, grouped) and prints, for each of the slowest requests,
 * what each process did in the windows it spanned and who had the CPUs meanwhile: the evidence of
 * a stall's cause.
 *
 * Settings: RUNS (3), RATE (100), SECONDS (180), WARMUP_S (20), CUSTOMERS (200), ONLY, KAFKA_BROKERS
 * (127.0.0.1:9092), ADMIN_DATABASE_URL.
 */
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { apiClient, adminQuery: admin, percentile, ADMIN_URL, cpuSeconds, coresBusy } = require('../common');
const { leanClient } = require('../lean-client');
const { openLoop } = require('../limits/ceilings');
const { cpuModel, statements } = require('../limits/report');
const { startStack, setUp } = require('../limits/stack');

const RUNS = Number(process.env.RUNS || 3);
const RATE = Number(process.env.RATE || 100);
const SECONDS = Number(process.env.SECONDS || 180);
const WARMUP_S = Number(process.env.WARMUP_S || 20);
const CUSTOMERS = Number(process.env.CUSTOMERS || 200);
const TRACE_DIR = process.env.TRACE_DIR || '';
const GOAL = 5;

/** Kinds and their share of the requests (out of 100). */
const ALL_KINDS = [
  ['check', 30],
  ['events', 20],
  ['read_customer', 12],
  ['balance', 10],
  ['debit', 10],
  ['topup', 6],
  ['create_customer', 6],
  ['create_wallet', 6],
];
/**
 * ONLY=<kind,...>: those kinds alone, each at its own share of RATE (ONLY=check: 30 checks/s at
 * RATE 100), to tell a kind's own tail from what the other kinds' work on the same two cores
 * adds to it (diagnostics).
 */
const ONLY = (process.env.ONLY || '').split(',').filter(Boolean);
const KINDS = ONLY.length ? ALL_KINDS.filter(([k]) => ONLY.includes(k)) : ALL_KINDS;
const KIND_RATE = Math.round((RATE * KINDS.reduce((a, [, w]) => a + w, 0)) / 100);

/** The kinds in an order that interleaves them by weight (smooth weighted round robin). */
function schedule() {
  const current = KINDS.map(() => 0);
  const total = KINDS.reduce((a, [, w]) => a + w, 0);
  const out = [];
  for (let i = 0; i < total; i += 1) {
    KINDS.forEach(([, w], k) => (current[k] += w));
    const best = current.indexOf(Math.max(...current));
    current[best] -= total;
    out.push(KINDS[best][0]);
  }
  return out;
}

function eventsBody(customer, seq) {
  const now = new Date().toISOString();
  return JSON.stringify({ events: Array.from({ length: 10 }, (_, i) => ({ event_id: `soak-${seq}-${i}`, event_name: 'api_call', external_customer_id: customer, timestamp: now, properties: { n: i } })) });
}

async function run(runNo, key) {
  const dbName = `bench_soak_${Date.now().toString(36)}`;
  await admin(`CREATE DATABASE "${dbName}"`);
  const preload = TRACE_DIR ? { NODE_OPTIONS: `--require ${path.join(__dirname, '../entitlements/trace/preload.js')}`, TRACE_DIR: path.join(TRACE_DIR, `run${runNo}`) } : {};
  if (TRACE_DIR) fs.mkdirSync(preload.TRACE_DIR, { recursive: true });
  const all = Object.fromEntries(['customer', 'wallet', 'ingestion-aggregator', 'billing', 'entitlements', 'gateway'].map((n) => [n, preload]));
  const stack = await startStack(dbName, key, all);
  const client = leanClient(stack.url, { headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, connections: 64 });
  const pgStatements = await statements(ADMIN_URL);
  try {
    const api = apiClient(stack.url, key, { connections: 16 });
    const customers = await setUp(api, CUSTOMERS);
    await api.pool.close();
    const sampler = TRACE_DIR
      ? spawn(process.execPath, [path.join(__dirname, 'cpu-sampler.js')], {
          env: { ...process.env, NAMES: Object.entries({ ...stack.pids, bench: process.pid }).map(([n, pid]) => `${n}=${pid}`).join(','), OUT: path.join(preload.TRACE_DIR, 'cpu.txt') },
          stdio: 'ignore',
        })
      : undefined;
    const order = schedule();
    const fresh = [];
    let seq = 0;
    let samples = null;
    const send = async (slot) => {
      seq += 1;
      const n = seq;
      let kind = order[n % order.length];
      const c = customers[n % customers.length];
      let call;
      if (kind === 'check') call = ['POST', '/v1/entitlements/check', JSON.stringify({ customer_id: c.id, feature_lookup_key: 'sso' }), 200];
      else if (kind === 'events') call = ['POST', '/v1/events/bulk', eventsBody(`rc-${n % customers.length}`, `${runNo}-${n}`), 202];
      else if (kind === 'read_customer') call = ['GET', `/v1/customers/${c.id}`, undefined, 200];
      else if (kind === 'balance') call = ['GET', `/v1/wallets/${c.wallet}/balance`, undefined, 200];
      else if (kind === 'debit') call = ['POST', `/v1/wallets/${c.wallet}/debit`, JSON.stringify({ credits: '0.01' }), 201];
      else if (kind === 'topup') call = ['POST', `/v1/wallets/${c.wallet}/topup`, JSON.stringify({ credits_to_add: '1' }), 201];
      else if (kind === 'create_customer') call = ['POST', '/v1/customers', JSON.stringify({ external_customer_id: `soak-${runNo}-${n}`, name: `Soak ${n}` }), 201];
      else {
        const owner = fresh.shift();
        if (owner) call = ['POST', '/v1/wallets', JSON.stringify({ customer_id: owner, currency: 'usd' }), 201];
        else {
          kind = 'read_customer';
          call = ['GET', `/v1/customers/${c.id}`, undefined, 200];
        }
      }
      const [method, p, body, expected] = call;
      const res = await client.call(method, p, body);
      if (samples) samples.push({ kind, due: slot - samples.start, ms: performance.now() - slot, status: res.status, ok: res.status === expected });
      if (kind === 'create_customer' && res.status === 201) fresh.push(res.body.id);
    };
    await openLoop(send, KIND_RATE, WARMUP_S);
    await pgStatements.reset();
    samples = [];
    samples.start = performance.now();
    const startedAt = Date.now();
    const cpuBefore = cpuSeconds({ ...stack.pids, client: process.pid });
    await openLoop(send, KIND_RATE, SECONDS);
    const cores = coresBusy(cpuBefore, cpuSeconds({ ...stack.pids, client: process.pid }), SECONDS);
    sampler?.kill();
    const rows = samples.filter((s) => s.due >= 0);
    const byKind = {};
    for (const [kind] of KINDS) {
      const mine = rows.filter((r) => r.kind === kind);
      const ms = mine.map((r) => r.ms).sort((a, b) => a - b);
      if (ms.length === 0) continue;
      const p50 = percentile(ms, 50);
      const p99 = percentile(ms, 99);
      byKind[kind] = { n: ms.length, unexpected: mine.filter((r) => !r.ok).length, p50_ms: round(p50), p99_ms: round(p99), max_ms: round(ms[ms.length - 1]), p99_over_p50: round(p99 / p50) };
    }
    const slowest = [...rows].sort((a, b) => b.ms - a.ms).slice(0, 12).map((r) => ({ kind: r.kind, ms: round(r.ms), at_s: round(r.due / 1000), status: r.status }));
    const pg = await pgTop(pgStatements, dbName);
    const total = Object.values(cores).reduce((a, b) => a + b, 0);
    const result = { run: runNo, rate: KIND_RATE, seconds: SECONDS, requests: rows.length, kinds: byKind, cores_busy: { ...cores, total: Math.round(total * 100) / 100 }, slowest, postgres_slowest: pg };
    if (TRACE_DIR) result.stalls = stalls(preload.TRACE_DIR, slowest, startedAt);
    return result;
  } finally {
    await client.close();
    await stack.stop();
    // KEEP_DB=1 keeps the run's database (for EXPLAIN of its statements afterwards).
    if (process.env.KEEP_DB === '1') console.error(`kept database ${dbName}`);
    else await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  }
}

/** Postgres' statements of the run with the longest single execution (max_exec_time). */
async function pgTop(pgStatements, dbName) {
  if (!pgStatements.available) return undefined;
  const { Client } = require('pg');
  const c = new Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    const { rows } = await c.query(
      `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS q, calls, round(mean_exec_time::numeric, 2) AS mean_ms, round(max_exec_time::numeric, 1) AS max_ms
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 ORDER BY max_exec_time DESC LIMIT 6`,
      [dbName],
    );
    return rows.map((r) => ({ max_ms: Number(r.max_ms), mean_ms: Number(r.mean_ms), calls: Number(r.calls), query: r.q.slice(0, 110) }));
  } finally {
    await c.end();
  }
}

/** For each slow request, per process: the 250 ms windows it spanned (loop delay, GC pauses over 2 ms, CPU). */
function stalls(dir, slowest, startedAt) {
  const windows = {};
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.windows'))) {
    windows[f.replace(/-\d+\.windows$/, '')] = fs
      .readFileSync(path.join(dir, f), 'utf8')
      .trim()
      .split('\n')
      .map((l) => ({ t: Number(l.split(' ')[0]), line: l.replace(/ checks=.*$/, '').replace(/ heap=\S+/, '') }));
  }
  const cpu = fs.existsSync(path.join(dir, 'cpu.txt'))
    ? fs
        .readFileSync(path.join(dir, 'cpu.txt'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => {
          const [t, ...groups] = l.split(' ');
          return { t: Number(t), groups: groups.map((g) => g.split('=')).map(([k, v]) => [k, Number(v) * 10]) };
        })
    : [];
  /** CPU ms per group over [from, to], the largest first. */
  const cpuOver = (from, to) => {
    const sum = {};
    for (const c of cpu.filter((x) => x.t > from && x.t <= to + 100)) for (const [k, ms] of c.groups) sum[k] = (sum[k] ?? 0) + ms;
    return Object.fromEntries(Object.entries(sum).sort((a, b) => b[1] - a[1]).slice(0, 8));
  };
  return slowest.slice(0, 5).map((s) => {
    const from = startedAt + s.at_s * 1000;
    const to = from + s.ms + 250;
    const seen = {};
    for (const [proc, ws] of Object.entries(windows)) {
      const hit = ws.filter((w) => w.t >= from && w.t <= to).map((w) => w.line.replace(/^\d+ /, ''));
      if (hit.length) seen[proc] = hit;
    }
    return { ...s, processes: seen, cpu_ms_while_waiting: cpuOver(from, from + s.ms) };
  });
}

function round(x) {
  return Math.round(x * 10) / 10;
}

async function main() {
  const key = `bsk_bench_${randomBytes(18).toString('base64url')}`;
  console.log(`CPU: ${cpuModel()}; ${RUNS} runs of ${SECONDS} s at ${KIND_RATE} requests/s (${KINDS.map(([k]) => k).join(", ")}) after ${WARMUP_S} s; ${CUSTOMERS} customers`);
  const results = [];
  for (let r = 1; r <= RUNS; r += 1) {
    const result = await run(r, key);
    results.push(result);
    console.log(JSON.stringify(result));
  }
  console.log('\n| kind | p50 ms (worst run) | p99 ms (worst run) | p99 / p50 (worst run) | goal <= 5 |');
  console.log('|---|---|---|---|---|');
  for (const [kind] of KINDS) {
    const of = results.map((r) => r.kinds[kind]).filter(Boolean);
    if (of.length === 0) continue;
    const worst = (k) => Math.max(...of.map((x) => x[k]));
    console.log(`| ${kind} | ${worst('p50_ms')} | ${worst('p99_ms')} | ${worst('p99_over_p50')} | ${worst('p99_over_p50') <= GOAL ? 'yes' : 'no'} |`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
