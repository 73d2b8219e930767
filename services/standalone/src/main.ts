import path from 'node:path';
import { loadConfig } from '@billstream/config';
import { runMain } from '@billstream/http';
import { createLogger, type Logger } from '@billstream/logger';
import { metricsPortOf, startObservability } from '@billstream/runtime';
import { standaloneSchema } from './config';
import { startEmbedded } from './embedded';

let logger: Logger | undefined;
runMain('billstream', () => logger ?? createLogger({ service: 'billstream' }), async () => {
  const config = loadConfig(standaloneSchema);
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
    databaseNamedStatements: config.DATABASE_NAMED_STATEMENTS,
    kafkaBrokers: config.KAFKA_BROKERS && config.KAFKA_BROKERS.length > 0 ? config.KAFKA_BROKERS : undefined,
    kafkaTopicPrefix: config.KAFKA_TOPIC_PREFIX,
    kafkaPartitions: config.KAFKA_PARTITIONS,
    kafkaTiming: {
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      heartbeatIntervalMs: config.KAFKA_HEARTBEAT_INTERVAL_MS,
      rebalanceTimeoutMs: config.KAFKA_REBALANCE_TIMEOUT_MS,
      retryMaxMs: config.KAFKA_RETRY_MAX_MS,
      fetchMaxWaitMs: config.KAFKA_FETCH_MAX_WAIT_MS,
      fetchMinBytes: config.KAFKA_FETCH_MIN_BYTES,
    },
  });
  const lines = [
    '',
    `Billstream is running at ${embedded.url}`,
    `  database: ${embedded.database}`,
    `  bus:      ${config.KAFKA_BROKERS ? `Kafka ${config.KAFKA_BROKERS.join(',')}` : 'in-process'}`,
    `  console:  ${embedded.url}/console/  (enter the API key below)`,
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
