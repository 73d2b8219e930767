/**
 * Who had the CPUs (diagnostics, not a figure): every 100 ms, the CPU ticks (10 ms each) each
 * process of the machine used since the sample before, grouped: the bench's services by pid
 * (`NAMES`: `name=pid,...`), Postgres' backends and each of its background processes by role
 * (checkpointer, walwriter, ...), the Kafka broker, and everything else by command. One line per
 * sample to OUT: `<epoch ms> group=ticks ...` (groups with none left out).
 *
 *   NAMES=gateway=123,billing=456 OUT=/tmp/cpu.txt node bench/soak/cpu-sampler.js
 *
 * Runs until killed. Reading /proc costs it a few ms of CPU per sample, shown as `sampler`.
 */
const fs = require('node:fs');

const names = new Map(
  (process.env.NAMES || '')
    .split(',')
    .filter(Boolean)
    .map((kv) => kv.split('=').reverse()),
);
names.set(String(process.pid), 'sampler');
const out = fs.openSync(process.env.OUT || '/tmp/cpu-samples.txt', 'a');
const groupOf = new Map();
let last = new Map();

function group(pid, comm) {
  const known = groupOf.get(pid);
  if (known) return known;
  let g = names.get(pid);
  if (!g) {
    let cmdline = '';
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      // gone
    }
    if (comm === 'postgres') {
      const role = /postgres: [^:]+: (checkpointer|background writer|walwriter|autovacuum launcher|logical replication launcher|stats collector)/.exec(cmdline);
      g = role ? `pg_${role[1].replace(/ /g, '_')}` : 'pg_backends';
    } else if (comm === 'java' && cmdline.includes('kafka')) g = 'kafka';
    else g = comm.replace(/\s+/g, '_');
  }
  groupOf.set(pid, g);
  return g;
}

function sample() {
  const now = new Map();
  const used = {};
  for (const entry of fs.readdirSync('/proc')) {
    if (entry.charCodeAt(0) > 57) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    now.set(entry, ticks);
    const before = last.get(entry);
    if (before === undefined || ticks <= before) continue;
    const g = group(entry, stat.slice(stat.indexOf('(') + 1, close));
    used[g] = (used[g] ?? 0) + ticks - before;
  }
  last = now;
  const parts = Object.entries(used).map(([g, t]) => `${g}=${t}`);
  if (parts.length) fs.writeSync(out, `${Date.now()} ${parts.join(' ')}\n`);
}

sample();
setInterval(sample, 100);
