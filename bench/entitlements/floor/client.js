const { performance } = require('node:perf_hooks');
const { Pool } = require(require('node:path').join(__dirname, '../../../node_modules/undici'));
const pool = new Pool('http://127.0.0.1:4100', { connections: 256 });
const RATE = 1000, SECONDS = 20;
(async () => {
  const lat = []; const start = performance.now(); let sent = 0; const total = RATE * SECONDS; const inflight = new Set();
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - start) * RATE) / 1000) + 1);
    while (sent < due) {
      const slot = start + (sent * 1000) / RATE; sent++;
      const p = pool.request({ path: '/v1/entitlements/check', method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ customer_id: 'cus_123', feature_lookup_key: 'api_calls' }) })
        .then(async (r) => { await r.body.json(); lat.push(performance.now() - slot); }).finally(() => inflight.delete(p));
      inflight.add(p);
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inflight);
  lat.sort((a, b) => a - b);
  const q = (p) => lat[Math.floor((lat.length - 1) * p / 100)].toFixed(2);
  console.log(JSON.stringify({ n: lat.length, p50: q(50), p99: q(99), max: q(100) }));
  await pool.close();
})();
