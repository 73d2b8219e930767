import winston from 'winston';
import { activeTraceId } from '@billstream/observability';
import { errorsIn } from './serialize-error';

export { errorsIn, serializeError, type SerializedError } from './serialize-error';

export type Logger = winston.Logger;

export interface LoggerOptions {
  service: string;
  level?: string;
}

/** Adds `trace_id` (ADR 0020) to a line written inside a traced span; nothing when tracing is off. */
const traceIdFormat = winston.format((info) => {
  const traceId = activeTraceId();
  if (traceId) info.trace_id = traceId;
  return info;
});

/**
 * Errors anywhere in a line's metadata (`{ err }`, `{ cause }`, `{ failures: [err] }`) written
 * with message, stack, Postgres fields and cause chain; winston's JSON format alone writes `{}`.
 */
const errorFormat = winston.format((info) => {
  const record = info as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key === 'level' || key === 'message') continue;
    const value = record[key];
    if (value !== null && typeof value === 'object') record[key] = errorsIn(value);
  }
  return info;
});

/**
 * `service` unless the line has one: a child's (`logger.child({ service: 'customer' })`, as the
 * embedded default makes one per service) wins. winston's defaultMeta would overwrite it.
 */
function serviceFormat(service: string) {
  return winston.format((info) => {
    if (info.service === undefined) info.service = service;
    return info;
  })();
}

/** Structured JSON logs, one object per line. Level `silent` logs nothing. */
export function createLogger({ service, level = 'info' }: LoggerOptions): Logger {
  return winston.createLogger({
    level: level === 'silent' ? 'error' : level,
    silent: level === 'silent',
    format: winston.format.combine(
      serviceFormat(service),
      traceIdFormat(),
      winston.format.timestamp(),
      winston.format.errors({ stack: true }),
      errorFormat(),
      winston.format.json(),
    ),
    transports: [new winston.transports.Console()],
  });
}
