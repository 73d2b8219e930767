/**
 * Where a check's time goes (diagnostics, not a figure): preloaded into every process of
 * `check.js` with `TRACE_DIR=<dir> NODE_OPTIONS="--require <this file>"`. Writes, per process,
 * `<dir>/<service>-<pid>.windows`: one line per 250 ms with the event loop's longest delay, GC
 * pauses (count, total, each pause over 2 ms with its kind: 1 scavenge, 4 incremental marking,
 * 8 weak callbacks), CPU ms used, heap spaces and the check requests served (p50/p99/max ms);
 * and `<dir>/<service>-<pid>.requests`: per check request carrying an `x-request-id` of
 * `chk-<n>` (check.js sends them with TRACE_DIR set), when it arrived and when its answer was
 * written (epoch ms). `analyze.js` joins them with the client's trace.
 */
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const v8 = require('node:v8');
const { monitorEventLoopDelay, PerformanceObserver, performance } = require('node:perf_hooks');

const dir = process.env.TRACE_DIR;
if (dir) {
  const script = process.argv[1] || 'node';
  const service = /services\/([^/]+)\//.exec(script)?.[1] ?? path.basename(script, '.js');
  const base = path.join(dir, `${service}-${process.pid}`);
  const now = () => performance.timeOrigin + performance.now();
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  let gc = { n: 0, ms: 0, long: [] };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gc.n += 1;
      gc.ms += e.duration;
      if (e.duration > 2) gc.long.push(`${e.detail?.kind ?? e.kind}:${e.duration.toFixed(1)}`);
    }
  }).observe({ entryTypes: ['gc'] });
  let served = [];
  let traced = [];
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, req, res) {
    if (event === 'request' && String(req.url).includes('/entitlements/check')) {
      const arrived = now();
      const rid = req.headers['x-request-id'];
      res.once('finish', () => {
        const done = now();
        served.push(done - arrived);
        if (typeof rid === 'string' && rid.startsWith('chk-')) traced.push(`${rid} ${arrived.toFixed(3)} ${done.toFixed(3)}`);
      });
    }
    return emit.apply(this, arguments);
  };
  const windows = fs.openSync(`${base}.windows`, 'a');
  const requests = fs.openSync(`${base}.requests`, 'a');
  let cpu = process.cpuUsage();
  setInterval(() => {
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    served.sort((a, b) => a - b);
    const q = (p) => (served.length ? served[Math.min(served.length - 1, Math.floor(served.length * p))].toFixed(1) : '-');
    const spaces = v8
      .getHeapSpaceStatistics()
      .filter((s) => s.space_name === 'new_space' || s.space_name === 'old_space')
      .map((s) => `${s.space_name}:${(s.space_used_size / 1e6).toFixed(1)}`)
      .join(',');
    fs.writeSync(
      windows,
      `${Date.now()} loop_delay_max=${(delay.max / 1e6).toFixed(1)} gc_n=${gc.n} gc_ms=${gc.ms.toFixed(1)} gc_long=${gc.long.join(',') || '-'} cpu_ms=${((used.user + used.system) / 1000).toFixed(0)} heap=${spaces} checks=${served.length} p50=${q(0.5)} p99=${q(0.99)} max=${served.length ? served[served.length - 1].toFixed(1) : '-'}\n`,
    );
    if (traced.length) fs.writeSync(requests, `${traced.join('\n')}\n`);
    delay.reset();
    gc = { n: 0, ms: 0, long: [] };
    served = [];
    traced = [];
  }, 250).unref();
}
