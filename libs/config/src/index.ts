import { z } from 'zod';
import { INTERNAL_TOKEN_MIN_LENGTH, secretEnv } from './secrets';

export { INTERNAL_TOKEN_MIN_LENGTH, KNOWN_PLACEHOLDER_SECRETS, isPlaceholderSecret, secretEnv } from './secrets';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses environment variables once with a zod schema whose keys are the variable names.
 * A bad value throws a ConfigError naming each variable and what is wrong with it.
 */
export function loadConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  const cleaned: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && v !== '') cleaned[k] = v;
  }
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`),
    );
  }
  return result.data;
}

/** Helpers for the usual variable shapes. */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  int: (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback),
  number: (fallback: number, min = 0) => z.coerce.number().min(min).default(fallback),
  bool: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'])
      .default(fallback ? 'true' : 'false')
      .transform((v) => v === 'true' || v === '1' || v === 'yes'),
  url: () => z.string().url(),
  logLevel: () => z.enum(['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly', 'silent']).default('info'),
  /** Comma-separated list. */
  list: () =>
    z.string().transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
};

/** Variables every service reads. */
export const commonServiceEnv = {
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// connection string'),
  DATABASE_POOL_MAX: env.int(10, 1),
  /** Repeated statements as named (prepared) statements (ADR 0052); false behind a pooler that drops them. */
  DATABASE_NAMED_STATEMENTS: env.bool(true),
  KAFKA_BROKERS: env.list().pipe(z.array(z.string().regex(/^[^:\s]+:\d+$/, 'must be host:port')).min(1)),
  KAFKA_TOPIC_PREFIX: z.string().regex(/^[a-zA-Z0-9._-]*$/).default(''),
  KAFKA_PARTITIONS: env.int(4, 1),
  KAFKA_SESSION_TIMEOUT_MS: env.int(6000, 1000),
  KAFKA_HEARTBEAT_INTERVAL_MS: env.int(1000, 100),
  KAFKA_REBALANCE_TIMEOUT_MS: env.int(10_000, 1000),
  KAFKA_RETRY_MAX_MS: env.int(1000, 100),
  KAFKA_FETCH_MAX_WAIT_MS: env.int(1000, 10),
  KAFKA_FETCH_MIN_BYTES: env.int(1, 1),
  /** Tries of one consumed message before it is dead-lettered, and the longest pause between two (ADR 0055; read by libs/outbox). */
  CONSUMER_MAX_ATTEMPTS: env.int(6, 1),
  CONSUMER_RETRY_MAX_MS: env.int(5000, 0),
  /** Shared secret of gateway -> service calls: 32+ characters, no value known from the repository (ADR 0034). */
  INTERNAL_TOKEN: secretEnv(INTERNAL_TOKEN_MIN_LENGTH),
  LOG_LEVEL: env.logLevel(),
  HOST: z.string().default('0.0.0.0'),
};

/** A heartbeat must come well within the session, or every member would be declared dead. */
export function checkKafkaTiming(config: unknown, ctx: z.RefinementCtx): void {
  const { KAFKA_SESSION_TIMEOUT_MS: session, KAFKA_HEARTBEAT_INTERVAL_MS: heartbeat } = config as Record<string, unknown>;
  if (typeof session === 'number' && typeof heartbeat === 'number' && heartbeat >= session) {
    ctx.addIssue({
      code: 'custom',
      path: ['KAFKA_HEARTBEAT_INTERVAL_MS'],
      message: `must be lower than KAFKA_SESSION_TIMEOUT_MS (${session}); a third of it or less`,
    });
  }
  // Members heartbeat between fetches: a fetch held longer than half the session risks it.
  const { KAFKA_FETCH_MAX_WAIT_MS: fetchWait } = config as Record<string, unknown>;
  if (typeof session === 'number' && typeof fetchWait === 'number' && fetchWait * 2 > session) {
    ctx.addIssue({
      code: 'custom',
      path: ['KAFKA_FETCH_MAX_WAIT_MS'],
      message: `must be at most half of KAFKA_SESSION_TIMEOUT_MS (${session}): members heartbeat between fetches`,
    });
  }
}
