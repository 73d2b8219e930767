const http = require('node:http');
const net = require('node:net');
const { leanClient, parseResponse } = require('./lean-client');

const head = (lines) => Buffer.from(`${lines.join('\r\n')}\r\n\r\n`);

describe('parseResponse', () => {
  it('waits for the whole head and the whole Content-Length body', () => {
    const whole = Buffer.concat([head(['HTTP/1.1 200 OK', 'Content-Type: application/json', 'Content-Length: 13']), Buffer.from('{"allowed":1}')]);
    expect(parseResponse(whole.subarray(0, 20))).toBeNull();
    expect(parseResponse(whole.subarray(0, whole.length - 1))).toBeNull();
    expect(parseResponse(whole)).toEqual({ status: 200, body: { allowed: 1 }, close: false });
  });

  it('reads a chunked body, an empty body and Connection: close', () => {
    const chunked = Buffer.concat([head(['HTTP/1.1 422 Unprocessable Entity', 'Transfer-Encoding: chunked', 'Connection: close']), Buffer.from('5\r\n{"a":\r\n2\r\n1}\r\n0\r\n\r\n')]);
    expect(parseResponse(chunked.subarray(0, chunked.length - 2))).toBeNull();
    expect(parseResponse(chunked)).toEqual({ status: 422, body: { a: 1 }, close: true });
    expect(parseResponse(head(['HTTP/1.1 204 No Content']))).toEqual({ status: 204, body: undefined, close: false });
  });

  it('reads a body that is not ASCII by its length in bytes', () => {
    const text = JSON.stringify({ name: 'Zoë ✓' });
    const res = Buffer.concat([head(['HTTP/1.1 200 OK', `content-length: ${Buffer.byteLength(text)}`]), Buffer.from(text)]);
    expect(parseResponse(res).body).toEqual({ name: 'Zoë ✓' });
  });
});

describe('leanClient', () => {
  let server;
  let url;
  const seen = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, extra: req.headers['x-extra'], body, socket: req.socket.remotePort });
        if (req.url === '/close') res.setHeader('Connection', 'close');
        res.statusCode = req.url === '/missing' ? 404 : 200;
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ echo: body ? JSON.parse(body) : null }));
      });
    });
    server.keepAliveTimeout = 200;
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${server.address().port}`;
  });

  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  it('sends the fixed and the extra headers and the body, and reuses an idle connection', async () => {
    seen.length = 0;
    const client = leanClient(url, { headers: { authorization: 'Bearer k', 'content-type': 'application/json' } });
    const a = await client.call('POST', '/v1/x', { n: 1 }, { 'x-extra': 'yes' });
    const b = await client.call('GET', '/missing');
    expect(a).toEqual({ status: 200, body: { echo: { n: 1 } } });
    expect(b).toEqual({ status: 404, body: { echo: null } });
    expect(seen.map((s) => [s.method, s.url, s.auth, s.extra, s.body])).toEqual([
      ['POST', '/v1/x', 'Bearer k', 'yes', '{"n":1}'],
      ['GET', '/missing', 'Bearer k', undefined, ''],
    ]);
    expect(seen[1].socket).toBe(seen[0].socket);
    await client.close();
  });

  it('queues beyond its connections, and opens a new connection after the server closed one', async () => {
    seen.length = 0;
    const client = leanClient(url, { connections: 2 });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => client.call('POST', '/v1/x', { i })));
    expect(answers.map((a) => a.body.echo.i)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(new Set(seen.map((s) => s.socket)).size).toBe(2);
    expect((await client.call('POST', '/close', {})).status).toBe(200);
    // Idle past the server's keep-alive timeout: those connections are gone, the next call opens one.
    await new Promise((r) => setTimeout(r, 400));
    expect((await client.call('POST', '/v1/x', { after: true })).body).toEqual({ echo: { after: true } });
    await client.close();
  });

  it('drops a connection that sends bytes while no request is on it', async () => {
    let connections = 0;
    const raw = net.createServer((socket) => {
      connections += 1;
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}');
        setTimeout(() => socket.write('HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\n\r\n'), 50);
      });
    });
    await new Promise((r) => raw.listen(0, '127.0.0.1', r));
    const client = leanClient(`http://127.0.0.1:${raw.address().port}`);
    expect(await client.call('GET', '/a')).toEqual({ status: 200, body: {} });
    await new Promise((r) => setTimeout(r, 150));
    expect(await client.call('GET', '/b')).toEqual({ status: 200, body: {} });
    expect(connections).toBe(2);
    await client.close();
    await new Promise((r) => raw.close(r));
  });
});
