/**
 * Reservations through the gateway (issue #51: "a reservation at 1,000/s has p99 at most 3 times
 * the proxied floor's and at most 1.5 times a debit's CPU"), beside the proxied floor and a
 * plain debit measured in the same run.
 *
 *   npx tsc -b tsconfig.build.json && KAFKA_BROKERS=127.0.0.1:9092 node bench/wallets/reservations.js
 *
 * The process stack of bench/limits/routes.js (bench/limits/stack.js: customer, wallet,
 * ingestion-aggregator, billing, entitlements and gateway as separate processes on a fresh
 * database and Kafka), CUSTOMERS customers with a prepaid wallet of 1,000,000 credits. Then per
 * run, each open loop at RATE/s for SECONDS after WARMUP_S of it (bench/limits/ceilings.js
 * openLoop, bench/lean-client.js), latency from each request's slot:
 * - `floor`: the proxied floor (bench/limits/ceilings.js proxiedFloor), CPU of its server + proxy;
 * - `debit`: `POST /v1/wallets/{id}/debit` of 0.01 credits (the CPU the reservation is held to);
 * - `create`: `POST /v1/reservations` of 0.01 credits (a reservation: the figure of the goal);
 * - `pair`: a create and then its commit of 0.005 (`POST /v1/reservations/{id}/commit`), RATE
 *   pairs/s, the latency of the pair (both calls) and CPU per pair.
 * CPU µs per operation of the gateway and the wallet (and Postgres, every backend). Worst of RUNS.
 *
 * Settings: RUNS (3), RATE (1000), SECONDS (15), WARMUP_S (5), CUSTOMERS (200), EXPIRES_IN (s, 300,
 * of the created holds), MODES (debit,create; add pair for the pairs), KAFKA_BROKERS (127.0.0.1:9092),
 * PROFILE_WALLET=1 (the wallet with --cpu-prof; a summary printed at the end), ADMIN_DATABASE_URL.
 */
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { apiClient, adminQuery: admin, latencyFigures, summarizeProfile } = require('../common');
const { startStack, setUp } = require('../limits/stack');
const { leanClient } = require('../lean-client');
const { proxiedFloor, openLoop } = require('../limits/ceilings');
const { cpuMeter, cpuModel, ratio } = require('../limits/report');

const RUNS = Number(process.env.RUNS || 3);
const RATE = Number(process.env.RATE || 1000);
const SECONDS = Number(process.env.SECONDS || 15);
const WARMUP_S = Number(process.env.WARMUP_S || 5);
const CUSTOMERS = Number(process.env.CUSTOMERS || 200);
const EXPIRES_IN = Number(process.env.EXPIRES_IN || 300);
const MODES = (process.env.MODES || 'debit,create').split(',');
const PROFILE_DIR = process.env.PROFILE_WALLET ? fs.mkdtempSync(path.join(os.tmpdir(), 'billstream-prof-resv-')) : '';

const tag = randomBytes(4).toString('hex');

async function measure(mode, stack, key, customers) {
  const client = leanClient(stack.url, { headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, connections: 128 });
  let i = 0;
  let wrong = 0;
  const expect = (res, status) => {
    if (res.status !== status) wrong += 1;
    return res;
  };
  const reserve = (c, n) =>
    client.call('POST', '/v1/reservations', JSON.stringify({ customer_id: c.id, currency: 'usd', credits: '0.01', expires_in: EXPIRES_IN, idempotency_key: `${tag}-${mode}-${n}` }));
  const send = async () => {
    const n = (i += 1);
    const c = customers[n % customers.length];
    if (mode === 'debit') return expect(await client.call('POST', `/v1/wallets/${c.wallet}/debit`, JSON.stringify({ credits: '0.01' })), 201);
    const held = expect(await reserve(c, n), 201);
    if (mode === 'pair' && held.status === 201) expect(await client.call('POST', `/v1/reservations/${held.body.id}/commit`, JSON.stringify({ credits: '0.005' })), 200);
    return held;
  };
  try {
    await openLoop(send, RATE, WARMUP_S);
    wrong = 0;
    const meter = cpuMeter({ gateway: stack.pids.gateway, wallet: stack.pids.wallet });
    const latencies = await openLoop(send, RATE, SECONDS);
    const cpu = meter.perOp(latencies.length);
    return {
      requests: latencies.length,
      wrong_status: wrong,
      ...latencyFigures(latencies),
      cpu_us_per_op: { gateway: cpu.gateway, wallet: cpu.wallet, gateway_and_wallet: Number((cpu.gateway + cpu.wallet).toFixed(1)), postgres: cpu.postgres, kafka: cpu.kafka },
    };
  } finally {
    await client.close();
  }
}

async function main() {
  const dbName = `bench_resv_${Date.now().toString(36)}`;
  const key = `bsk_bench_${randomBytes(18).toString('base64url')}`;
  await admin(`CREATE DATABASE "${dbName}"`);
  console.log(`CPU: ${cpuModel()}; load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; ${RUNS} runs; ${RATE}/s for ${SECONDS} s per mode; ${CUSTOMERS} customers`);
  const results = [];
  let stack;
  try {
    // bench/common.js launch: BENCH_NODE_FLAGS_<name> adds node flags to that process's.
    if (PROFILE_DIR) process.env.BENCH_NODE_FLAGS_wallet = `--cpu-prof --cpu-prof-dir=${PROFILE_DIR}`;
    stack = await startStack(dbName, key);
    const api = apiClient(stack.url, key, { connections: 16 });
    const customers = await setUp(api, CUSTOMERS);
    await api.pool.close();
    for (let run = 1; run <= RUNS; run += 1) {
      const floor = await proxiedFloor({ rate: RATE, seconds: SECONDS });
      const modes = {};
      for (const mode of MODES) modes[mode] = await measure(mode, stack, key, customers);
      const debitCpu = modes.debit?.cpu_us_per_op.gateway_and_wallet;
      for (const m of Object.values(modes)) {
        m.p99_vs_floor_p99 = ratio(m.p99_ms, floor.p99_ms).ratio;
        if (debitCpu) m.cpu_vs_debit = ratio(m.cpu_us_per_op.gateway_and_wallet, debitCpu).ratio;
        if (debitCpu) m.wallet_cpu_vs_debit = ratio(m.cpu_us_per_op.wallet, modes.debit.cpu_us_per_op.wallet).ratio;
      }
      const result = { run, load: os.loadavg()[0], floor, modes };
      results.push(result);
      console.log(JSON.stringify(result));
    }
  } finally {
    if (stack) await stack.stop();
    await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    if (PROFILE_DIR) console.log(JSON.stringify(summarizeProfile(PROFILE_DIR), null, 2));
  }
  const worst = (mode, pick) => Math.max(...results.map((r) => pick(r.modes[mode])));
  console.log(`\nfloor p99 ms per run: ${results.map((r) => r.floor.p99_ms).join(', ')}; floor CPU µs (server + proxy): ${results.map((r) => r.floor.cpu_us_per_request.server + r.floor.cpu_us_per_request.proxy).join(', ')}`);
  console.log('\n| mode | p99 ms (worst) | x floor p99 (worst) | CPU µs gateway + wallet (worst) | x debit CPU (worst) | wallet CPU µs (worst) | x debit wallet CPU (worst) | wrong status |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const mode of MODES) {
    console.log(
      `| ${mode} | ${worst(mode, (m) => m.p99_ms)} | ${worst(mode, (m) => m.p99_vs_floor_p99)} | ${worst(mode, (m) => m.cpu_us_per_op.gateway_and_wallet)} | ${worst(mode, (m) => m.cpu_vs_debit ?? 0)} | ${worst(mode, (m) => m.cpu_us_per_op.wallet)} | ${worst(mode, (m) => m.wallet_cpu_vs_debit ?? 0)} | ${worst(mode, (m) => m.wrong_status)} |`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
