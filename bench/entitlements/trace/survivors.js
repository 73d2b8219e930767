/**
 * What outlives a scavenge, by allocation site (diagnostics, not a figure). Preload it into one
 * process of a bench, with V8's gc exposed:
 *
 *   BENCH_NODE_FLAGS_billing="--expose-gc --require $PWD/bench/entitlements/trace/survivors.js" \
 *     SURV_START_MS=25000 node bench/entitlements/check.js
 *
 * After SURV_START_MS (default 20,000) it samples allocations (V8's sampling heap profiler,
 * every ~1 KB) for SURV_WINDOW_MS (3,000), runs a minor GC, and writes to
 * `<SURV_OUT>-<pid>.txt` (default /tmp/survivors-<pid>.txt) the sites of what the window
 * allocated and is still alive: the objects that scavenges copy and then promote. Each site is
 * the last four frames.
 */
const fs = require('node:fs');
const inspector = require('node:inspector');

const START = Number(process.env.SURV_START_MS || 20000);
const WINDOW = Number(process.env.SURV_WINDOW_MS || 3000);
const OUT = process.env.SURV_OUT || '/tmp/survivors';

function frame(n) {
  return `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`;
}

function report(profile) {
  const sites = new Map();
  const walk = (node, stack) => {
    const here = [...stack, frame(node)];
    if (node.selfSize > 0) {
      const key = here.slice(-4).join(' < ');
      sites.set(key, (sites.get(key) || 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, here);
  };
  walk(profile.head, []);
  const total = [...sites.values()].reduce((a, b) => a + b, 0);
  const top = [...sites].sort((a, b) => b[1] - a[1]).slice(0, 30);
  const lines = [`allocated in ${WINDOW} ms and alive after a minor GC: ${(total / 1024).toFixed(0)} KB`, ...top.map(([k, v]) => `${(v / 1024).toFixed(0)} KB  ${k}`)];
  fs.writeFileSync(`${OUT}-${process.pid}.txt`, `${lines.join('\n')}\n`);
}

setTimeout(() => {
  if (typeof globalThis.gc !== 'function') throw new Error('survivors.js needs node --expose-gc');
  const session = new inspector.Session();
  session.connect();
  session.post('HeapProfiler.enable', () =>
    session.post('HeapProfiler.startSampling', { samplingInterval: 1024 }, () => {
      setTimeout(() => {
        globalThis.gc({ type: 'minor', execution: 'sync' });
        session.post('HeapProfiler.getSamplingProfile', (err, result) => {
          session.post('HeapProfiler.stopSampling');
          if (!err) report(result.profile);
        });
      }, WINDOW);
    }),
  );
}, START).unref();
