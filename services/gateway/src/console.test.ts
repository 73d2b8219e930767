import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import express from 'express';
import { CONSOLE_CSP, mountConsole } from './console';

/** The console's files as the gateway serves them: the build's brotli or gzip copy when the browser accepts one. */
describe('mountConsole', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'billstream-console-dist-'));
  const script = Buffer.from(`console.log(${JSON.stringify('x'.repeat(2000))});\n`);
  let server: ReturnType<ReturnType<typeof express>['listen']>;
  let base: string;

  beforeAll(async () => {
    mkdirSync(path.join(dir, 'assets'));
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><script type="module" src="/console/assets/app.js"></script>');
    writeFileSync(path.join(dir, 'assets', 'app.js'), script);
    writeFileSync(path.join(dir, 'assets', 'app.js.br'), brotliCompressSync(script));
    writeFileSync(path.join(dir, 'assets', 'app.js.gz'), gzipSync(script));
    writeFileSync(path.join(dir, 'assets', 'plain.js'), script);
    const app = express();
    mountConsole(app, dir);
    await new Promise<void>((resolve) => (server = app.listen(0, '127.0.0.1', () => resolve())));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  // fetch would decode the body itself: node:http's raw answer shows the bytes sent.
  async function raw(p: string, acceptEncoding?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
    const http = await import('node:http');
    return new Promise((resolve, reject) => {
      http
        .get(`${base}${p}`, { headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {} }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        })
        .on('error', reject);
    });
  }

  it('sends the brotli copy to a browser that accepts it, else gzip, else the plain file', async () => {
    const br = await raw('/console/assets/app.js', 'gzip, deflate, br');
    expect([br.status, br.headers['content-encoding'], br.headers['content-type'], br.headers.vary]).toEqual([200, 'br', 'text/javascript; charset=utf-8', 'Accept-Encoding']);
    expect(brotliDecompressSync(br.body).equals(script)).toBe(true);
    expect(br.body.length).toBeLessThan(script.length / 4);
    expect(br.headers['cache-control']).toContain('immutable');
    expect(br.headers['content-security-policy']).toBe(CONSOLE_CSP);

    const gz = await raw('/console/assets/app.js', 'gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).equals(script)).toBe(true);

    const plain = await raw('/console/assets/app.js');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.equals(script)).toBe(true);
  });

  it('a file without a compressed copy, or a missing one, is served or answered 404 as before', async () => {
    const plain = await raw('/console/assets/plain.js', 'br');
    expect([plain.status, plain.headers['content-encoding']]).toEqual([200, undefined]);
    expect(plain.body.equals(script)).toBe(true);
    expect((await raw('/console/assets/none.js', 'br')).status).toBe(404);
    expect((await raw('/console/assets/..%2findex.html', 'br')).status).toBe(404);
  });
});
