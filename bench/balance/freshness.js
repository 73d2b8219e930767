/**
 * Real-time balance freshness (issue #14 item 1, ADR 0024): how long after an event's 202 the
 * wallet's real-time balance reflects it, while usage events arrive at RATE per second.
 *
 *   npx tsc -b tsconfig.build.json && KAFKA_BROKERS=127.0.0.1:9092 node bench/balance/freshness.js
 *
 * Starts customer, wallet, ingestion-aggregator, billing and gateway as separate processes
 * (their dist/main.js with the Dockerfile's node flags, as deployed) on a fresh database of the
 * local Postgres and Kafka (KAFKA_BROKERS, default 127.0.0.1:9092), billing with its defaults
 * (UNBILLED_DEBOUNCE_MS 250, UNBILLED_SWEEP_MS 30000).
 *
 * set-up (not timed), through the gateway: a COUNT meter on `api_call`, a MONTHLY plan with one
 * USAGE price of $0.01 per call (so `unbilled_usage` in cents = the calls counted), CUSTOMERS
 * customers each with a PRE_PAID wallet (1,000,000 credits) and a subscription.
 *
 * load: RATE events/s for DURATION_S seconds through POST /v1/events/bulk (BULK events per
 *   request, spread round-robin over the customers, paced every 10 ms). The bench counts per
 *   customer the events whose 202 it received.
 * probes: every PROBE_EVERY_MS, one event of a customer (round-robin) through POST /v1/events;
 *   at its 202 (time A) the customer has at least N accepted events (the bench's count, the
 *   probe included). The probe polls GET /v1/wallets/{id}/balance?include_real_time_balance=true
 *   every POLL_MS until `unbilled_usage` >= N (time T): freshness = T - A (an upper bound by at
 *   most POLL_MS plus one read). Probes run concurrently with the load and with each other.
 *
 * Each probe also polls the customer's meter usage (POST /v1/meters/{id}/usage): `stored_*` is
 * the time until the aggregator had stored the events (the part of the freshness before billing).
 * Reports p50/p95/p99/max freshness, the accepted event rate, probes answered, CPU model, load
 * average and the cores busy per process group. RUNS (default 1) runs on a fresh stack each; the
 * worst p99 is the figure. Goal: p99 < 2,000 ms at 5,000 events/s.
 * Settings: RATE (5000), DURATION_S (30), CUSTOMERS (100), BULK (100), PROBE_EVERY_MS (200),
 * POLL_MS (20), RUNS (1), KEEP_DB=1, WRITE_README=0 (else results go to bench/balance/README.md).
 */
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { gatewayEnv, apiClient, commonServiceEnv, launchAll, cpuSeconds, coresBusy, ADMIN_URL, adminQuery: admin, percentile, sleep, freePort, stopProcess } = require('../common');

const README = path.join(__dirname, 'README.md');
const RATE = Number(process.env.RATE || 5000);
const DURATION_S = Number(process.env.DURATION_S || 30);
const CUSTOMERS = Number(process.env.CUSTOMERS || 100);
const BULK = Number(process.env.BULK || 100);
const PROBE_EVERY_MS = Number(process.env.PROBE_EVERY_MS || 200);
const POLL_MS = Number(process.env.POLL_MS || 20);
const RUNS = Number(process.env.RUNS || 1);
const TENANT = 'bench-tenant';
const ENV = 'production';

async function startStack(brokers, dbName) {
  await admin(`CREATE DATABASE "${dbName}"`);
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const key = `bsk_bench_${randomBytes(18).toString('base64url')}`;
  const names = ['customer', 'wallet', 'ingestion-aggregator', 'billing', 'gateway'];
  const ports = {};
  for (const n of names) ports[n] = await freePort();
  const url = (n) => `http://127.0.0.1:${ports[n]}`;
  const common = commonServiceEnv({ dbUrl, dbName, brokers });
  const env = {
    customer: {},
    wallet: { CUSTOMER_SERVICE_URL: url('customer'), WALLET_EXPIRY_INTERVAL_MS: '0' },
    'ingestion-aggregator': {},
    billing: { CUSTOMER_SERVICE_URL: url('customer'), INGESTION_SERVICE_URL: url('ingestion-aggregator'), WALLET_SERVICE_URL: url('wallet'), BILLING_INTERVAL_MS: '0', TASKS_POLL_MS: '0' },
    gateway: gatewayEnv(url, key, TENANT, ENV),
  };
  const procs = await launchAll(names, (n) => ({ ...common, ...env[n], PORT: String(ports[n]) }), url);
  return {
    url: url('gateway'),
    key,
    pids: Object.fromEntries(names.map((n, i) => [n, procs[i].child.pid])),
    stop: async () => {
      for (const proc of [...procs].reverse()) await stopProcess(proc);
      if (!process.env.KEEP_DB) await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    },
  };
}

async function setUp(api) {
  const meter = (await api.must('POST', '/v1/meters', { name: 'calls', event_name: 'api_call', aggregation: { type: 'COUNT' } }, 201)).id;
  const price = { type: 'USAGE', currency: 'usd', amount: '0.01', billing_model: 'FLAT_FEE', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', meter_id: meter };
  const plan = (await api.must('POST', '/v1/plans', { name: 'Bench', prices: [price] }, 201)).id;
  const customers = [];
  await Promise.all(
    Array.from({ length: 8 }, async (_, worker) => {
      for (let i = worker; i < CUSTOMERS; i += 8) {
        const ext = `bal-${i}`;
        const id = (await api.must('POST', '/v1/customers', { external_customer_id: ext }, 201)).id;
        const wallet = (await api.must('POST', '/v1/wallets', { customer_id: id, currency: 'usd', initial_credits_to_load: '1000000' }, 201)).id;
        await api.must('POST', '/v1/subscriptions', { customer_id: id, plan_id: plan }, 201);
        customers[i] = { ext, wallet, accepted: 0 };
      }
    }),
  );
  return { customers, meter };
}

async function run(brokers, n) {
  const dbName = `bench_balance_${Date.now()}_${n}`;
  const stack = await startStack(brokers, dbName);
  const api = apiClient(stack.url, stack.key);
  try {
    const { customers, meter } = await setUp(api);
    const timestamp = new Date().toISOString();
    const from = new Date(Date.now() - 86_400_000).toISOString();
    const to = new Date(Date.now() + 86_400_000).toISOString();
    const stored = [];
    let seq = 0;
    let accepted = 0;
    let refused = 0;
    const freshness = [];
    let unanswered = 0;
    const cpuBefore = cpuSeconds(stack.pids);
    const started = Date.now();
    const end = started + DURATION_S * 1000;
    const inflight = new Set();

    // Load: RATE/100 events every 10 ms, in bulks of BULK, round-robin over the customers.
    const load = (async () => {
      let next = 0;
      let sent = 0;
      while (Date.now() < end) {
        const due = Math.floor(((Date.now() - started) / 1000) * RATE);
        while (sent + BULK <= due) {
          const batch = [];
          const counts = new Map();
          for (let i = 0; i < BULK; i += 1) {
            const c = customers[next++ % customers.length];
            batch.push(`{"event_name":"api_call","external_customer_id":"${c.ext}","timestamp":"${timestamp}","event_id":"e${n}-${(seq += 1)}"}`);
            counts.set(c, (counts.get(c) || 0) + 1);
          }
          sent += BULK;
          const p = api.call('POST', '/v1/events/bulk', `{"events":[${batch.join(',')}]}`).then((res) => {
            if (res.status !== 202) return void (refused += BULK);
            accepted += BULK;
            for (const [c, k] of counts) c.accepted += k;
          });
          inflight.add(p);
          p.finally(() => inflight.delete(p));
        }
        await sleep(10);
      }
      await Promise.all([...inflight]);
    })();

    // Probes: one event, then poll the wallet's real-time balance until it counts it.
    const probes = [];
    let p = 0;
    while (Date.now() < end) {
      const c = customers[p++ % customers.length];
      probes.push(
        (async () => {
          const res = await api.call('POST', '/v1/events', { event_name: 'api_call', external_customer_id: c.ext, timestamp, event_id: `p${n}-${(seq += 1)}` });
          if (res.status !== 202) return void (refused += 1);
          const at = Date.now();
          c.accepted += 1;
          const want = c.accepted;
          const deadline = at + 30_000;
          let storedSeen = false;
          while (Date.now() < deadline) {
            if (!storedSeen) {
              const u = await api.call('POST', `/v1/meters/${meter}/usage`, { external_customer_id: c.ext, start_time: from, end_time: to });
              if (u.status === 200 && Number(u.body.value) >= want) {
                storedSeen = true;
                stored.push(Date.now() - at);
              }
            }
            const b = await api.call('GET', `/v1/wallets/${c.wallet}/balance?include_real_time_balance=true`);
            if (b.status === 200 && b.body.unbilled_usage >= want) {
              if (!storedSeen) stored.push(Date.now() - at);
              return void freshness.push(Date.now() - at);
            }
            await sleep(POLL_MS);
          }
          unanswered += 1;
        })(),
      );
      await sleep(PROBE_EVERY_MS);
    }
    await load;
    const seconds = (Date.now() - started) / 1000;
    await Promise.all(probes);
    const cpuAfter = cpuSeconds(stack.pids);
    const sorted = freshness.sort((a, b) => a - b);
    const storedSorted = stored.sort((a, b) => a - b);
    return {
      stored_p50_ms: percentile(storedSorted, 50),
      stored_p99_ms: percentile(storedSorted, 99),
      accepted_per_s: Math.round(accepted / seconds),
      refused,
      probes: sorted.length,
      unanswered,
      p50_ms: percentile(sorted, 50),
      p95_ms: percentile(sorted, 95),
      p99_ms: percentile(sorted, 99),
      max_ms: sorted[sorted.length - 1],
      cores_busy: coresBusy(cpuBefore, cpuAfter, seconds),
      load: os.loadavg().map((l) => l.toFixed(1)).join(' '),
    };
  } finally {
    await api.pool.close();
    await stack.stop();
  }
}

function cpuModel() {
  const line = fs.readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('model name'));
  return line ? line.split(':')[1].trim() : 'unknown';
}

async function main() {
  const brokers = process.env.KAFKA_BROKERS || '127.0.0.1:9092';
  const cpu = `${cpuModel()}, ${os.cpus().length} cores`;
  console.log(`balance freshness: ${RATE} events/s for ${DURATION_S} s over ${CUSTOMERS} customers; ${cpu}`);
  const results = [];
  for (let n = 1; n <= RUNS; n += 1) {
    const r = await run(brokers, n);
    console.log(JSON.stringify({ run: n, ...r }));
    results.push(r);
  }
  const worst = results.reduce((a, b) => (b.p99_ms > a.p99_ms ? b : a));
  console.log(`worst p99 ${worst.p99_ms} ms (goal < 2000 ms) at ${worst.accepted_per_s} events/s accepted`);
  if (process.env.WRITE_README !== '0') {
    const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
    const rows = results
      .map((r, i) => `| ${i + 1} | ${r.accepted_per_s} | ${r.probes} (${r.unanswered} unanswered) | ${r.stored_p50_ms} / ${r.stored_p99_ms} | ${r.p50_ms} | ${r.p95_ms} | ${r.p99_ms} | ${r.max_ms} | ${r.load} | ${JSON.stringify(r.cores_busy)} |`)
      .join('\n');
    const block = `<!-- RESULTS -->\n${when} UTC, ${cpu}; RATE ${RATE}, DURATION_S ${DURATION_S}, CUSTOMERS ${CUSTOMERS}, BULK ${BULK}, POLL_MS ${POLL_MS}\n\n| run | accepted events/s | probes | stored p50 / p99 ms | p50 ms | p95 ms | p99 ms | max ms | load 1/5/15 | cores busy |\n|---|---|---|---|---|---|---|---|---|---|\n${rows}\n<!-- /RESULTS -->`;
    const text = fs.readFileSync(README, 'utf8');
    fs.writeFileSync(README, text.replace(/<!-- RESULTS -->[\s\S]*<!-- \/RESULTS -->/, block));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
