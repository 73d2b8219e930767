/**
 * The embedded default (`npm start`: services/standalone/dist/main.js, no DATABASE_URL, no
 * KAFKA_BROKERS, one PGlite database) as a bench runs it: started on a data directory, its
 * printed development key read, a JSON client of its API, and a task awaited.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { freePort, sleep } = require('../common');

const MAIN = path.resolve(__dirname, '../../services/standalone/dist/main.js');

/** An abort signal that fires after `ms` (Node's global AbortSignal.timeout). */
const timeoutSignal = (ms) => globalThis.AbortSignal.timeout(ms);

function cpuModel() {
  const line = fs.readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('model name'));
  return `${line ? line.split(':')[1].trim() : os.cpus()[0].model} x ${os.cpus().length}`;
}

/** `npm start`'s process on `dataDir`; resolves with its URL and development key once it printed them. */
async function start(dataDir, extraEnv = {}) {
  const port = await freePort();
  const env = { METRICS_PORT: '0', LOG_LEVEL: 'warn', ...process.env, ...extraEnv, DATA_DIR: dataDir, PORT: String(port) };
  if (!extraEnv.DATABASE_URL) delete env.DATABASE_URL;
  delete env.KAFKA_BROKERS;
  const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c) => (output = (output + c).slice(-20_000)));
  child.stderr.on('data', (c) => (output = (output + c).slice(-20_000)));
  if (process.env.CHILD_OUTPUT === '1') child.stderr.pipe(process.stderr);
  const began = Date.now();
  for (;;) {
    const key = /API key:\s+(bsk_\S+)/.exec(output)?.[1];
    if (key) return { child, url: `http://127.0.0.1:${port}`, key, output: () => output };
    if (child.exitCode !== null) throw new Error(`the process exited:\n${output}`);
    if (Date.now() - began > 600_000) throw new Error(`no key printed after 600 s:\n${output}`);
    await sleep(200);
  }
}

async function stop(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** `(method, path, body?, contentType?, timeoutMs?)` answers `{ status, body }`. */
function client(url, key) {
  return async (method, p, body, contentType = 'application/json', timeoutMs = 120_000) => {
    const res = await fetch(`${url}${p}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': contentType } : {}) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      signal: timeoutSignal(timeoutMs),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
}

/** The task once it ended (COMPLETED, FAILED or CANCELLED). */
async function finished(api, id) {
  for (;;) {
    const res = await api('GET', `/v1/tasks/${id}`);
    if (res.status !== 200) throw new Error(`GET /v1/tasks/${id}: ${res.status} ${JSON.stringify(res.body)}`);
    if (['COMPLETED', 'FAILED', 'CANCELLED'].includes(res.body.task_status)) return res.body;
    await sleep(250);
  }
}

module.exports = { MAIN, cpuModel, start, stop, client, finished, timeoutSignal };
