import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ServiceUnavailableError } from '@billstream/errors';
import { runHoldingTransaction } from '@billstream/observability';
import { INTERNAL_HEADERS } from './context';
import { InternalClient } from './internal-client';

const scope = { tenantId: 't1', environmentId: 'e1' };

describe('InternalClient', () => {
  let server: http.Server;
  let url: string;
  const seen: Array<{ method?: string; url?: string; headers: http.IncomingHttpHeaders; body: string }> = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, headers: req.headers, body });
        res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'application/json' });
        res.end(req.url === '/missing' ? '' : '{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends the internal token, the scope, the actor and the request id, and a JSON body', async () => {
    const client = new InternalClient({ service: 'customer', baseUrl: () => url, internalToken: 'tok-1234567890abcdef', actor: 'billing' });
    try {
      expect(await client.call(scope, 'POST', '/things', 'req-1', { a: 1 })).toEqual({ status: 200, text: '{"ok":true}' });
      expect(await client.call(scope, 'GET', '/missing', 'req-2')).toEqual({ status: 404, text: '' });
    } finally {
      await client.close();
    }
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/things', body: '{"a":1}' });
    expect(seen[0].headers).toMatchObject({
      [INTERNAL_HEADERS.token]: 'tok-1234567890abcdef',
      [INTERNAL_HEADERS.tenant]: 't1',
      [INTERNAL_HEADERS.environment]: 'e1',
      [INTERNAL_HEADERS.actor]: 'billing',
      [INTERNAL_HEADERS.requestId]: 'req-1',
      'content-type': 'application/json',
    });
    expect(seen[1]).toMatchObject({ method: 'GET', url: '/missing', body: '' });
    expect(seen[1].headers['content-type']).toBeUndefined();
  });

  it('answers 503 naming the service when it is not configured or cannot be reached', async () => {
    const unset = new InternalClient({ service: 'customer', baseUrl: () => undefined, internalToken: 'x', actor: 'wallet' });
    await expect(unset.call(scope, 'GET', '/', 'r')).rejects.toThrow(new ServiceUnavailableError('The customer service address is not configured'));
    const dead = new InternalClient({ service: 'ingestion', baseUrl: () => 'http://127.0.0.1:9', internalToken: 'x', actor: 'billing' });
    try {
      await expect(dead.call(scope, 'GET', '/', 'r')).rejects.toMatchObject({ message: 'The ingestion service is unavailable; retry later' });
      await expect(dead.call(scope, 'GET', '/', 'r')).rejects.toBeInstanceOf(ServiceUnavailableError);
    } finally {
      await dead.close();
    }
  });

  it('refuses a call made while an embedded transaction is held, and makes it once the transaction ended (ADR 0055)', async () => {
    const client = new InternalClient({ service: 'ingestion', baseUrl: () => url, internalToken: 'tok-1234567890abcdef', actor: 'billing' });
    const before = seen.length;
    try {
      await expect(runHoldingTransaction(true, () => client.call(scope, 'GET', '/usage?x=1', 'req-t'))).rejects.toThrow(
        'Refused a call to the ingestion service (GET /usage) inside a database transaction',
      );
      expect(seen.length).toBe(before);
      // Work started inside the transaction that runs after it ended holds nothing.
      let later: Promise<unknown> | undefined;
      await runHoldingTransaction(true, async () => {
        later = new Promise((resolve) => setTimeout(resolve, 10)).then(() => client.call(scope, 'GET', '/after', 'req-u'));
      });
      expect(await later).toEqual({ status: 200, text: '{"ok":true}' });
      // On Postgres the call is made, with a process warning.
      const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
      try {
        expect(await runHoldingTransaction(false, () => client.call(scope, 'GET', '/pg', 'req-v'))).toEqual({ status: 200, text: '{"ok":true}' });
        expect(warn.mock.calls.map((c) => String(c[0]))).toEqual([expect.stringContaining('a call to the ingestion service (GET /pg) inside a database transaction')]);
      } finally {
        warn.mockRestore();
      }
    } finally {
      await client.close();
    }
  });
});
