import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Logger } from '@billstream/logger';
import { requestListener } from './lean-routes';

export interface Listening {
  server: Server;
  port: number;
  url: string;
  close(): Promise<void>;
}

/** Listens on host:port (0 picks a free port) and resolves once bound. */
export function listen(app: Express, port: number, host = '0.0.0.0'): Promise<Listening> {
  return new Promise((resolve, reject) => {
    // Lean routes (ADR 0027) first, express for the rest.
    const server = createServer(requestListener(app));
    server.listen(port, host);
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    server.once('error', reject);
    server.once('listening', () => {
      const actual = (server.address() as AddressInfo).port;
      const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
      resolve({
        server,
        port: actual,
        url: `http://${shownHost}:${actual}`,
        close: () =>
          new Promise<void>((done) => {
            // A keep-alive connection whose request was still running when close began turns
            // idle later and would hold the close for keepAliveTimeout (65 s): close those too
            // as they turn idle.
            const sweep = setInterval(() => server.closeIdleConnections(), 100);
            server.close(() => {
              clearInterval(sweep);
              done();
            });
            server.closeIdleConnections();
          }),
      });
    });
  });
}

/**
 * Runs a process's main: starts it, logs a bad configuration without a stack, and stops
 * cleanly on SIGINT/SIGTERM.
 */
export function runMain(name: string, logger: () => Logger, start: () => Promise<{ stop(): Promise<void> }>): void {
  let stopping = false;
  exitWithParent();
  start()
    .then((running) => {
      const shutdown = (signal: string) => {
        if (stopping) return;
        stopping = true;
        logger().info('stopping', { service: name, signal });
        running
          .stop()
          .then(() => process.exit(0))
          .catch((err) => {
            logger().error('stop failed', { err });
            process.exit(1);
          });
      };
      process.on('SIGINT', () => shutdown('SIGINT'));
      process.on('SIGTERM', () => shutdown('SIGTERM'));
    })
    .catch((err: unknown) => {
      if (err instanceof Error && err.name === 'ConfigError') {
        process.stderr.write(`${name}: ${err.message}\n`);
      } else {
        process.stderr.write(`${name}: failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
      }
      process.exit(1);
    });
}

/**
 * With `EXIT_WITH_PARENT=true` (set by the test stacks, never in production), the process ends
 * when the process that started it is gone: a test runner killed mid-run would otherwise leave
 * its service processes running, holding ports and database connections.
 */
function exitWithParent(): void {
  if (process.env.EXIT_WITH_PARENT !== 'true') return;
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(1);
  }, 1000).unref();
}
