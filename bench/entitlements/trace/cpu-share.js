/**
 * Who had the CPUs while the checks waited (diagnostics, not a figure). Joins a `check.js` run
 * made with TRACE_DIR with the scheduler's trace of the same seconds:
 *
 *   bash bench/entitlements/trace/sched.sh /tmp/sched      # runs check.js (RUNS=1) and perf
 *   node bench/entitlements/trace/cpu-share.js /tmp/sched  # (sched.sh calls it at the end)
 *
 * `<dir>` holds `perf.txt` (`perf script -F comm,pid,tid,cpu,time,event,trace` of
 * `sched:sched_switch` and `sched:sched_wakeup` recorded with `-k monotonic`), `offset` (the
 * wall clock minus CLOCK_MONOTONIC, in seconds, taken when perf started), `ps.txt` (`ps -eo
 * pid,args` during the run: which pid is which service) and `trace/` (the TRACE_DIR).
 *
 * Prints, for the measured checks inside perf's window (all, p50-p90, p90-p99, slowest 1 %),
 * each process's share of the two CPUs over the checks' own windows (slot to answer); the
 * shares over the whole window; per process, the delay from a thread's wakeup to its running
 * (p50/p99/max); for the processes named in CPU_SHARE_THREADS (default kafka), the CPU of each
 * of its threads by name (a JVM's JIT compiler threads, say).
 */
const fs = require('node:fs');
const path = require('node:path');

const dir = process.argv[2];
if (!dir) throw new Error('usage: cpu-share.js <dir>');
const offset = Number(fs.readFileSync(path.join(dir, 'offset'), 'utf8'));

/** pid -> the name of what it runs. */
const names = new Map();
for (const line of fs.readFileSync(path.join(dir, 'ps.txt'), 'utf8').split('\n')) {
  const m = /^\s*(\d+)\s+(.*)$/.exec(line);
  if (!m) continue;
  const [pid, args] = [Number(m[1]), m[2]];
  const service = /services\/([^/]+)\/dist/.exec(args)?.[1];
  if (service) names.set(pid, service);
  else if (/java/.test(args) && /kafka/.test(args)) names.set(pid, 'kafka');
  else if (args.startsWith('postgres')) names.set(pid, 'postgres');
  else if (/bench\/entitlements\/(trace\/\.\.\/)?check\.js/.test(args)) names.set(pid, 'client');
}
const nameOf = (pid, comm) => names.get(pid) ?? (pid === 0 ? 'idle' : comm.startsWith('postgres') ? 'postgres' : `other:${comm}`);
const threadsOf = new Set((process.env.CPU_SHARE_THREADS ?? 'kafka').split(',').filter(Boolean));

/** cpu -> [start, end, name] in wall-clock seconds: who ran between two switches. */
const segments = new Map();
const lastSwitch = new Map();
const wokenAt = new Map();
const wakeDelays = new Map();
const tidName = new Map();
const threadCpu = new Map();
const line = /^\s*(.+?)\s+(\d+)\/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s+(.*)$/;
for (const text of fs.readFileSync(path.join(dir, 'perf.txt'), 'utf8').split('\n')) {
  const m = line.exec(text);
  if (!m) continue;
  const [comm, pid, tid, cpu, t, event, rest] = [m[1], Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]) + offset, m[6], m[7]];
  if (event.includes('sched_wakeup')) {
    const woken = /\bpid=(\d+)/.exec(rest);
    if (woken && !wokenAt.has(Number(woken[1]))) wokenAt.set(Number(woken[1]), t);
    continue;
  }
  if (!event.endsWith('sched_switch')) continue;
  // The switch is recorded in the context of the task leaving the CPU: it ran since the last switch.
  const name = nameOf(pid, comm);
  tidName.set(tid, name);
  // A wakeup seen while the task was still running is not a wait.
  wokenAt.delete(tid);
  if (lastSwitch.has(cpu)) {
    if (!segments.has(cpu)) segments.set(cpu, []);
    segments.get(cpu).push([lastSwitch.get(cpu), t, name]);
    if (threadsOf.has(name)) {
      const key = `${name} ${tid === pid ? 'main' : comm.replace(/\d+/g, '#')}`;
      threadCpu.set(key, (threadCpu.get(key) ?? 0) + t - lastSwitch.get(cpu));
    }
  }
  lastSwitch.set(cpu, t);
  const next = Number(/next_pid=(\d+)/.exec(rest)?.[1]);
  if (wokenAt.has(next)) {
    if (!wakeDelays.has(next)) wakeDelays.set(next, []);
    wakeDelays.get(next).push(t - wokenAt.get(next));
    wokenAt.delete(next);
  }
}
const cpus = [...segments.keys()];
const t0 = Math.max(...cpus.map((c) => segments.get(c)[0][0]));
const t1 = Math.min(...cpus.map((c) => segments.get(c).at(-1)[1]));

/** name -> CPU seconds used between a and b, over all CPUs. */
function busy(a, b) {
  const acc = new Map();
  for (const list of segments.values()) {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid][1] <= a) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < list.length && list[i][0] < b; i += 1) {
      const [s, e, name] = list[i];
      const overlap = Math.min(e, b) - Math.max(s, a);
      if (overlap > 0) acc.set(name, (acc.get(name) ?? 0) + overlap);
    }
  }
  return acc;
}
const shares = (acc, span) =>
  [...acc.entries()]
    .sort((x, y) => y[1] - x[1])
    .slice(0, 9)
    .map(([k, v]) => `${k} ${((100 * v) / (cpus.length * span)).toFixed(0)}%`)
    .join(', ');

const clientFile = fs.readdirSync(path.join(dir, 'trace')).filter((f) => f.startsWith('client-')).sort().pop();
const checks = [];
for (const row of fs.readFileSync(path.join(dir, 'trace', clientFile), 'utf8').split('\n')) {
  const [, slot, , done] = row.split(' ').map(Number);
  if (done && slot / 1000 >= t0 && done / 1000 <= t1) checks.push([slot / 1000, done / 1000]);
}
checks.sort((x, y) => x[1] - x[0] - (y[1] - y[0]));
const n = checks.length;
console.log(`${n} checks inside perf's window of ${(t1 - t0).toFixed(1)} s, ${cpus.length} CPUs`);
const show = (label, sel) => {
  const total = new Map();
  let span = 0;
  for (const [a, b] of sel) {
    for (const [k, v] of busy(a, b)) total.set(k, (total.get(k) ?? 0) + v);
    span += b - a;
  }
  console.log(`${label.padEnd(8)} ${sel.length} checks, mean ${((1000 * span) / sel.length).toFixed(1)} ms: ${shares(total, span)}`);
};
show('all', checks);
show('p50-p90', checks.slice(Math.floor(n / 2), Math.floor(n * 0.9)));
show('p90-p99', checks.slice(Math.floor(n * 0.9), Math.floor(n * 0.99)));
show('top 1%', checks.slice(Math.floor(n * 0.99)));
console.log(`whole window: ${shares(busy(t0, t1), t1 - t0)}`);

console.log('from a wakeup to running (ms):');
const byName = new Map();
for (const [tid, list] of wakeDelays) {
  const name = tidName.get(tid) ?? '?';
  if (!byName.has(name)) byName.set(name, []);
  byName.get(name).push(...list);
}
for (const [name, list] of [...byName.entries()].sort((x, y) => y[1].length - x[1].length).slice(0, 10)) {
  list.sort((x, y) => x - y);
  const at = (q) => (1000 * list[Math.min(list.length - 1, Math.floor(list.length * q))]).toFixed(2);
  console.log(`  ${name.padEnd(26)} n=${String(list.length).padStart(6)} p50 ${at(0.5)} p99 ${at(0.99)} max ${at(1)}`);
}
if (threadCpu.size > 0) {
  console.log(`CPU by thread (${[...threadsOf].join(', ')}), ms over the window:`);
  for (const [k, v] of [...threadCpu.entries()].sort((x, y) => y[1] - x[1]).slice(0, 10)) console.log(`  ${k.padEnd(40)} ${(1000 * v).toFixed(0)}`);
}
