/**
 * The CPU cost of metrics (ADR 0020) on the paths the benches measure, in CPU time, which other
 * work on a shared machine disturbs far less than throughput or latency:
 *   1. each recording function alone (ns per call, metrics on), against the same call off;
 *   2. a whole HTTP request through createHttpApp (the app every service uses) with a
 *      trivial route, metrics off then on then off then on, CPU µs per request of this
 *      process (server and client), and the difference.
 *
 *   npx tsc -b tsconfig.build.json && node bench/observability/overhead.js
 *   # options: CALLS=1000000 REQUESTS=20000
 */
const { execFileSync } = require('node:child_process');
const os = require('node:os');
const { performance } = require('node:perf_hooks');
const { Agent, request } = require('undici');
const obs = require('@billstream/observability');
const { createHttpApp, finishApp, listen } = require('@billstream/http');
const { createLogger } = require('@billstream/logger');

const CALLS = Number(process.env.CALLS || 1_000_000);
const REQUESTS = Number(process.env.REQUESTS || 20_000);

function perCall(fn) {
  for (let i = 0; i < 10_000; i += 1) fn(i);
  const start = performance.now();
  for (let i = 0; i < CALLS; i += 1) fn(i);
  return ((performance.now() - start) * 1e6) / CALLS;
}

const CASES = {
  'recordHttpRequest (one route, status 200)': () => obs.recordHttpRequest('gateway', 'POST', '/v1/events/bulk', 202, 0.004),
  'recordBatch (consumer batch)': () => obs.recordBatch('ingestion-aggregator.usage-events', 'usage-events', 1000, 0.05, true),
  'recordDebit': () => obs.recordDebit('ok', 0.003),
  'recordEventsAccepted (one bulk request)': () => obs.recordEventsAccepted(1000),
};

async function httpCpu(_app, url, dispatcher) {
  const once = async () => {
    const res = await request(`${url}/v1/things/abc`, { dispatcher });
    await res.body.dump();
  };
  for (let i = 0; i < 2000; i += 1) await once();
  const cpu = process.cpuUsage();
  const started = performance.now();
  // 8 in flight, as a gateway under load has several requests at once.
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < REQUESTS) {
      next += 1;
      await once();
    }
  }));
  const used = process.cpuUsage(cpu);
  return { cpu_us_per_request: (used.user + used.system) / REQUESTS, wall_ms: performance.now() - started };
}

/** One process, metrics on or off: CPU µs per request through createHttpApp. */
async function child(metrics) {
  if (metrics) obs.enableMetrics();
  const logger = createLogger({ service: 'bench', level: 'warn' });
  const app = createHttpApp({ logger, service: 'bench' });
  app.get('/v1/things/:id', (_req, res) => {
    res.json({ ok: true });
  });
  finishApp(app, logger);
  const http = await listen(app, 0, '127.0.0.1');
  const dispatcher = new Agent({ connections: 8 });
  const result = await httpCpu(app, http.url, dispatcher);
  await dispatcher.close();
  await http.close();
  process.stdout.write(JSON.stringify({ metrics, ...result }));
}

async function main() {
  const off = Object.fromEntries(Object.entries(CASES).map(([k, fn]) => [k, perCall(fn)]));
  obs.enableMetrics();
  const on = Object.fromEntries(Object.entries(CASES).map(([k, fn]) => [k, perCall(fn)]));
  const calls = Object.keys(CASES).map((k) => ({ call: k, off_ns: +off[k].toFixed(1), on_ns: +on[k].toFixed(1) }));
  // Off and on alternate, each in a fresh process, so that the machine's load falls on both alike.
  const runs = [];
  for (const metrics of [false, true, false, true, false, true]) {
    const out = execFileSync(process.execPath, [process.argv[1], metrics ? 'child-on' : 'child-off'], { encoding: 'utf8' });
    runs.push(JSON.parse(out));
  }
  const mean = (m) => runs.filter((r) => r.metrics === m).reduce((s, r) => s + r.cpu_us_per_request, 0) / runs.filter((r) => r.metrics === m).length;
  console.log(
    JSON.stringify(
      {
        load_average: os.loadavg().map((l) => +l.toFixed(2)),
        calls,
        http: runs.map((r) => ({ metrics: r.metrics, cpu_us_per_request: +r.cpu_us_per_request.toFixed(1), wall_ms: Math.round(r.wall_ms) })),
        http_cpu_us_per_request: { off: +mean(false).toFixed(1), on: +mean(true).toFixed(1), added: +(mean(true) - mean(false)).toFixed(1) },
      },
      null,
      2,
    ),
  );
}

const mode = process.argv[2];
(mode ? child(mode === 'child-on') : main()).catch((err) => {
  console.error(err);
  process.exit(1);
});
