/**
 * A load generator's HTTP/1.1 client: keep-alive connections, one request in flight on each, a
 * preformatted request head, a response parsed only as far as the status, the length and the
 * body. It exists so that the client's own CPU and garbage do not sit in the latencies it
 * measures on the machine it shares with the stack (bench/entitlements/README.md, 2026-11-27
 * 09:10): on a 2-core machine, undici's pool cost the check bench ~0.18 ms of CPU per request
 * and its scavenges paused the client for up to 6 ms, inside the measured latencies.
 *
 * Not a general client: JSON requests, answers with `Content-Length` or chunked bodies, no
 * redirects, no 1xx, no pipelining. A connection the server closes while a request is on it
 * fails that request (`ECONNRESET`); an idle one it closes is dropped from the pool.
 */
const net = require('node:net');

const CRLF2 = Buffer.from('\r\n\r\n');

function leanClient(url, { headers = {}, connections = 256 } = {}) {
  const { hostname, port } = new URL(url);
  const fixed = Object.entries({ host: `${hostname}:${port}`, ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const idle = [];
  const waiting = [];
  let open = 0;
  let closed = false;

  function connect() {
    const socket = net.connect(Number(port), hostname);
    socket.setNoDelay(true);
    const conn = { socket, buf: null, pending: null, dead: false };
    open += 1;
    socket.on('data', (chunk) => onData(conn, chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      open -= 1;
      conn.dead = true;
      const i = idle.indexOf(conn);
      if (i >= 0) idle.splice(i, 1);
      if (conn.pending) {
        const { reject } = conn.pending;
        conn.pending = null;
        reject(Object.assign(new Error('connection closed before the answer'), { code: 'ECONNRESET' }));
      }
      next();
    });
    return conn;
  }

  function onData(conn, chunk) {
    // Bytes while no request is on the connection (say a 408 before closing): not an answer to anything.
    if (!conn.pending) {
      conn.socket.destroy();
      return;
    }
    conn.buf = conn.buf ? Buffer.concat([conn.buf, chunk]) : chunk;
    const parsed = parse(conn.buf);
    if (!parsed) return;
    const { status, body, close } = parsed;
    conn.buf = null;
    const { resolve } = conn.pending;
    conn.pending = null;
    if (close) conn.socket.destroy();
    else release(conn);
    resolve({ status, body });
  }

  function release(conn) {
    const w = waiting.shift();
    if (w) send(conn, w);
    else idle.push(conn);
  }

  function next() {
    if (waiting.length > 0 && open < connections && !closed) send(connect(), waiting.shift());
  }

  function send(conn, job) {
    conn.pending = job;
    conn.socket.write(job.request);
  }

  /** `body` a string (JSON) or undefined; answers `{ status, body }` (the body parsed when not empty). */
  function call(method, path, body, extra) {
    const payload = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    let head = `${method} ${path} HTTP/1.1\r\n${fixed}`;
    if (extra) for (const [k, v] of Object.entries(extra)) head += `${k}: ${v}\r\n`;
    head += `content-length: ${Buffer.byteLength(payload)}\r\n\r\n`;
    return new Promise((resolve, reject) => {
      if (closed) return reject(new Error('client closed'));
      const job = { request: head + payload, resolve, reject };
      let conn = idle.pop();
      while (conn && conn.dead) conn = idle.pop();
      if (conn) send(conn, job);
      else if (open < connections) send(connect(), job);
      else waiting.push(job);
    });
  }

  async function close() {
    closed = true;
    for (const c of idle.splice(0)) c.socket.destroy();
  }

  return { call, close };
}

/** A whole response at the start of `buf`: `{ status, body, close }`, or null while incomplete. */
function parse(buf) {
  const end = buf.indexOf(CRLF2);
  if (end < 0) return null;
  const head = buf.latin1Slice(0, end).toLowerCase();
  const status = Number(head.slice(9, 12));
  const close = /\r\nconnection: *close/.test(head);
  const start = end + 4;
  let body;
  const length = /\r\ncontent-length: *(\d+)/.exec(head);
  if (length) {
    const n = Number(length[1]);
    if (buf.length < start + n) return null;
    body = buf.utf8Slice(start, start + n);
  } else if (/\r\ntransfer-encoding: *chunked/.test(head)) {
    const parts = [];
    let at = start;
    for (;;) {
      const eol = buf.indexOf('\r\n', at);
      if (eol < 0) return null;
      const size = parseInt(buf.latin1Slice(at, eol), 16);
      if (buf.length < eol + 2 + size + 2) return null;
      if (size === 0) break;
      parts.push(buf.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    body = Buffer.concat(parts).toString('utf8');
  } else body = '';
  return { status, body: body ? JSON.parse(body) : undefined, close };
}

module.exports = { leanClient, parseResponse: parse };
