import winston from 'winston';

export type Logger = winston.Logger;

export interface LoggerOptions {
  service: string;
  level?: string;
}

/** Structured JSON logs, one object per line. Level `silent` logs nothing. */
export function createLogger({ service, level = 'info' }: LoggerOptions): Logger {
  return winston.createLogger({
    level: level === 'silent' ? 'error' : level,
    silent: level === 'silent',
    defaultMeta: { service },
    format: winston.format.combine(
      winston.format.timestamp(),
      winston.format.errors({ stack: true }),
      winston.format.json(),
    ),
    transports: [new winston.transports.Console()],
  });
}
