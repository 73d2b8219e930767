/**
 * Does long work stall the embedded default (`npm start`)? Issue #30 item 4.
 *
 *   npx tsc -b tsconfig.build.json && node bench/embedded/stall.js
 *
 * Builds nothing: runs services/standalone/dist/main.js as `npm start` does (no DATABASE_URL,
 * no KAFKA_BROKERS, one embedded PGlite database) on a fresh DATA_DIR, with its development
 * key. Per run:
 *  1. creates CUSTOMERS (50) customers;
 *  2. "import": uploads a JSONL file of IMPORT_ROWS (30,000) events as an import task and,
 *     from the upload's 202 until the task is COMPLETED, a client sends `GET /v1/customers`
 *     one after another (GAP_MS (20) apart, each with a 10 s limit): their latencies;
 *  3. brings the stored events to EXPORT_EVENTS (100,000) with a second import (not measured);
 *  4. "export": starts an export task of every event (JSONL) and measures the same client
 *     until it is COMPLETED.
 * Before the import, "idle": the same client for IDLE_MS (3,000) with no task running: the
 * ceiling of the run, what a GET costs this process when nothing else runs.
 * Prints per phase the p50, p99 and max latency of the GETs, how many timed out, the task's
 * duration, the p99 as a multiple of the idle p99 of the same run, and the process's CPU time
 * (user + system, /proc) per task row; after RUNS (1) runs, a summary of the worst of them
 * (goal: p99 < 250 ms).
 *
 * Settings: RUNS (1), CUSTOMERS (50), IMPORT_ROWS (30000), EXPORT_EVENTS (100000), GAP_MS (20),
 * KEEP_DIRS=1 (leaves the data directories in the temp dir), CHILD_OUTPUT=1 (the process's
 * stderr on this one's, e.g. its warnings), plus any setting of the process
 * (e.g. TASKS_BATCH_ROWS) passed through the environment.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { percentile, sleep } = require('../common');
const { MAIN, client, cpuModel, finished, start, stop, timeoutSignal } = require('./process');

const RUNS = Number(process.env.RUNS || 1);
const CUSTOMERS = Number(process.env.CUSTOMERS || 50);
const IMPORT_ROWS = Number(process.env.IMPORT_ROWS || 30_000);
const EXPORT_EVENTS = Number(process.env.EXPORT_EVENTS || 100_000);
const GAP_MS = Number(process.env.GAP_MS || 20);
const IDLE_MS = Number(process.env.IDLE_MS || 3000);
const REQUEST_LIMIT_MS = 10_000;
const GOAL_P99_MS = 250;

/** CPU time (user + system) of process `pid` so far, in ms (/proc/<pid>/stat, clock ticks of 10 ms). */
function cpuMs(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

/** A client sending `GET /v1/customers` one after another until `stop()`: latencies in ms. */
function prober(url, key) {
  const latencies = [];
  let timeouts = 0;
  let failures = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      try {
        const res = await fetch(`${url}/v1/customers?limit=20`, { headers: { authorization: `Bearer ${key}` }, signal: timeoutSignal(REQUEST_LIMIT_MS) });
        await res.arrayBuffer();
        if (res.status !== 200) failures += 1;
      } catch {
        timeouts += 1;
      }
      latencies.push(performance.now() - t0);
      await sleep(GAP_MS);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      const sorted = latencies.slice().sort((a, b) => a - b);
      return { n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN, timeouts, failures };
    },
  };
}

function eventsFile(from, count) {
  const lines = [];
  const t0 = Date.UTC(2026, 0, 1);
  for (let i = from; i < from + count; i += 1) {
    lines.push(
      JSON.stringify({
        event_id: `stall-${i}`,
        event_name: 'api_call',
        external_customer_id: `stall-c${i % CUSTOMERS}`,
        timestamp: new Date(t0 + i * 1000).toISOString(),
        properties: { n: i % 7, region: 'eu' },
      }),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Runs `task` (a 202 answer's promise) with the prober beside it, until the task finishes. */
async function measured(api, url, key, pid, what, expected, begin) {
  const probe = prober(url, key);
  const t0 = Date.now();
  const cpu0 = cpuMs(pid);
  const task = await (async () => {
    const res = await begin();
    if (res.status !== 202) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
    return finished(api, res.body.id);
  })().finally(() => probe.stop());
  const latency = await probe.stop();
  if (task.task_status !== 'COMPLETED' || task.failed_records !== 0 || task.processed_records !== expected) throw new Error(`${what}: the task ended ${task.task_status}: ${task.error_summary} ${JSON.stringify(task.errors.slice(0, 3))}`);
  const cpuPerRowUs = ((cpuMs(pid) - cpu0) * 1000) / task.processed_records;
  return { what, seconds: (Date.now() - t0) / 1000, records: task.processed_records, cpuPerRowUs, ...latency };
}

/** The same client with nothing else running, for IDLE_MS: the run's ceiling. */
async function idle(url, key) {
  const probe = prober(url, key);
  await sleep(IDLE_MS);
  return probe.stop();
}

async function run(n) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billstream-stall-'));
  const proc = await start(dataDir);
  try {
    const api = client(proc.url, proc.key);
    for (let i = 0; i < CUSTOMERS; i += 1) {
      const res = await api('POST', '/v1/customers', { external_customer_id: `stall-c${i}`, name: `Customer ${i}` });
      if (res.status !== 201) throw new Error(`POST /v1/customers: ${res.status} ${JSON.stringify(res.body)}`);
    }
    const ceiling = await idle(proc.url, proc.key);
    console.log(`run ${n} idle: GET /v1/customers x ${ceiling.n}: p50 ${ceiling.p50.toFixed(1)} ms, p99 ${ceiling.p99.toFixed(1)} ms, max ${ceiling.max.toFixed(1)} ms`);
    const imported = await measured(api, proc.url, proc.key, proc.child.pid, 'import', IMPORT_ROWS, () =>
      api('POST', '/v1/tasks/imports?entity_type=EVENTS&file_type=JSONL', eventsFile(0, IMPORT_ROWS), 'application/x-ndjson'),
    );
    if (EXPORT_EVENTS > IMPORT_ROWS) {
      const res = await api('POST', '/v1/tasks/imports?entity_type=EVENTS&file_type=JSONL', eventsFile(IMPORT_ROWS, EXPORT_EVENTS - IMPORT_ROWS), 'application/x-ndjson');
      if (res.status !== 202) throw new Error(`seed import: ${res.status}`);
      const seeded = await finished(api, res.body.id);
      if (seeded.task_status !== 'COMPLETED' || seeded.failed_records !== 0) throw new Error(`seed import ended ${seeded.task_status}: ${seeded.error_summary}`);
    }
    const exported = await measured(api, proc.url, proc.key, proc.child.pid, 'export', Math.max(IMPORT_ROWS, EXPORT_EVENTS), () => api('POST', '/v1/tasks', { task_type: 'EXPORT', entity_type: 'EVENTS', file_type: 'JSONL' }));
    for (const r of [imported, exported]) {
      r.ratio = r.p99 / ceiling.p99;
      r.idleP99 = ceiling.p99;
      console.log(
        `run ${n} ${r.what}: ${r.records} rows in ${r.seconds.toFixed(1)} s, ${r.cpuPerRowUs.toFixed(0)} µs CPU per row; GET /v1/customers x ${r.n}: p50 ${r.p50.toFixed(0)} ms, ` +
          `p99 ${r.p99.toFixed(0)} ms (${r.ratio.toFixed(1)}x idle), max ${r.max.toFixed(0)} ms, timed out ${r.timeouts}, non-200 ${r.failures} (load ${load()})`,
      );
    }
    return [imported, exported];
  } finally {
    await stop(proc.child);
    if (process.env.KEEP_DIRS === '1') console.log(`kept ${dataDir}`);
    else fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: build first (npx tsc -b tsconfig.build.json)`);
  console.log(`CPU: ${cpuModel()}; load average ${load()}; TASKS_BATCH_ROWS ${process.env.TASKS_BATCH_ROWS ?? '(default)'}`);
  const results = [];
  for (let n = 1; n <= RUNS; n += 1) results.push(...(await run(n)));
  console.log(`\nworst of ${RUNS} run(s), ${new Date().toISOString().slice(0, 16)} UTC, ${cpuModel()}, load average at the end ${load()}:`);
  console.log('| phase | rows | duration | CPU per row | GETs | p50 | p99 | p99 / idle p99 of its run | max | timed out | p99 < 250 ms |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const what of ['import', 'export']) {
    const of = results.filter((r) => r.what === what);
    const worst = (k) => Math.max(...of.map((r) => r[k]));
    const p99 = worst('p99');
    console.log(
      `| ${what} | ${of[0].records} | ${worst('seconds').toFixed(1)} s | ${worst('cpuPerRowUs').toFixed(0)} µs | ${Math.min(...of.map((r) => r.n))} | ${worst('p50').toFixed(0)} ms | ` +
        `${p99.toFixed(0)} ms | ${worst('ratio').toFixed(1)}x (idle p99 ${Math.min(...of.map((r) => r.idleP99)).toFixed(1)}-${worst('idleP99').toFixed(1)} ms) | ${worst('max').toFixed(0)} ms | ${worst('timeouts')} | ${p99 < GOAL_P99_MS ? 'met' : 'not met'} |`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
