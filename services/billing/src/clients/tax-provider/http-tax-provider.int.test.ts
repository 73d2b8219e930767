import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { bodySignature } from '@billstream/http';
import { HttpTaxProvider, TaxProviderFailure } from './http-tax-provider';

/** The transport of the HTTP tax provider against a real server on 127.0.0.1 (docs/api/taxes.md#http-provider). */
describe('HttpTaxProvider', () => {
  let server: http.Server;
  let url = '';
  let handle: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void = () => undefined;
  const provider = new HttpTaxProvider(300);

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => handle(req, body, res));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tax`;
  });
  afterAll(async () => {
    await provider.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const failure = async (p: Promise<unknown>): Promise<string> => {
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaxProviderFailure);
    return (err as TaxProviderFailure).reason;
  };

  it('POSTs the exact body signed X-Service-Signature with the secret, and answers the JSON of a 2xx', async () => {
    let seen: { method?: string; signature?: string; type?: string; body?: string } = {};
    handle = (req, body, res) => {
      seen = { method: req.method, signature: String(req.headers['x-service-signature']), type: req.headers['content-type'], body };
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"lines":[]}');
    };
    const body = JSON.stringify({ invoice_id: 'inv_1', lines: [] });
    expect(await provider.post(url, 'a-secret-of-sixteen+', body)).toEqual({ lines: [] });
    expect(seen).toEqual({ method: 'POST', signature: bodySignature('a-secret-of-sixteen+', body), type: 'application/json', body });
  });

  it('fails on a non-2xx, a body that is not JSON, a redirect, and no answer within the timeout', async () => {
    handle = (_req, _body, res) => void res.writeHead(500).end('{}');
    expect(await failure(provider.post(url, 's', '{}'))).toBe('answered 500');
    handle = (_req, _body, res) => void res.writeHead(200).end('not json');
    expect(await failure(provider.post(url, 's', '{}'))).toBe('answered a body that is not JSON');
    handle = (_req, _body, res) => void res.writeHead(302, { location: 'http://127.0.0.1:1/' }).end();
    expect(await failure(provider.post(url, 's', '{}'))).toBe('answered 302');
    handle = (_req, _body, res) => void setTimeout(() => !res.destroyed && res.writeHead(200).end('{}'), 1000).unref();
    const started = Date.now();
    expect(await failure(provider.post(url, 's', '{}'))).toBe('no answer within 300 ms');
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('fails when nothing listens', async () => {
    expect(await failure(provider.post('http://127.0.0.1:1/tax', 's', '{}'))).toMatch(/ECONNREFUSED/);
  });
});
