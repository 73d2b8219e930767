// The floor's client: 20,000 checks at 1,000/s, open loop, latency from each slot.
// CLIENT=lean (default; bench/lean-client.js, as the check bench) or CLIENT=undici (an undici pool).
const { performance } = require('node:perf_hooks');
const path = require('node:path');
const { Pool } = require(path.join(__dirname, '../../../node_modules/undici'));
const { leanClient } = require('../../lean-client');
const CLIENT = process.env.CLIENT || 'lean';
const RATE = 1000, SECONDS = 20;
const body = JSON.stringify({ customer_id: 'cus_123', feature_lookup_key: 'api_calls' });
let call, close;
if (CLIENT === 'undici') {
  const pool = new Pool('http://127.0.0.1:4100', { connections: 256 });
  call = () => pool.request({ path: '/v1/entitlements/check', method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.body.json());
  close = () => pool.close();
} else {
  const client = leanClient('http://127.0.0.1:4100', { headers: { 'content-type': 'application/json' }, connections: 256 });
  call = () => client.call('POST', '/v1/entitlements/check', body);
  close = () => client.close();
}
(async () => {
  const lat = []; const start = performance.now(); let sent = 0; const total = RATE * SECONDS; const inflight = new Set();
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - start) * RATE) / 1000) + 1);
    while (sent < due) {
      const slot = start + (sent * 1000) / RATE; sent++;
      const p = call().then(() => { lat.push(performance.now() - slot); }).finally(() => inflight.delete(p));
      inflight.add(p);
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inflight);
  lat.sort((a, b) => a - b);
  const q = (p) => lat[Math.floor((lat.length - 1) * p / 100)].toFixed(2);
  const cpu = process.cpuUsage();
  console.log(JSON.stringify({ client: CLIENT, n: lat.length, p50: q(50), p99: q(99), max: q(100), client_cpu_ms_per_request: ((cpu.user + cpu.system) / 1000 / total).toFixed(3) }));
  await close();
})();
