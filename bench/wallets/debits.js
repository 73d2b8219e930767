/**
 * Wallet debit latency through the gateway, open model (fixed arrival rate).
 *
 *   npx tsc -b tsconfig.build.json && node bench/wallets/debits.js
 *
 * MODE=embedded (default) runs the embedded default as `npm start` does
 * (services/standalone/dist/main.js) in a process of its own; MODE=processes runs gateway,
 * customer, wallet and webhook-dispatcher as separate processes on Kafka (KAFKA_BROKERS).
 * Both on a fresh database of the local Postgres. Creates customers and wallets through the
 * gateway, waits until the set-up's events are consumed, then sends
 * POST /v1/wallets/{id}/debit at a fixed arrival rate from this process: a request is sent
 * when its slot comes, whether or not earlier ones have finished, and its latency counts from
 * its slot (no coordinated omission). Reports the CPU each process used while measuring.
 *
 * Scenarios (SCENARIOS=hot,many): one hot wallet at 200/s, and 1,000 wallets at 1,000/s.
 * Writes the figures to bench/wallets/README.md (between the RESULTS markers) unless
 * WRITE_README=0.
 *
 * Settings: ADMIN_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres),
 * DURATION_S per scenario (default 30), WARMUP_S (default 5), DATABASE_POOL_MAX (20),
 * PROFILE=<process name> (CPU profile summary), KEEP_DB=1, PG_LOG_DURATIONS=1,
 * BENCH_KAFKA_BROKERS (the embedded default on Kafka instead of the in-process bus).
 */
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { Pool } = require('undici');
const { performance } = require('node:perf_hooks');

const { launchAll, settleSetup, cpuSeconds, coresBusy, ADMIN_URL, adminQuery: admin, percentile, freePort, launch, waitReady, stopProcess, summarizeProfile } = require('../common');
const DURATION_S = Number(process.env.DURATION_S || 30);
const WARMUP_S = Number(process.env.WARMUP_S || 5);
const KAFKA = process.env.BENCH_KAFKA_BROKERS ? process.env.BENCH_KAFKA_BROKERS.split(',') : undefined;
const README = path.join(__dirname, 'README.md');
const MODE = process.env.MODE || 'embedded';
const KAFKA_BROKERS = process.env.KAFKA_BROKERS || '127.0.0.1:9092';
const PROFILE = process.env.PROFILE || '';
const PROFILE_DIR = PROFILE ? fs.mkdtempSync(path.join(os.tmpdir(), 'billstream-prof-')) : '';
const SCENARIOS = (process.env.SCENARIOS || 'hot,many').split(',');

async function call(pool, key, method, p, body) {
  const res = await pool.request({
    method,
    path: p,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function inParallel(items, limit, fn) {
  let next = 0;
  const workers = Array.from({ length: limit }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  });
  await Promise.all(workers);
}

async function createWallets(pool, key, count, label) {
  const ids = [];
  await inParallel(Array.from({ length: count }, (_, i) => i), 16, async (i) => {
    const customer = await call(pool, key, 'POST', '/v1/customers', { external_customer_id: `${label}-${i}` });
    if (customer.status !== 201) throw new Error(`customer create: ${customer.status} ${JSON.stringify(customer.body)}`);
    const wallet = await call(pool, key, 'POST', '/v1/wallets', {
      customer_id: customer.body.id,
      currency: 'usd',
      initial_credits_to_load: '1000000000',
    });
    if (wallet.status !== 201) throw new Error(`wallet create: ${wallet.status} ${JSON.stringify(wallet.body)}`);
    ids[i] = wallet.body.id;
  });
  return ids;
}

/** Sends debits at `rate` per second for `seconds`, open model; returns latencies and errors. */
async function drive(pool, key, walletIds, rate, seconds, label) {
  const total = Math.round(rate * seconds);
  const latencies = [];
  const errors = {};
  const inflight = [];
  const start = performance.now() + 20;
  let sent = 0;
  while (sent < total) {
    const now = performance.now();
    const due = Math.min(total, Math.floor(((now - start) * rate) / 1000) + 1);
    while (sent < due) {
      const slot = start + (sent * 1000) / rate;
      const walletId = walletIds[sent % walletIds.length];
      const i = sent;
      sent += 1;
      inflight.push(
        call(pool, key, 'POST', `/v1/wallets/${walletId}/debit`, { credits: '0.01', idempotency_key: `${label}-${i}` })
          .then((res) => {
            if (res.status === 201) latencies.push(performance.now() - slot);
            else errors[res.status] = (errors[res.status] || 0) + 1;
          })
          .catch((err) => {
            errors[err.code || 'network'] = (errors[err.code || 'network'] || 0) + 1;
          }),
      );
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: total,
    ok: latencies.length,
    errors,
    achieved_rps: Math.round((total / elapsed) * 10) / 10,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1],
  };
}

async function scenario(target, pool, key, walletIds, rate, label) {
  if (WARMUP_S > 0) await drive(pool, key, walletIds, rate, WARMUP_S, `${label}-warm`);
  const before = cpuSeconds({ ...target.pids, client: process.pid });
  const started = performance.now();
  const result = await drive(pool, key, walletIds, rate, DURATION_S, label);
  const cores = coresBusy(before, cpuSeconds({ ...target.pids, client: process.pid }), (performance.now() - started) / 1000);
  return { ...result, cores };
}

function fmt(ms) {
  return `${ms.toFixed(1)} ms`;
}

function writeReadme(rows, meta) {
  const table = [
    '| scenario | target rate | achieved | requests | ok | errors | p50 | p95 | p99 | max | p99 goal |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.rate}/s | ${r.achieved_rps}/s | ${r.requests} | ${r.ok} | ${JSON.stringify(r.errors)} | ${fmt(r.p50)} | ${fmt(r.p95)} | ${fmt(r.p99)} | ${fmt(r.max)} | < ${r.goal} ms ${r.p99 < r.goal ? 'met' : 'MISSED'} |`,
    ),
  ].join('\n');
  const block = `<!-- RESULTS:START -->\nRun ${meta.date} on ${meta.cpus} cores (${meta.cpuModel}) (load average at start ${meta.load}); bus: ${meta.bus}; ${DURATION_S} s per scenario after a ${WARMUP_S} s warm-up.\n\n${table}\n<!-- RESULTS:END -->`;
  const current = fs.existsSync(README) ? fs.readFileSync(README, 'utf8') : '';
  const next = current.includes('<!-- RESULTS:START -->')
    ? current.replace(/<!-- RESULTS:START -->[\s\S]*<!-- RESULTS:END -->/, block)
    : `${current}\n${block}\n`;
  fs.writeFileSync(README, next);
}

/** A fresh database on the local Postgres and the API key the stack will bootstrap. */
async function newBenchDatabase() {
  const dbName = `bench_wallets_${Date.now().toString(36)}`;
  await admin(`CREATE DATABASE "${dbName}"`);
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  return { dbName, dbUrl, key: `bsk_bench_${randomBytes(18).toString('base64url')}` };
}

/**
 * The services as separate processes (their dist/main.js), on Kafka, the way they are
 * deployed: gateway, customer, wallet and webhook-dispatcher, each with its own pool.
 */
async function startProcesses() {
  const { dbName, dbUrl, key } = await newBenchDatabase();
  const names = ['customer', 'wallet', 'webhook-dispatcher', 'gateway'];
  const ports = {};
  for (const n of names) ports[n] = await freePort();
  const url = (n) => `http://127.0.0.1:${ports[n]}`;
  const common = {
    DATABASE_URL: dbUrl.toString(),
    DATABASE_POOL_MAX: String(process.env.DATABASE_POOL_MAX || 20),
    KAFKA_BROKERS,
    KAFKA_TOPIC_PREFIX: `bench-${dbName}.`,
    INTERNAL_TOKEN: randomBytes(24).toString('hex'),
    LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
    HOST: '127.0.0.1',
  };
  const env = {
    customer: {},
    wallet: { CUSTOMER_SERVICE_URL: url('customer') },
    'webhook-dispatcher': {},
    gateway: {
      CUSTOMER_SERVICE_URL: url('customer'),
      WALLET_SERVICE_URL: url('wallet'),
      WEBHOOK_SERVICE_URL: url('webhook-dispatcher'),
      BILLING_SERVICE_URL: 'http://127.0.0.1:9',
      INGESTION_SERVICE_URL: 'http://127.0.0.1:9',
      BOOTSTRAP_API_KEY: key,
      BOOTSTRAP_TENANT_ID: 'bench-tenant',
      BOOTSTRAP_ENVIRONMENT_ID: 'production',
      RATE_LIMIT_RPS: '1000000',
      RATE_LIMIT_BURST: '1000000',
    },
  };
  const procs = await launchAll(names, (n) => ({ ...common, ...env[n], PORT: String(ports[n]) }), url, (n) => (PROFILE === n ? PROFILE_DIR : undefined));
  return {
    url: url('gateway'),
    databaseUrl: dbUrl.toString(),
    pids: Object.fromEntries(names.map((n, i) => [n, procs[i].child.pid])),
    key,
    stop: async () => {
      for (const proc of procs.reverse()) await stopProcess(proc);
      if (!process.env.KEEP_DB) await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
      if (PROFILE) console.log(JSON.stringify(summarizeProfile(PROFILE_DIR), null, 2));
    },
  };
}

/**
 * The embedded default as `npm start` runs it (services/standalone/dist/main.js: gateway and
 * services in one process), on a database of the local Postgres, its own process.
 */
async function startStandalone() {
  const { dbName, dbUrl, key } = await newBenchDatabase();
  if (process.env.PG_LOG_DURATIONS) await admin(`ALTER DATABASE "${dbName}" SET log_min_duration_statement = 0`);
  const port = await freePort();
  const env = {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'billstream-bench-wallets-')),
    DATABASE_URL: dbUrl.toString(),
    DATABASE_POOL_MAX: String(process.env.DATABASE_POOL_MAX || 20),
    LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
    RATE_LIMIT_RPS: '1000000',
    RATE_LIMIT_BURST: '1000000',
    BOOTSTRAP_API_KEY: key,
    BOOTSTRAP_TENANT_ID: 'bench-tenant',
    BOOTSTRAP_ENVIRONMENT_ID: 'production',
    ...(KAFKA ? { KAFKA_BROKERS: KAFKA.join(','), KAFKA_TOPIC_PREFIX: `bench-${dbName}.` } : {}),
  };
  const proc = launch('standalone', env, PROFILE === 'standalone' ? PROFILE_DIR : undefined);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(url, proc);
  } catch (err) {
    await stopProcess(proc);
    throw err;
  }
  return {
    url,
    key,
    databaseUrl: dbUrl.toString(),
    pids: { billstream: proc.child.pid },
    stop: async () => {
      await stopProcess(proc);
      if (!process.env.KEEP_DB) await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
      if (PROFILE) console.log(JSON.stringify(summarizeProfile(PROFILE_DIR), null, 2));
    },
  };
}

/** Waits until the set-up's events are consumed (bench/common.js settleSetup). */
async function settle(databaseUrl, customers) {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await settleSetup(client, customers, 'debits bench', 300_000);
  } finally {
    await client.end();
  }
}

async function main() {
  let target;
  if (MODE === 'processes') {
    target = await startProcesses();
  } else {
    target = await startStandalone();
  }
  const key = target.key;
  const pool = new Pool(target.url, { connections: 512, pipelining: 1 });
  const meta = {
    date: new Date().toISOString(),
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    load: os.loadavg().map((l) => l.toFixed(1)).join(' '),
    bus: MODE === 'processes' ? `separate processes, Kafka at ${KAFKA_BROKERS}` : KAFKA ? `embedded, Kafka at ${KAFKA.join(',')}` : 'embedded, in-process',
  };
  try {
    const hot = await createWallets(pool, key, 1, 'hot');
    const many = await createWallets(pool, key, 1000, 'many');
    await settle(target.databaseUrl, 1001);
    const rows = [];
    if (SCENARIOS.includes('hot')) {
      const a = await scenario(target, pool, key, hot, 200, 'hot');
      rows.push({ name: '1 hot wallet', rate: 200, goal: 25, ...a });
      console.log('hot wallet', a);
    }
    if (SCENARIOS.includes('many')) {
      const b = await scenario(target, pool, key, many, 1000, 'many');
      rows.push({ name: '1,000 wallets', rate: 1000, goal: 50, ...b });
      console.log('1,000 wallets', b);
    }
    if (process.env.WRITE_README !== '0') writeReadme(rows, meta);
  } finally {
    await pool.close();
    await target.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
