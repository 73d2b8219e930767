import { createLogger, type Logger } from '@billstream/logger';

/** A logger for tests: silent unless TEST_LOG_LEVEL is set. */
export function testLogger(service = 'test'): Logger {
  return createLogger({ service, level: process.env.TEST_LOG_LEVEL ?? 'silent' });
}
