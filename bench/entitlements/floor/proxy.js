const http = require('http');
const { Pool } = require(require('node:path').join(__dirname, '../../../node_modules/undici'));
const pool = new Pool(`http://127.0.0.1:${process.env.TARGET || 4101}`, { connections: 128 });
http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', async () => {
    const parsed = JSON.parse(body);
    const up = await pool.request({ path: req.url, method: 'POST', headers: { 'content-type': 'application/json', 'x-internal-token': 'tok', 'x-tenant-id': 't', 'x-environment-id': 'e', 'x-actor': 'k', 'x-request-id': 'r' + Math.random() }, body: JSON.stringify(parsed) });
    const buf = Buffer.from(await up.body.arrayBuffer());
    res.writeHead(up.statusCode, { 'content-type': 'application/json', 'content-length': buf.length });
    res.end(buf);
  });
}).listen(Number(process.env.PORT || 4100), '127.0.0.1', () => process.send && process.send('ready'));
