/**
 * Usage events per second sent through the event batcher of @billstream/client to the
 * embedded default (`npm start`: all services in one process, embedded PGlite, in-process bus).
 *
 *   npx tsc -b tsconfig.build.json && node bench/client/batcher.js
 *
 * Starts services/standalone/dist/main.js as `npm start` does (no DATABASE_URL, no
 * KAFKA_BROKERS) on a fresh DATA_DIR, takes the development key it writes, then RUNS (3)
 * times enqueues EVENTS (50,000) events of a customer of that run through
 * `client.events.enqueue` (awaited: back-pressure holds the load generator to what the server
 * takes) and times from the first enqueue until `client.close()` resolved, i.e. until the
 * last bulk request was answered 202. Then checks through the event query that every event
 * of the run is stored (none lost, none twice). Prints each run (with the CPU the client's
 * process used, to tell the client's cost from the server's), the worst of the runs, the CPU
 * model (lscpu) and the load average.
 *
 * Settings: EVENTS (50000), RUNS (3), BATCH (1000, events per bulk request), CONCURRENCY (2,
 * bulk requests in flight), KEEP_DIR=1 (leaves the data directory in the temp dir).
 */
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createClient } = require('@billstream/client');
const { freePort, sleep } = require('../common');

const ROOT = path.resolve(__dirname, '../..');
const MAIN = path.join(ROOT, 'services/standalone/dist/main.js');
const EVENTS = Number(process.env.EVENTS || 50_000);
const RUNS = Number(process.env.RUNS || 3);
const BATCH = Number(process.env.BATCH || 1000);
const CONCURRENCY = Number(process.env.CONCURRENCY || 2);

function cpuModel() {
  try {
    const line = execFileSync('lscpu', { encoding: 'utf8' }).split('\n').find((l) => l.startsWith('Model name'));
    if (line) return `${line.split(':')[1].trim()} x ${os.cpus().length}`;
  } catch {
    // no lscpu: /proc/cpuinfo below
  }
  return `${os.cpus()[0].model} x ${os.cpus().length}`;
}

const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

async function startEmbeddedDefault(dataDir) {
  const port = await freePort();
  const env = { METRICS_PORT: '0', ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  delete env.KAFKA_BROKERS;
  const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const url = `http://127.0.0.1:${port}`;
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the embedded default exited:\n${output}`);
    if (Date.now() - started > 600_000) throw new Error(`not ready after 600 s:\n${output}`);
    const ready = await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false);
    if (ready) break;
    await sleep(200);
  }
  const key = fs.readFileSync(path.join(dataDir, 'dev-api-key'), 'utf8').trim();
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', resolve);
      child.kill('SIGTERM');
    });
  return { url, key, stop, startS: (Date.now() - started) / 1000 };
}

async function oneRun(server, run) {
  const customer = `bench-client-${Date.now().toString(36)}-${run}`;
  const client = createClient({ apiKey: server.key, baseUrl: server.url, events: { maxBatchSize: BATCH, maxConcurrentBatches: CONCURRENCY } });
  const timestamp = new Date().toISOString();
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (let i = 0; i < EVENTS; i++) {
    await client.events.enqueue({ event_name: 'tokens', external_customer_id: customer, timestamp, properties: { tokens: i % 977, model: 'small' } });
  }
  await client.close();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  const clientCores = (cpu.user + cpu.system) / 1e6 / seconds;
  const stats = client.events.stats;
  const reader = createClient({ apiKey: server.key, baseUrl: server.url });
  let stored = 0;
  for (let i = 0; i < 100; i++) {
    stored = (await reader.POST('/v1/events/query', { body: { external_customer_id: customer, page_size: 1 } })).total_count;
    if (stored >= EVENTS) break;
    await sleep(100);
  }
  return { run, seconds, perSecond: EVENTS / seconds, stored, stats, clientCores };
}

async function main() {
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: build first (npx tsc -b tsconfig.build.json)`);
  console.log(`CPU: ${cpuModel()}; load average ${load()}`);
  console.log(`${EVENTS} events per run, bulk requests of ${BATCH}, ${CONCURRENCY} in flight, ${RUNS} runs`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billstream-bench-client-'));
  const server = await startEmbeddedDefault(dataDir);
  console.log(`embedded default ready after ${server.startS.toFixed(1)} s at ${server.url}`);
  const results = [];
  try {
    for (let run = 1; run <= RUNS; run++) {
      const r = await oneRun(server, run);
      results.push(r);
      console.log(
        `run ${run}: ${r.perSecond.toFixed(0)} events/s (${r.seconds.toFixed(2)} s), ${r.stats.batches} bulk requests, ` +
          `${r.stats.retries} retried, ${r.stats.refused} refused; stored ${r.stored} of ${EVENTS}; ` +
          `client process ${r.clientCores.toFixed(2)} cores busy; load ${load()}`,
      );
      if (r.stored !== EVENTS) throw new Error(`run ${run}: ${r.stored} events stored, ${EVENTS} sent`);
    }
  } finally {
    await server.stop();
    if (process.env.KEEP_DIR === '1') console.log(`kept ${dataDir}`);
    else fs.rmSync(dataDir, { recursive: true, force: true });
  }
  const worst = results.reduce((a, b) => (a.perSecond <= b.perSecond ? a : b));
  console.log(`\nworst of ${RUNS}: ${worst.perSecond.toFixed(0)} events/s (run ${worst.run}); every event stored once`);
  console.log(`load average at the end ${load()}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
