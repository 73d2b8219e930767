import path from 'node:path';
import { z } from 'zod';
import { checkKafkaTiming, commonServiceEnv, env, loadConfig } from '@billstream/config';
import { runMain } from '@billstream/http';
import { createLogger, type Logger } from '@billstream/logger';
import { metricsEnv, metricsPortOf, startObservability } from '@billstream/runtime';
import { startEmbedded } from './embedded';

const standaloneEnv = z
  .object({
    PORT: env.port(8080),
    HOST: z.string().default('127.0.0.1'),
    DATA_DIR: z.string().default('.data'),
    DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// connection string').optional(),
    DATABASE_POOL_MAX: env.int(5, 1),
    KAFKA_BROKERS: env.list().optional(),
    KAFKA_TOPIC_PREFIX: z.string().default(''),
    KAFKA_SESSION_TIMEOUT_MS: commonServiceEnv.KAFKA_SESSION_TIMEOUT_MS,
    KAFKA_HEARTBEAT_INTERVAL_MS: commonServiceEnv.KAFKA_HEARTBEAT_INTERVAL_MS,
    KAFKA_REBALANCE_TIMEOUT_MS: commonServiceEnv.KAFKA_REBALANCE_TIMEOUT_MS,
    KAFKA_RETRY_MAX_MS: commonServiceEnv.KAFKA_RETRY_MAX_MS,
    KAFKA_FETCH_MAX_WAIT_MS: commonServiceEnv.KAFKA_FETCH_MAX_WAIT_MS,
    RATE_LIMIT_RPS: env.number(1000, 0.001),
    RATE_LIMIT_BURST: env.number(2000, 1),
    LOG_LEVEL: env.logLevel(),
    BOOTSTRAP_API_KEY: z.string().min(20).optional(),
    BOOTSTRAP_TENANT_ID: z.string().default('default'),
    BOOTSTRAP_ENVIRONMENT_ID: z.string().default('production'),
    ...metricsEnv,
  })
  .superRefine(checkKafkaTiming);

let logger: Logger | undefined;
runMain('billstream', () => logger ?? createLogger({ service: 'billstream' }), async () => {
  const config = loadConfig(standaloneEnv);
  logger = createLogger({ service: 'billstream', level: config.LOG_LEVEL });
  const dataDir = path.resolve(config.DATA_DIR);
  // One registry and one metrics listener for every service of the process (ADR 0020).
  const observability = await startObservability({
    service: 'standalone',
    metricsEnabled: config.METRICS_ENABLED,
    metricsPort: metricsPortOf(config),
    host: config.HOST,
  });
  const embedded = await startEmbedded({
    logger,
    dataDir,
    port: config.PORT,
    host: config.HOST,
    databaseUrl: config.DATABASE_URL,
    databasePoolMax: config.DATABASE_POOL_MAX,
    kafkaBrokers: config.KAFKA_BROKERS && config.KAFKA_BROKERS.length > 0 ? config.KAFKA_BROKERS : undefined,
    kafkaTopicPrefix: config.KAFKA_TOPIC_PREFIX,
    kafkaTiming: {
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      heartbeatIntervalMs: config.KAFKA_HEARTBEAT_INTERVAL_MS,
      rebalanceTimeoutMs: config.KAFKA_REBALANCE_TIMEOUT_MS,
      retryMaxMs: config.KAFKA_RETRY_MAX_MS,
      fetchMaxWaitMs: config.KAFKA_FETCH_MAX_WAIT_MS,
    },
    rateLimitRps: config.RATE_LIMIT_RPS,
    rateLimitBurst: config.RATE_LIMIT_BURST,
    bootstrap: config.BOOTSTRAP_API_KEY
      ? { key: config.BOOTSTRAP_API_KEY, tenantId: config.BOOTSTRAP_TENANT_ID, environmentId: config.BOOTSTRAP_ENVIRONMENT_ID }
      : undefined,
  });
  const lines = [
    '',
    `Billstream is running at ${embedded.url}`,
    `  database: ${embedded.database}`,
    `  bus:      ${config.KAFKA_BROKERS ? `Kafka ${config.KAFKA_BROKERS.join(',')}` : 'in-process'}`,
  ];
  if (embedded.devKey) {
    lines.push(
      `  API key:  ${embedded.devKey.key}  (tenant default, environment development; ${
        embedded.devKey.created ? 'created now' : 'from'
      } ${embedded.devKey.file})`,
      `  try:      curl -H "Authorization: Bearer ${embedded.devKey.key}" ${embedded.url}/v1/customers`,
    );
  }
  if (observability.metricsPort !== undefined) lines.push(`  metrics:  http://${config.HOST}:${observability.metricsPort}/metrics`);
  process.stdout.write(`${lines.join('\n')}\n\n`);
  return {
    async stop() {
      await embedded.stop();
      await observability.stop();
    },
  };
});
