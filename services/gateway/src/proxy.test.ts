import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ServiceUnavailableError } from '@billstream/errors';
import { ServiceProxy } from './proxy';

/** `forwardLean` (ADR 0027, amended): one call through undici's dispatcher, its answer collected whole. */
describe('ServiceProxy.forwardLean against a real HTTP server', () => {
  let server: Server;
  let url: string;
  let handle: (req: IncomingMessage, body: string, res: ServerResponse) => void;
  const ctx = { tenantId: 'ten_1', environmentId: 'production', actor: 'key_1', requestId: 'req_1' };

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => handle(req, body, res));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('sends the body as given with the internal headers, and answers the status, the passed headers and the body', async () => {
    let seen: { method?: string; url?: string; headers?: IncomingMessage['headers']; body?: string } = {};
    handle = (req, body, res) => {
      seen = { method: req.method, url: req.url, headers: req.headers, body };
      res.writeHead(409, { 'content-type': 'application/json', etag: '"v3"', 'retry-after': '2', 'x-other': 'not passed' });
      res.end(JSON.stringify({ error: { code: 'conflict' } }));
    };
    const proxy = new ServiceProxy({ entitlements: url }, 'internal-token-123456');
    try {
      const answer = await proxy.forwardLean('entitlements', ctx, 'POST', '/v1/entitlements/check', { customer_id: 'cus_1' }, { 'idempotency-key': 'idem-1', cookie: 'no' });
      expect(answer.status).toBe(409);
      expect(answer.headers).toEqual({ 'content-type': 'application/json', etag: '"v3"', 'retry-after': '2' });
      expect(JSON.parse(answer.payload.toString())).toEqual({ error: { code: 'conflict' } });
      expect(seen.method).toBe('POST');
      expect(seen.url).toBe('/v1/entitlements/check');
      expect(JSON.parse(seen.body!)).toEqual({ customer_id: 'cus_1' });
      expect(seen.headers).toMatchObject({
        'content-type': 'application/json',
        'x-internal-token': 'internal-token-123456',
        'x-tenant-id': 'ten_1',
        'x-environment-id': 'production',
        'x-actor-id': 'key_1',
        'idempotency-key': 'idem-1',
      });
      expect(seen.headers?.cookie).toBeUndefined();
    } finally {
      await proxy.close();
    }
  });

  it('sends a read (GET) to the path of the request with no body and no content type, as forward does', async () => {
    let seen: { method?: string; url?: string; headers?: IncomingMessage['headers']; body?: string } = {};
    handle = (req, body, res) => {
      seen = { method: req.method, url: req.url, headers: req.headers, body };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":"cus_1"}');
    };
    const proxy = new ServiceProxy({ customer: url }, 'internal-token-123456');
    try {
      const answer = await proxy.forwardLean('customer', ctx, 'GET', '/v1/customers/cus_1', undefined, {});
      expect([answer.status, answer.payload.toString()]).toEqual([200, '{"id":"cus_1"}']);
      expect(seen).toMatchObject({ method: 'GET', url: '/v1/customers/cus_1', body: '' });
      expect(seen.headers?.['content-type']).toBeUndefined();
      expect(seen.headers?.['content-length']).toBeUndefined();
      expect(seen.headers?.['x-tenant-id']).toBe('ten_1');
    } finally {
      await proxy.close();
    }
  });

  it('joins an answer that comes in several chunks, and one without a length', async () => {
    const big = { items: Array.from({ length: 5000 }, (_, i) => ({ id: `item_${i}`, value: 'x'.repeat(20) })) };
    handle = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const text = JSON.stringify(big);
      res.write(text.slice(0, 1000));
      setTimeout(() => res.end(text.slice(1000)), 20);
    };
    const proxy = new ServiceProxy({ billing: url }, 'internal-token-123456');
    try {
      const answer = await proxy.forwardLean('billing', ctx, 'POST', '/v1/x', {}, {});
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.payload.toString())).toEqual(big);
    } finally {
      await proxy.close();
    }
  });

  it('an owner that cannot be reached, or that drops the answer midway, is a ServiceUnavailableError', async () => {
    handle = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":');
      setTimeout(() => res.destroy(), 20);
    };
    const proxy = new ServiceProxy({ billing: url, customer: 'http://127.0.0.1:9' }, 'internal-token-123456');
    try {
      await expect(proxy.forwardLean('billing', ctx, 'POST', '/v1/x', {}, {})).rejects.toBeInstanceOf(ServiceUnavailableError);
      await expect(proxy.forwardLean('customer', ctx, 'POST', '/v1/x', {}, {})).rejects.toBeInstanceOf(ServiceUnavailableError);
    } finally {
      await proxy.close();
    }
  });
});
