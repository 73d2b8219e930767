/**
 * The process stack of the billing benches pdf.js and thresholds.js: customer, wallet,
 * ingestion-aggregator, billing and gateway as separate processes (their dist/main.js with the
 * Dockerfile's node flags, as invoices.js starts them) on one database of the local Postgres,
 * and a CPU account of this stack alone on a shared machine.
 */
const { execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { commonServiceEnv, launchAll, ADMIN_URL, adminQuery, freePort, stopProcess } = require('../common');

const ROOT = path.resolve(__dirname, '..', '..');
const TENANT = 'bench-tenant';
const NAMES = ['customer', 'wallet', 'ingestion-aggregator', 'billing', 'gateway'];

function portOpen(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** KAFKA_BROKERS, or the local broker of deploy/kafka on 9092 (started when nothing listens there). */
async function kafkaBrokers() {
  if (process.env.KAFKA_BROKERS) return process.env.KAFKA_BROKERS;
  if (!(await portOpen(9092))) execFileSync('bash', [path.join(ROOT, 'deploy', 'kafka', 'kafka.sh'), 'start'], { stdio: 'inherit' });
  return '127.0.0.1:9092';
}

/**
 * The five services on database `dbName` (created when `create`); `billingEnv` is added to
 * billing's environment, `profile` names a service to run under --cpu-prof into `profileDir`.
 * The bootstrap key is `key` when given (a restart on the same database keeps its key).
 */
async function startStack({ brokers, dbName, create, billingEnv = {}, key, profile, profileDir }) {
  if (create) await adminQuery(`CREATE DATABASE "${dbName}"`);
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const apiKey = key || `bsk_bench_${randomBytes(18).toString('base64url')}`;
  const ports = {};
  for (const n of NAMES) ports[n] = await freePort();
  const url = (n) => `http://127.0.0.1:${ports[n]}`;
  const common = commonServiceEnv({ dbUrl, dbName, brokers });
  const env = {
    customer: {},
    wallet: { CUSTOMER_SERVICE_URL: url('customer'), WALLET_EXPIRY_INTERVAL_MS: '0' },
    'ingestion-aggregator': {},
    billing: {
      CUSTOMER_SERVICE_URL: url('customer'),
      INGESTION_SERVICE_URL: url('ingestion-aggregator'),
      WALLET_SERVICE_URL: url('wallet'),
      ...billingEnv,
    },
    gateway: {
      CUSTOMER_SERVICE_URL: url('customer'),
      WALLET_SERVICE_URL: url('wallet'),
      INGESTION_SERVICE_URL: url('ingestion-aggregator'),
      BILLING_SERVICE_URL: url('billing'),
      WEBHOOK_SERVICE_URL: 'http://127.0.0.1:9',
      BOOTSTRAP_API_KEY: apiKey,
      BOOTSTRAP_TENANT_ID: TENANT,
      BOOTSTRAP_ENVIRONMENT_ID: 'production',
      RATE_LIMIT_RPS: '1000000',
      RATE_LIMIT_BURST: '1000000',
    },
  };
  const procs = await launchAll(NAMES, (n) => ({ ...common, ...env[n], PORT: String(ports[n]) }), url, (n) => (profile === n ? profileDir : undefined));
  return {
    url: url('gateway'),
    databaseUrl: dbUrl.toString(),
    dbName,
    key: apiKey,
    pids: Object.fromEntries(NAMES.map((n, i) => [n, procs[i].child.pid])),
    output: Object.fromEntries(NAMES.map((n, i) => [n, procs[i].output])),
    stop: async (keepDb = false) => {
      for (const proc of [...procs].reverse()) await stopProcess(proc);
      if (!keepDb && !process.env.KEEP_DB) await adminQuery(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    },
  };
}

const ticksOf = (stat) => {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
};
const readStat = (pid) => {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
};
const cmdlineOf = (pid) => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
};

/**
 * CPU seconds (user + system, /proc/<pid>/stat) of this stack alone, on a machine other work
 * shares: the node processes by pid; `postgres` the backends serving database `dbName` (their
 * title names it), sampled every `sampleMs` and kept per pid, so a backend that ends (a pool
 * closing an idle connection) keeps what it used until its last sample; `kafka` the broker whose
 * command line contains `kafkaMatch` (a bench's own broker; unset: not counted). Postgres's
 * shared background processes (WAL writer, checkpointer, autovacuum) are not counted: other
 * databases' work runs in them too.
 */
function cpuAccount({ pids, dbName, kafkaMatch, sampleMs = 200 }) {
  const backends = new Map(); // pid -> ticks at last sample (since the backend started)
  const startTicks = new Map(); // pid -> ticks when first seen after start (0 when it started after)
  let started = false;
  let kafkaPid;
  if (kafkaMatch) {
    for (const e of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(e)) continue;
      const stat = readStat(e);
      if (stat && stat.includes('(java)') && cmdlineOf(e).includes(kafkaMatch)) kafkaPid = e;
    }
  }
  const sample = () => {
    for (const e of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(e)) continue;
      const stat = readStat(e);
      if (!stat || !stat.includes('(postgres)')) continue;
      if (!backends.has(e)) {
        const cmd = cmdlineOf(e);
        if (!cmd.includes(` ${dbName} `)) continue;
        // A backend seen for the first time after the account started began after it: all its CPU counts.
        startTicks.set(e, started ? 0 : ticksOf(stat));
      }
      backends.set(e, ticksOf(stat));
    }
  };
  sample();
  started = true;
  const timer = setInterval(sample, sampleMs);
  timer.unref();
  /** CPU seconds so far per process group, from when the account started (node pids: since they started). */
  const read = () => {
    sample();
    const out = {};
    for (const [name, pid] of Object.entries(pids)) {
      const stat = readStat(pid);
      out[name] = stat ? ticksOf(stat) / 100 : 0;
    }
    let pg = 0;
    for (const [pid, ticks] of backends) pg += ticks - (startTicks.get(pid) ?? 0);
    out.postgres = pg / 100;
    if (kafkaPid) {
      const stat = readStat(kafkaPid);
      out.kafka = stat ? ticksOf(stat) / 100 : 0;
    }
    return out;
  };
  return { read, stop: () => clearInterval(timer), kafkaPid: () => kafkaPid };
}

/** `after - before` per group, in CPU milliseconds per `per` units (events, PDFs, requests). */
function cpuMsPer(before, after, per) {
  const out = {};
  let total = 0;
  for (const k of Object.keys(after)) {
    const ms = ((after[k] - (before[k] || 0)) * 1000) / per;
    out[k] = Math.round(ms * 1000) / 1000;
    total += ms;
  }
  out.total = Math.round(total * 1000) / 1000;
  return out;
}

module.exports = { kafkaBrokers, startStack, cpuAccount, cpuMsPer, TENANT };
