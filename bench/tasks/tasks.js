#!/usr/bin/env node
/**
 * Tasks benchmark (issue #15): on four service processes (customer, ingestion-aggregator,
 * billing, gateway) from their build output, real Postgres and Kafka:
 *
 * - export: 1,000,000 events of one tenant to CSV. The events are written into the aggregator's
 *   `ingestion.events` by SQL (set-up, not measured). Measured: from `POST /v1/tasks` to the
 *   task COMPLETED (polled every 100 ms), and the billing process's VmRSS sampled every 50 ms
 *   (the export runs there): its peak during the export less its value just before. Then the
 *   file is downloaded through the gateway, counted line by line as it streams (not held), and
 *   checked: header + 1,000,000 rows.
 * - import: 100,000 events as JSONL (~16 MB) in one `POST /v1/tasks/imports`. Measured: from
 *   the start of the upload to the task COMPLETED (every event validated and acknowledged by
 *   Kafka, as `POST /v1/events/bulk` answers 202), and to all 100,000 stored by the aggregator.
 *
 * RUNS (3) of each, worst reported. Settings: EVENTS (1000000), IMPORT_EVENTS (100000), RUNS,
 * SCENARIOS (export,import), KAFKA_BROKERS (127.0.0.1:9092), KEEP_DB=1.
 * Usage: npx tsc -b tsconfig.build.json && node bench/tasks/tasks.js
 */
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const { execFileSync } = require('node:child_process');
const { Client } = require('pg');
const { Pool } = require('undici');
const { performance } = require('node:perf_hooks');
const { commonServiceEnv, launchAll, ADMIN_URL, adminQuery: admin, sleep, freePort, stopProcess } = require('../common');

const EVENTS = Number(process.env.EVENTS || 1_000_000);
const IMPORT_EVENTS = Number(process.env.IMPORT_EVENTS || 100_000);
const RUNS = Number(process.env.RUNS || 3);
const SCENARIOS = (process.env.SCENARIOS || 'export,import').split(',');
const BROKERS = process.env.KAFKA_BROKERS || '127.0.0.1:9092';
const TENANT = 'bench-tenant';
const ENV = 'production';

function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

async function startStack(dbName) {
  await admin(`CREATE DATABASE "${dbName}"`);
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const key = `bsk_bench_${randomBytes(18).toString('base64url')}`;
  const names = ['customer', 'ingestion-aggregator', 'billing', 'gateway'];
  const ports = {};
  for (const n of names) ports[n] = await freePort();
  const url = (n) => `http://127.0.0.1:${ports[n]}`;
  const unused = 'http://127.0.0.1:9';
  const common = commonServiceEnv({ dbUrl, dbName, brokers: BROKERS });
  const env = {
    customer: {},
    'ingestion-aggregator': {},
    billing: { CUSTOMER_SERVICE_URL: url('customer'), INGESTION_SERVICE_URL: url('ingestion-aggregator'), WALLET_SERVICE_URL: unused, BILLING_INTERVAL_MS: '0', TASKS_POLL_MS: '100', ...(process.env.TASKS_BATCH_ROWS ? { TASKS_BATCH_ROWS: process.env.TASKS_BATCH_ROWS } : {}) },
    gateway: {
      CUSTOMER_SERVICE_URL: url('customer'),
      WALLET_SERVICE_URL: unused,
      INGESTION_SERVICE_URL: url('ingestion-aggregator'),
      BILLING_SERVICE_URL: url('billing'),
      WEBHOOK_SERVICE_URL: unused,
      BOOTSTRAP_API_KEY: key,
      BOOTSTRAP_TENANT_ID: TENANT,
      BOOTSTRAP_ENVIRONMENT_ID: ENV,
      RATE_LIMIT_RPS: '1000000',
      RATE_LIMIT_BURST: '1000000',
    },
  };
  const procs = await launchAll(names, (n) => ({ ...common, ...env[n], PORT: String(ports[n]) }), url);
  return {
    url: url('gateway'),
    databaseUrl: dbUrl.toString(),
    pids: Object.fromEntries(names.map((n, i) => [n, procs[i].child.pid])),
    key,
    stop: async () => {
      for (const proc of [...procs].reverse()) await stopProcess(proc);
      if (!process.env.KEEP_DB) await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    },
  };
}

function client(stack) {
  const pool = new Pool(stack.url, { connections: 8, headersTimeout: 600_000, bodyTimeout: 600_000 });
  const auth = { authorization: `Bearer ${stack.key}` };
  const call = async (method, path, body, contentType = 'application/json') => {
    const res = await pool.request({ method, path, headers: { ...auth, 'content-type': contentType }, body: body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body) });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
  };
  /** Streams a download, counting bytes and line breaks only. */
  const download = async (path) => {
    const res = await pool.request({ method: 'GET', path, headers: auth });
    if (res.statusCode !== 200) throw new Error(`download answered ${res.statusCode}: ${await res.body.text()}`);
    let bytes = 0;
    let lines = 0;
    for await (const chunk of res.body) {
      bytes += chunk.length;
      for (let i = 0; i < chunk.length; i += 1) if (chunk[i] === 0x0a) lines += 1;
    }
    return { bytes, lines };
  };
  return { call, download, close: () => pool.close() };
}

async function waitTask(api, id, onPoll) {
  for (;;) {
    const res = await api.call('GET', `/v1/tasks/${id}`);
    if (res.status !== 200) throw new Error(`task ${id}: ${res.status} ${JSON.stringify(res.body)}`);
    if (onPoll) onPoll(res.body);
    if (['COMPLETED', 'FAILED', 'CANCELLED'].includes(res.body.task_status)) return res.body;
    await sleep(100);
  }
}

async function seedEvents(databaseUrl) {
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    const started = Date.now();
    await pg.query(`
      INSERT INTO ingestion.events (tenant_id, environment_id, event_id, event_name, external_customer_id, customer_id, timestamp, properties, source, received_at)
      SELECT $1, $2, 'evt-' || lpad(g::text, 8, '0'), 'api_call', 'cust-' || (g % 1000), NULL,
             timestamptz '2026-10-01' + g * interval '1 second', jsonb_build_object('region', 'eu, west', 'n', g), 'bench', now()
        FROM generate_series(1, $3::int) g`, [TENANT, ENV, EVENTS]);
    await pg.query('ANALYZE ingestion.events');
    return (Date.now() - started) / 1000;
  } finally {
    await pg.end();
  }
}

async function exportRun(stack, api) {
  const pid = stack.pids.billing;
  const before = rssMb(pid);
  let peak = before;
  const sampler = setInterval(() => {
    const r = rssMb(pid);
    if (r > peak) peak = r;
  }, 50);
  const started = performance.now();
  const created = await api.call('POST', '/v1/tasks', { task_type: 'EXPORT', entity_type: 'EVENTS', file_type: 'CSV' });
  if (created.status !== 202) throw new Error(`export: ${created.status} ${JSON.stringify(created.body)}`);
  const progress = [];
  const task = await waitTask(api, created.body.id, (t) => progress.push(t.processed_records));
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  if (task.task_status !== 'COMPLETED') throw new Error(`export ended ${task.task_status}: ${task.error_summary}`);
  const dlStart = performance.now();
  const file = await api.download(`/v1/tasks/${task.id}/download`);
  const dlSeconds = (performance.now() - dlStart) / 1000;
  const ok = task.processed_records === EVENTS && file.lines === EVENTS + 1 && file.bytes === task.file_size_bytes;
  return { seconds, rssBefore: before, rssPeak: peak, growth: peak - before, mb: task.file_size_bytes / 1024 / 1024, dlSeconds, ok, progressSteps: new Set(progress).size };
}

async function importRun(stack, api, run) {
  const lines = [];
  for (let i = 0; i < IMPORT_EVENTS; i += 1) {
    lines.push(JSON.stringify({ event_id: `imp-${run}-${i}`, event_name: 'api_call', external_customer_id: `imp-${run}-${i % 500}`, timestamp: new Date(Date.UTC(2026, 9, 1) + i * 1000).toISOString(), properties: { region: 'eu', n: i } }));
  }
  const body = Buffer.from(lines.join('\n') + '\n');
  const pg = new Client({ connectionString: stack.databaseUrl });
  await pg.connect();
  const count = async () => Number((await pg.query(`SELECT count(*) AS n FROM ingestion.events WHERE tenant_id = $1 AND event_id LIKE $2`, [TENANT, `imp-${run}-%`])).rows[0].n);
  try {
    const started = performance.now();
    const created = await api.call('POST', '/v1/tasks/imports?entity_type=EVENTS&file_type=JSONL', body, 'application/x-ndjson');
    if (created.status !== 202) throw new Error(`import: ${created.status} ${JSON.stringify(created.body)}`);
    const uploaded = (performance.now() - started) / 1000;
    const task = await waitTask(api, created.body.id);
    const completed = (performance.now() - started) / 1000;
    if (task.task_status !== 'COMPLETED' || task.successful_records !== IMPORT_EVENTS) throw new Error(`import ended ${task.task_status} ${task.successful_records}`);
    while ((await count()) < IMPORT_EVENTS) await sleep(100);
    const stored = (performance.now() - started) / 1000;
    return { mb: body.length / 1024 / 1024, uploaded, completed, stored, ok: (await count()) === IMPORT_EVENTS };
  } finally {
    await pg.end();
  }
}

async function main() {
  const cpu = execFileSync('lscpu').toString().match(/Model name:\s*(.*)/)?.[1] ?? 'unknown';
  const uptime = () => execFileSync('uptime').toString().trim();
  console.log(`CPU: ${cpu}, ${os.cpus().length} cores; ${uptime()}`);
  const dbName = `bench_tasks_${Date.now()}`;
  const stack = await startStack(dbName);
  const api = client(stack);
  try {
    if (SCENARIOS.includes('export')) {
      const seedS = await seedEvents(stack.databaseUrl);
      console.log(`seeded ${EVENTS} events in ${seedS.toFixed(1)} s (set-up, not measured)`);
      const runs = [];
      const baseline = rssMb(stack.pids.billing);
      for (let r = 1; r <= RUNS; r += 1) {
        const load = uptime();
        const res = await exportRun(stack, api);
        runs.push(res);
        console.log(
          `export run ${r}: ${res.seconds.toFixed(1)} s to COMPLETED, ${res.mb.toFixed(1)} MB CSV, billing RSS ${res.rssBefore.toFixed(0)} -> peak ${res.rssPeak.toFixed(0)} MB (growth ${res.growth.toFixed(0)} MB), ${res.progressSteps} progress values seen, download ${res.dlSeconds.toFixed(1)} s, check ${res.ok ? 'ok' : 'FAILED'}; ${load}`,
        );
      }
      const worst = runs.reduce((a, b) => (b.seconds > a.seconds ? b : a));
      const worstGrowth = Math.max(...runs.map((r) => r.growth));
      const overall = Math.max(...runs.map((r) => r.rssPeak)) - baseline;
      console.log(
        `export worst of ${RUNS}: ${worst.seconds.toFixed(1)} s (goal < 60 s), RSS growth worst ${worstGrowth.toFixed(0)} MB within a run, ${overall.toFixed(0)} MB from billing's idle RSS before the first export (${baseline.toFixed(0)} MB) to its highest peak (goal < 100 MB)`,
      );
    }
    if (SCENARIOS.includes('import')) {
      const runs = [];
      for (let r = 1; r <= RUNS; r += 1) {
        const load = uptime();
        const res = await importRun(stack, api, r);
        runs.push(res);
        console.log(
          `import run ${r}: ${IMPORT_EVENTS} events, ${res.mb.toFixed(1)} MB JSONL: uploaded (202) ${res.uploaded.toFixed(1)} s, COMPLETED ${res.completed.toFixed(1)} s, all stored ${res.stored.toFixed(1)} s, check ${res.ok ? 'ok' : 'FAILED'}; ${load}`,
        );
      }
      const worst = runs.reduce((a, b) => (b.completed > a.completed ? b : a));
      const worstStored = Math.max(...runs.map((r) => r.stored));
      console.log(`import worst of ${RUNS}: COMPLETED ${worst.completed.toFixed(1)} s (goal < 30 s), all stored ${worstStored.toFixed(1)} s`);
    }
  } finally {
    await api.close();
    await stack.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
