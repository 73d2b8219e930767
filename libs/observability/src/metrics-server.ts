import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { renderMetrics } from './registry';

export interface MetricsListener {
  port: number;
  close(): Promise<void>;
}

/**
 * The metrics listener (ADR 0020): GET /metrics on a port of its own (METRICS_PORT), apart
 * from the service's port, so the gateway's public port never shows metrics and no API key
 * is asked. Any other path is a 404.
 */
export function listenMetrics(port: number, host: string): Promise<MetricsListener> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    renderMetrics().then(
      ({ body, contentType }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${String(err)}\n`),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
