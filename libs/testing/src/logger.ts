import { Writable } from 'node:stream';
import winston from 'winston';
import { createLogger, type Logger } from '@billstream/logger';

/** A logger for tests: silent unless TEST_LOG_LEVEL is set. */
export function testLogger(service = 'test'): Logger {
  return createLogger({ service, level: process.env.TEST_LOG_LEVEL ?? 'silent' });
}

/** A logger at `info` whose JSON lines land in `lines`, parsed, instead of on stdout: for tests that assert what was logged. */
export function capturingLogger(service = 'test'): { logger: Logger; lines: Array<Record<string, any>> } {
  const lines: Array<Record<string, any>> = [];
  const logger = createLogger({ service });
  logger.clear();
  logger.add(
    new winston.transports.Stream({
      stream: new Writable({
        write(chunk, _enc, done) {
          lines.push(JSON.parse(chunk.toString()));
          done();
        },
      }),
    }),
  );
  return { logger, lines };
}
