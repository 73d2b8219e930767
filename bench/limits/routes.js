/**
 * CPU per request of three routes through the gateway (issue #34 item 3), beside the proxied
 * floor of the same run: the entitlement check (entitlements), a wallet debit (wallet, a write) and a
 * customer read (customer). The per-request work every route shares (the gateway's HTTP, key,
 * rate limit, forward; the owner's HTTP, token, validation, answer) shows in all three.
 *
 *   npx tsc -b tsconfig.build.json && KAFKA_BROKERS=127.0.0.1:9092 node bench/limits/routes.js
 *
 * Starts customer, wallet, ingestion-aggregator, billing, entitlements and gateway as separate processes (their
 * dist/main.js with the Dockerfile's node flags) on a fresh database and Kafka. Set-up through the
 * gateway: a BOOLEAN feature on a plan, CUSTOMERS customers with a subscription and a prepaid
 * wallet of 1,000,000 credits each. Then per run: the proxied floor (bench/limits/ceilings.js) at
 * RATE for SECONDS, and each route open loop at RATE for SECONDS (after WARMUP_S of it) with
 * bench/lean-client.js: p50/p99/max from each request's slot, and CPU µs per request of the
 * gateway, the route's owner and Postgres (every backend). Worst of RUNS.
 *
 * Settings: RUNS (3), RATE (500), SECONDS (15), WARMUP_S (5), CUSTOMERS (200), KAFKA_BROKERS
 * (127.0.0.1:9092), ROUTES (check,debit,customer), ADMIN_DATABASE_URL.
 */
const { randomBytes } = require('node:crypto');
const { apiClient, adminQuery: admin, latencyFigures } = require('../common');
const { startStack, setUp } = require('./stack');
const { leanClient } = require('../lean-client');
const { proxiedFloor, openLoop } = require('./ceilings');
const { cpuMeter, cpuModel, ratio } = require('./report');

const RUNS = Number(process.env.RUNS || 3);
const RATE = Number(process.env.RATE || 500);
const SECONDS = Number(process.env.SECONDS || 15);
const WARMUP_S = Number(process.env.WARMUP_S || 5);
const CUSTOMERS = Number(process.env.CUSTOMERS || 200);
const ROUTES = (process.env.ROUTES || 'check,debit,customer').split(',');

/** The request of route `name` for the i-th call: [method, path, body, expected status]. */
function requestOf(name, customers, i) {
  const c = customers[i % customers.length];
  if (name === 'check') return ['POST', '/v1/entitlements/check', JSON.stringify({ customer_id: c.id, feature_lookup_key: 'sso' }), 200];
  if (name === 'debit') return ['POST', `/v1/wallets/${c.wallet}/debit`, JSON.stringify({ credits: '0.01' }), 201];
  if (name === 'customer') return ['GET', `/v1/customers/${c.id}`, undefined, 200];
  throw new Error(`unknown route ${name}`);
}

async function measureRoute(name, stack, key, customers) {
  const client = leanClient(stack.url, { headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, connections: 64 });
  let i = 0;
  let wrong = 0;
  const send = async () => {
    const [method, path, body, expected] = requestOf(name, customers, (i += 1));
    const res = await client.call(method, path, body);
    if (res.status !== expected) wrong += 1;
  };
  try {
    await openLoop(send, RATE, WARMUP_S);
    wrong = 0;
    const owner = { check: 'entitlements', debit: 'wallet', customer: 'customer' }[name];
    const meter = cpuMeter({ gateway: stack.pids.gateway, [owner]: stack.pids[owner] });
    const latencies = await openLoop(send, RATE, SECONDS);
    const cpu = meter.perOp(latencies.length);
    return {
      requests: latencies.length,
      wrong_status: wrong,
      ...latencyFigures(latencies),
      cpu_us_per_request: { gateway: cpu.gateway, [owner]: cpu[owner], gateway_and_owner: Number((cpu.gateway + cpu[owner]).toFixed(1)), postgres: cpu.postgres, kafka: cpu.kafka },
    };
  } finally {
    await client.close();
  }
}

async function main() {
  const dbName = `bench_routes_${Date.now().toString(36)}`;
  const key = `bsk_bench_${randomBytes(18).toString('base64url')}`;
  await admin(`CREATE DATABASE "${dbName}"`);
  console.log(`CPU: ${cpuModel()}; ${RUNS} runs; ${RATE} requests/s for ${SECONDS} s per route; ${CUSTOMERS} customers`);
  const results = [];
  let stack;
  try {
    stack = await startStack(dbName, key);
    const api = apiClient(stack.url, key, { connections: 16 });
    const customers = await setUp(api, CUSTOMERS);
    await api.pool.close();
    for (let run = 1; run <= RUNS; run += 1) {
      const floor = await proxiedFloor({ rate: RATE, seconds: SECONDS });
      const routes = {};
      for (const name of ROUTES) {
        const r = await measureRoute(name, stack, key, customers);
        routes[name] = { ...r, p99_vs_floor_p99: ratio(r.p99_ms, floor.p99_ms).ratio, cpu_vs_floor: ratio(r.cpu_us_per_request.gateway_and_owner, floor.cpu_us_per_request.server + floor.cpu_us_per_request.proxy).ratio };
      }
      const result = { run, floor, routes };
      results.push(result);
      console.log(JSON.stringify(result));
    }
  } finally {
    if (stack) await stack.stop();
    await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  }
  const worst = (name, pick) => Math.max(...results.map((r) => pick(r.routes[name])));
  console.log('\n| route | CPU µs a request, gateway + owner (worst) | x floor CPU | p99 ms (worst) | x floor p99 |');
  console.log('|---|---|---|---|---|');
  for (const name of ROUTES) {
    console.log(`| ${name} | ${worst(name, (r) => r.cpu_us_per_request.gateway_and_owner)} | ${worst(name, (r) => r.cpu_vs_floor)} | ${worst(name, (r) => r.p99_ms)} | ${worst(name, (r) => r.p99_vs_floor_p99)} |`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
