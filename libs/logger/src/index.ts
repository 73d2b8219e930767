import winston from 'winston';
import { activeTraceId } from '@billstream/observability';

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

/** Structured JSON logs, one object per line. Level `silent` logs nothing. */
export function createLogger({ service, level = 'info' }: LoggerOptions): Logger {
  return winston.createLogger({
    level: level === 'silent' ? 'error' : level,
    silent: level === 'silent',
    defaultMeta: { service },
    format: winston.format.combine(
      traceIdFormat(),
      winston.format.timestamp(),
      winston.format.errors({ stack: true }),
      winston.format.json(),
    ),
    transports: [new winston.transports.Console()],
  });
}
