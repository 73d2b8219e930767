/**
 * Joins the traces of a `check.js` run made with TRACE_DIR (see preload.js):
 *
 *   node bench/entitlements/trace/analyze.js <TRACE_DIR>
 *
 * For the measured phase's checks (the client's last trace file), where the time went, on
 * average, for all checks, p50-p90, p90-p99 and the slowest 1 %: the client's own queue (slot
 * to send), client to gateway (until the gateway's request event), the gateway until billing's
 * request event, billing, billing's answer to the gateway's answer, and back to the client.
 * Then the slowest 1 % grouped into bursts (30 ms apart at most), and for the largest bursts
 * what each process's 250 ms windows said (loop delay, GC pauses, CPU).
 */
const fs = require('node:fs');
const path = require('node:path');

const dir = process.argv[2];
if (!dir) throw new Error('usage: analyze.js <TRACE_DIR>');
const files = fs.readdirSync(dir);
const clientFile = files.filter((f) => f.startsWith('client-')).sort().pop();
if (!clientFile) throw new Error(`no client trace in ${dir}`);

/** rid -> [arrived, done], the latest of each rid (the warm-up reuses the measured phase's ids). */
function served(service) {
  const byId = new Map();
  for (const f of files.filter((x) => x.startsWith(`${service}-`) && x.endsWith('.requests'))) {
    for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      const [rid, a, b] = line.split(' ');
      if (!b) continue;
      const prev = byId.get(rid);
      if (!prev || Number(a) > prev[0]) byId.set(rid, [Number(a), Number(b)]);
    }
  }
  return byId;
}
const gateway = served('gateway');
const billing = served('billing');
const rows = [];
for (const line of fs.readFileSync(path.join(dir, clientFile), 'utf8').split('\n')) {
  const [rid, slot, sent, done] = line.split(' ').map((x, i) => (i === 0 ? x : Number(x)));
  const g = gateway.get(rid);
  const b = billing.get(rid);
  if (!g || !b) continue;
  rows.push({ slot, total: done - slot, parts: [sent - slot, g[0] - sent, b[0] - g[0], b[1] - b[0], g[1] - b[1], done - g[1]] });
}
rows.sort((x, y) => x.total - y.total);
const names = ['client queue', 'to gateway', 'gateway to billing', 'billing', 'billing to gateway answer', 'back to client'];
const show = (label, sel) => {
  const avg = names.map((_, i) => sel.reduce((s, r) => s + r.parts[i], 0) / sel.length);
  console.log(`${label.padEnd(8)} total ${(sel.reduce((s, r) => s + r.total, 0) / sel.length).toFixed(2)} ms: ${names.map((n, i) => `${n} ${avg[i].toFixed(2)}`).join(', ')}`);
};
const n = rows.length;
console.log(`${n} checks traced (${clientFile})`);
show('all', rows);
show('p50-p90', rows.slice(Math.floor(n / 2), Math.floor(n * 0.9)));
show('p90-p99', rows.slice(Math.floor(n * 0.9), Math.floor(n * 0.99)));
const slow = rows.slice(Math.floor(n * 0.99));
show('top 1%', slow);

const bursts = [];
for (const r of [...slow].sort((x, y) => x.slot - y.slot)) {
  const last = bursts[bursts.length - 1];
  if (last && r.slot - last.end < 30) {
    last.end = r.slot;
    last.count += 1;
    last.max = Math.max(last.max, r.total);
  } else bursts.push({ start: r.slot, end: r.slot, count: 1, max: r.total });
}
console.log(`\nslowest 1 % (>= ${slow[0]?.total.toFixed(1)} ms) in ${bursts.length} bursts; the largest:`);
const windows = files
  .filter((f) => f.endsWith('.windows'))
  .map((f) => ({ name: f.replace(/\.windows$/, ''), lines: fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean) }))
  .filter((w) => w.lines.length > 100);
for (const burst of [...bursts].sort((x, y) => y.count - x.count).slice(0, 8)) {
  console.log(`- at ${new Date(burst.start).toISOString()} for ${(burst.end - burst.start).toFixed(0)} ms: ${burst.count} checks, slowest ${burst.max.toFixed(1)} ms`);
  for (const w of windows) {
    for (const line of w.lines) {
      const at = Number(line.split(' ')[0]);
      if (at > burst.start && at <= burst.end + 250) console.log(`    ${w.name.padEnd(28)} ${line.split(' ').slice(1, 6).join(' ')}`);
    }
  }
}
