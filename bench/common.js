// Helpers shared by the benchmark scripts.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { Client } = require('pg');

const ROOT = path.resolve(__dirname, '..');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const ADMIN_URL = process.env.ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs one statement on the admin database (CREATE/DROP DATABASE of a benchmark). */
async function adminQuery(sql) {
  const c = new Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** The p-th percentile of an ascending array (nearest rank); NaN when empty. */
function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** An open loop's latencies (ms) as the benches report them: sorted in place, p50, p99 and max to 0.01 ms. */
function latencyFigures(latencies) {
  latencies.sort((a, b) => a - b);
  const ms = (v) => Number(v.toFixed(2));
  return { p50_ms: ms(percentile(latencies, 50)), p99_ms: ms(percentile(latencies, 99)), max_ms: ms(latencies[latencies.length - 1]) };
}

/**
 * A port free on 127.0.0.1 now, below the kernel's ephemeral range (as libs/testing's
 * freePort): a port from listen(0) could be taken by an outgoing connection, or handed to a
 * test stack running beside the bench, before the service listens on it.
 */
const portRange = (() => {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 12000) return { low: 10000, high: low - 1 };
  } catch {
    // not Linux: the kernel's choice
  }
  return undefined;
})();
const handedOut = new Set();
let nextPort = portRange ? portRange.low + ((process.pid * 7919 + Math.floor(Math.random() * 100000)) % (portRange.high - portRange.low)) : 0;

function probePort(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(undefined));
    s.listen(port, '127.0.0.1', () => {
      const bound = s.address().port;
      s.close(() => resolve(bound));
    });
  });
}

async function freePort() {
  for (let attempt = 0; portRange && attempt < 1000; attempt += 1) {
    const candidate = nextPort;
    nextPort = nextPort >= portRange.high ? portRange.low : nextPort + 1;
    if (handedOut.has(candidate)) continue;
    handedOut.add(candidate);
    if ((await probePort(candidate)) !== undefined) return candidate;
  }
  return probePort(0);
}

/** The node flags the Dockerfile's target for `name` runs with (CMD ["node", flags..., main]). */
function nodeFlagsOf(name) {
  const docker = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const cmd = docker.split('\n').find((l) => l.startsWith('CMD') && l.includes(`services/${name}/dist/main.js`));
  return cmd ? JSON.parse(cmd.slice(3).trim()).slice(1, -1) : [];
}

/**
 * Starts services/<name>/dist/main.js with `env` and the node flags of its Dockerfile target
 * (the benchmark runs what is deployed); with `profileDir`, under --cpu-prof. With
 * BENCH_LOG_DIR=<dir> in the environment, each process's whole stdout also goes to
 * <dir>/<name>-<pid>.out (e.g. V8's --trace-gc-nvp lines). BENCH_NODE_FLAGS_<name> (the
 * service's name with `-` as `_`, e.g. BENCH_NODE_FLAGS_billing="--trace-gc-nvp") adds node
 * flags to that process's, for diagnostics.
 */
function launch(name, env, profileDir) {
  const extra = process.env[`BENCH_NODE_FLAGS_${name.replace(/-/g, '_')}`];
  const args = [...nodeFlagsOf(name), ...(extra ? extra.split(/\s+/).filter(Boolean) : [])];
  if (profileDir) args.push('--cpu-prof', `--cpu-prof-dir=${profileDir}`);
  args.push(path.join(ROOT, 'services', name, 'dist', 'main.js'));
  // METRICS_PORT 0: the metrics listener on a free port (the default, PORT + 1000, may be taken);
  // METRICS_ENABLED=false in the bench's environment measures without metrics (ADR 0020).
  const child = spawn(process.execPath, args, { env: { METRICS_PORT: '0', EXIT_WITH_PARENT: 'true', ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (c) => {
    out = (out + c.toString()).slice(-20000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  if (process.env.BENCH_LOG_DIR) {
    fs.mkdirSync(process.env.BENCH_LOG_DIR, { recursive: true });
    const f = fs.createWriteStream(path.join(process.env.BENCH_LOG_DIR, `${name}-${child.pid}.out`));
    child.stdout.pipe(f);
  }
  return { child, output: () => out };
}

async function waitReady(url, proc) {
  const deadline = Date.now() + 60000;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) throw new Error(`process exited: ${proc.output()}`);
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`${url} not ready: ${proc.output()}`);
}

function stopProcess(proc) {
  return new Promise((resolve) => {
    if (proc.child.exitCode !== null) return resolve();
    proc.child.once('exit', () => resolve());
    proc.child.kill('SIGTERM');
  });
}

/** Top self-time functions of a .cpuprofile. */
function summarizeProfile(dir) {
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')) : [];
  if (files.length === 0) return null;
  const profile = JSON.parse(fs.readFileSync(path.join(dir, files[0]), 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = profile.timeDeltas;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i += 1) {
    const node = byId.get(profile.samples[i]);
    const cf = node.callFrame;
    const file = cf.url.replace(/^.*node_modules\//, '').replace(ROOT, '');
    const key = `${cf.functionName || '(anonymous)'} ${file}:${cf.lineNumber + 1}`;
    self.set(key, (self.get(key) || 0) + (dt[i] || 0));
    total += dt[i] || 0;
  }
  const byPackage = new Map();
  for (const [key, us] of self) {
    const m = /\s(@?[^/\s]+(?:\/[^/\s]+)?)\//.exec(key);
    const pkg = key.includes('(garbage collector)') ? 'GC' : key.startsWith('(idle)') ? 'idle' : m ? m[1] : key.split(' ')[0];
    byPackage.set(pkg, (byPackage.get(pkg) || 0) + us);
  }
  const pct = (us) => `${((100 * us) / total).toFixed(1)}%`;
  return {
    file: path.join(dir, files[0]),
    top_functions: [...self].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, us]) => `${pct(us)} ${k}`),
    by_package: [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([k, us]) => `${pct(us)} ${k}`),
  };
}

/** CPU seconds used so far by each process group: node processes by pid, Postgres and Kafka by name. */
function cpuSeconds(pids) {
  const ticks = (stat) => {
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  };
  const out = { postgres: 0, kafka: 0 };
  for (const [name, pid] of Object.entries(pids)) {
    try {
      out[name] = ticks(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      out[name] = 0;
    }
  }
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (comm === 'postgres') out.postgres += ticks(stat);
      else if (comm === 'java' && fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('kafka')) out.kafka += ticks(stat);
    } catch {
      // the process ended
    }
  }
  return out;
}

/** CPU used between two `cpuSeconds` readings, as cores busy over `seconds`. */
function coresBusy(before, after, seconds) {
  return Object.fromEntries(Object.keys(after).map((k) => [k, Math.round(((after[k] - (before[k] || 0)) / seconds) * 100) / 100]));
}

/**
 * Waits until the events of a set-up are consumed (every outbox of the database published,
 * every customer projection holding `customers`), so that a measurement sees its own work,
 * not the set-up's backlog. `pg` is a connected pg client.
 */
async function settleSetup(pg, customers, what, timeoutMs = 600_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows: outboxes } = await pg.query("SELECT table_schema FROM information_schema.tables WHERE table_name = 'outbox'");
    const { rows: projections } = await pg.query(
      "SELECT table_schema FROM information_schema.tables WHERE table_name = 'customers' AND table_schema <> 'customer'",
    );
    let pending = 0;
    for (const { table_schema: s } of outboxes) {
      pending += Number((await pg.query(`SELECT count(*) AS n FROM "${s}".outbox WHERE published_at IS NULL`)).rows[0].n);
    }
    for (const { table_schema: s } of projections) {
      pending += Math.max(0, customers - Number((await pg.query(`SELECT count(*) AS n FROM "${s}".customers`)).rows[0].n));
    }
    if (pending === 0) return;
    if (Date.now() > deadline) throw new Error(`${what}: set-up events not consumed after ${timeoutMs / 1000} s (${pending} pending)`);
    await sleep(500);
  }
}

/**
 * What every service process of a bench shares: its database, Kafka under a topic prefix of its
 * own, one internal token, warn logs, loopback.
 */
function commonServiceEnv({ dbUrl, dbName, brokers }) {
  return {
    DATABASE_URL: dbUrl.toString(),
    KAFKA_BROKERS: brokers,
    KAFKA_TOPIC_PREFIX: `bench-${dbName}.`,
    INTERNAL_TOKEN: require('node:crypto').randomBytes(24).toString('hex'),
    LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
    HOST: '127.0.0.1',
  };
}

/**
 * The gateway's settings in a bench stack: the owners' URLs (`url(name)`; the webhook dispatcher
 * not running), the bootstrap key of `tenant`/`environment`, and no rate limit to speak of.
 */
function gatewayEnv(url, key, tenant, environment) {
  return {
    CUSTOMER_SERVICE_URL: url('customer'),
    WALLET_SERVICE_URL: url('wallet'),
    INGESTION_SERVICE_URL: url('ingestion-aggregator'),
    BILLING_SERVICE_URL: url('billing'),
    ENTITLEMENTS_SERVICE_URL: url('entitlements'),
    WEBHOOK_SERVICE_URL: 'http://127.0.0.1:9',
    BOOTSTRAP_API_KEY: key,
    BOOTSTRAP_TENANT_ID: tenant,
    BOOTSTRAP_ENVIRONMENT_ID: environment,
    RATE_LIMIT_RPS: '1000000',
    RATE_LIMIT_BURST: '1000000',
  };
}

/**
 * Starts the services `names` one after the other, each ready before the next
 * (`envOf(name)` its environment, `profileDirOf(name)` a CPU profile directory or undefined);
 * when one fails to start, stops those started. `onReady(name)` runs as each is ready.
 */
async function launchAll(names, envOf, urlOf, profileDirOf = () => undefined, onReady = () => undefined) {
  const procs = [];
  try {
    for (const n of names) {
      const proc = launch(n, envOf(n), profileDirOf(n));
      procs.push(proc);
      await waitReady(urlOf(n), proc);
      onReady(n);
    }
  } catch (err) {
    await Promise.all(procs.map(stopProcess));
    throw err;
  }
  return procs;
}

/**
 * A JSON client of the gateway for a bench: `call` answers { status, body }; `must` wants one
 * status and retries a 503 up to 5 times (a set-up call on a loaded machine: nothing was
 * written), throwing on anything else.
 */
function apiClient(url, key, { connections = 64, pipelining = 1 } = {}) {
  const { Pool } = require('undici');
  const pool = new Pool(url, { connections, pipelining, keepAliveTimeout: 30_000 });
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  /** `extra`: headers of this call only. */
  const call = async (method, p, body, extra) => {
    const res = await pool.request({ method, path: p, headers: extra ? { ...headers, ...extra } : headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
  };
  const must = async (method, p, body, want) => {
    let res = await call(method, p, body);
    for (let attempt = 1; res.status === 503 && attempt <= 5; attempt += 1) {
      await sleep(500 * attempt);
      res = await call(method, p, body);
    }
    if (res.status !== want) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(res.body).slice(0, 500)}`);
    return res.body;
  };
  return { pool, call, must };
}

/** Runs `fn` over 0..count-1 with at most `limit` in flight. */
async function inParallel(count, limit, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < count) {
        const i = next++;
        await fn(i);
      }
    }),
  );
}

/**
 * The machine's speed now: milliseconds a fresh node process takes for a fixed loop of
 * integer arithmetic (~1.2 s on the Firecracker AMD EPYC of 2026-11-27, nothing else running).
 * On a shared host the same code runs slower in some periods than in others; a run's figures
 * read with the spin before and after it.
 */
function spinMs() {
  const { execFileSync } = require('node:child_process');
  const out = execFileSync(process.execPath, ['-e', 'const t=process.hrtime.bigint();let x=0;for(let i=0;i<2e8;i++){x=(x*31+i)|0;}process.stdout.write(String(Number(process.hrtime.bigint()-t)/1e6)+" "+(x&1))']);
  return Math.round(Number(out.toString().split(' ')[0]));
}

/** Deletes the Kafka topics whose names start with `prefix` (a bench's own, after its run). */
async function deleteTopics(brokers, prefix) {
  const { Kafka, logLevel } = require('kafkajs');
  const admin = new Kafka({ brokers: brokers.split(','), clientId: 'bench-cleanup', logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
    return topics.length;
  } finally {
    await admin.disconnect();
  }
}

module.exports = { gatewayEnv, spinMs, deleteTopics, apiClient, inParallel, commonServiceEnv, launchAll, settleSetup, nodeFlagsOf, cpuSeconds, coresBusy, ADMIN_URL, adminQuery, percentile, latencyFigures, sleep, freePort, launch, waitReady, stopProcess, summarizeProfile };
