const http = require('http');
http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const out = JSON.stringify({ allowed: true, feature_lookup_key: 'api_calls', type: 'METERED', usage: '12', limit: '1000000', remaining: '999988', is_soft_limit: false, period_start: '2026-11-01T00:00:00.000Z', period_end: '2026-12-01T00:00:00.000Z' });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
}).listen(Number(process.env.PORT || 4101), '127.0.0.1', () => process.send && process.send('ready'));
