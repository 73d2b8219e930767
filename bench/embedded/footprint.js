/**
 * Footprint of the embedded default (`npm start`): resident memory and data directory size.
 *
 *   npx tsc -b tsconfig.build.json && node bench/embedded/footprint.js
 *
 * Builds nothing: runs services/standalone/dist/main.js as `npm start` does (no DATABASE_URL,
 * no KAFKA_BROKERS) on a fresh DATA_DIR, samples VmRSS (/proc/<pid>/status) of the process
 * and of its child processes (the first start runs initdb in one) every 50 ms from spawn
 * until /healthz answers 200: the start peak is the largest sum (the process's own VmHWM, the
 * kernel's high-water mark, is reported too). Then waits SETTLE_S (10) seconds and takes the
 * idle RSS (the largest sample over the next 2 s). The data directory's size (du) is taken while idle
 * and after a clean stop. Then starts the process again on the same directory (the restart
 * every later `npm start` pays) and measures the same. RUNS (3) fresh directories; the worst
 * of each figure is reported. Prints the CPU model and the load average.
 *
 * Settings: RUNS (3), SETTLE_S (10), KEEP_DIRS=1 (leaves the data directories in the temp dir).
 */
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { freePort } = require('../common');

const ROOT = path.resolve(__dirname, '../..');
const MAIN = path.join(ROOT, 'services/standalone/dist/main.js');
const RUNS = Number(process.env.RUNS || 3);
const SETTLE_S = Number(process.env.SETTLE_S || 10);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** VmRSS and VmHWM of a process, in MB; undefined once it is gone. */
function memoryOf(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)[1]);
    return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** Pids of the child processes of `pid` (and theirs). */
function descendantsOf(pid) {
  const children = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children.flatMap((c) => [c, ...descendantsOf(c)]);
}

/** VmRSS of a process and its descendants, in MB. */
function treeRss(pid) {
  return [pid, ...descendantsOf(pid)].reduce((sum, p) => sum + (memoryOf(p)?.rss ?? 0), 0);
}

function duMb(dir) {
  return Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]) / 1024;
}

function cpuModel() {
  const line = fs.readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('model name'));
  return `${line ? line.split(':')[1].trim() : os.cpus()[0].model} x ${os.cpus().length}`;
}

async function healthy(url) {
  try {
    return (await fetch(`${url}/healthz`)).status === 200;
  } catch {
    return false;
  }
}

/** One start on `dataDir`: start peak, idle RSS, data directory size while idle and after stop. */
async function measureStart(dataDir) {
  const port = await freePort();
  const env = { METRICS_PORT: '0', ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  delete env.KAFKA_BROKERS;
  const started = Date.now();
  const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, treeRss(child.pid));
  }, 50);
  try {
    const url = `http://127.0.0.1:${port}`;
    while (!(await healthy(url))) {
      if (child.exitCode !== null) throw new Error(`the process exited:\n${output}`);
      if (Date.now() - started > 600_000) throw new Error(`not healthy after 600 s:\n${output}`);
      await sleep(100);
    }
    const startS = (Date.now() - started) / 1000;
    const startPeak = peak;
    await sleep(SETTLE_S * 1000);
    let idle = 0;
    for (let i = 0; i < 20; i += 1) {
      idle = Math.max(idle, treeRss(child.pid));
      await sleep(100);
    }
    const hwm = memoryOf(child.pid).hwm;
    const dirIdle = duMb(dataDir);
    clearInterval(sampler);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    return { startS, startPeak, hwm, idle, dirIdle, dirStopped: duMb(dataDir) };
  } finally {
    clearInterval(sampler);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

const mb = (v) => `${v.toFixed(0)} MB`;

async function main() {
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: build first (npx tsc -b tsconfig.build.json)`);
  console.log(`CPU: ${cpuModel()}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const rows = [];
  for (let run = 1; run <= RUNS; run += 1) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billstream-footprint-'));
    try {
      for (const kind of ['first start', 'restart']) {
        const r = await measureStart(dataDir);
        rows.push({ run, kind, ...r });
        console.log(
          `run ${run} ${kind}: healthy after ${r.startS.toFixed(1)} s, start peak ${mb(r.startPeak)} (VmHWM ${mb(r.hwm)}), ` +
            `idle ${mb(r.idle)}, data dir ${mb(r.dirIdle)} idle / ${mb(r.dirStopped)} stopped`,
        );
      }
    } finally {
      if (process.env.KEEP_DIRS === '1') console.log(`kept ${dataDir}`);
      else fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
  console.log(`\nworst of ${RUNS} runs:`);
  for (const kind of ['first start', 'restart']) {
    const of = rows.filter((r) => r.kind === kind);
    const worst = (k) => Math.max(...of.map((r) => r[k]));
    console.log(
      `  ${kind}: healthy after ${worst('startS').toFixed(1)} s, start peak ${mb(worst('startPeak'))} (VmHWM ${mb(worst('hwm'))}), ` +
        `idle ${mb(worst('idle'))}, data dir ${mb(worst('dirIdle'))} idle / ${mb(worst('dirStopped'))} stopped`,
    );
  }
  console.log(`load average at the end ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
