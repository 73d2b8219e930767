import { z } from 'zod';
import { KafkaBus, type KafkaTiming } from '@billstream/bus';
import { checkKafkaTiming, commonServiceEnv, loadConfig } from '@billstream/config';
import type { ServiceName } from '@billstream/contracts';
import { createDb } from '@billstream/db';
import { listen, runMain } from '@billstream/http';
import { createLogger, type Logger } from '@billstream/logger';
import { armedFailpoints } from './failpoints';
import { metricsEnv, metricsPortOf, startObservability } from './observability';
import type { Service, ServiceDeps } from './service';

export type CommonServiceConfig = z.output<z.ZodObject<typeof commonServiceEnv>> & z.output<z.ZodObject<typeof metricsEnv>> & { PORT: number };

export interface RunServiceOptions<E extends z.ZodRawShape> {
  name: ServiceName;
  schema: string;
  defaultPort: number;
  /** Variables of this service beyond the common ones. */
  env: E;
  create(deps: ServiceDeps, config: CommonServiceConfig & z.output<z.ZodObject<E>>): Service;
}

/** The consumer group and reconnection timing of the KAFKA_* variables. */
export function kafkaTimingOf(config: CommonServiceConfig): KafkaTiming {
  return {
    sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
    heartbeatIntervalMs: config.KAFKA_HEARTBEAT_INTERVAL_MS,
    rebalanceTimeoutMs: config.KAFKA_REBALANCE_TIMEOUT_MS,
    retryMaxMs: config.KAFKA_RETRY_MAX_MS,
    fetchMaxWaitMs: config.KAFKA_FETCH_MAX_WAIT_MS,
    fetchMinBytes: config.KAFKA_FETCH_MIN_BYTES,
  };
}

/**
 * The main of a service running as its own process: configuration from the environment
 * (a bad value stops the start, naming the variable), Postgres, Kafka, HTTP. Consumers join
 * their groups in the background: the service listens as soon as its migrations ran, and
 * /readyz answers from the database and the broker, never from group membership.
 */
export function runServiceProcess<E extends z.ZodRawShape>(options: RunServiceOptions<E>): void {
  // Node's start and the loading of the code, before anything of the service runs.
  const codeLoadedMs = Math.round(process.uptime() * 1000);
  let logger: Logger | undefined;
  runMain(options.name, () => logger ?? createLogger({ service: options.name }), async () => {
    const schema = z
      .object({
        ...commonServiceEnv,
        ...options.env,
        ...metricsEnv,
        PORT: z.coerce.number().int().min(0).max(65535).default(options.defaultPort),
      })
      .superRefine(checkKafkaTiming);
    const config = loadConfig(schema) as CommonServiceConfig & z.output<z.ZodObject<E>>;
    const log = createLogger({ service: options.name, level: config.LOG_LEVEL });
    logger = log;
    // A process with failpoints kills itself on purpose (ADR 0017): say so loudly.
    if (armedFailpoints().length > 0) log.warn('failpoints armed: this process kills itself at them (tests only)', { failpoints: armedFailpoints() });
    const observability = await startObservability({
      service: options.name,
      metricsEnabled: config.METRICS_ENABLED,
      metricsPort: metricsPortOf(config),
      host: config.HOST,
    });
    const db = createDb({ databaseUrl: config.DATABASE_URL, schema: options.schema, poolMax: config.DATABASE_POOL_MAX, namedStatements: config.DATABASE_NAMED_STATEMENTS });
    const bus = new KafkaBus({
      brokers: config.KAFKA_BROKERS,
      clientId: `billstream-${options.name}`,
      logger: log,
      topicPrefix: config.KAFKA_TOPIC_PREFIX,
      partitions: config.KAFKA_PARTITIONS,
      timing: kafkaTimingOf(config),
    });
    await bus.start();
    const service = options.create({ db, bus, logger: log }, config);
    await service.start();
    const http = await listen(service.app, config.PORT, config.HOST);
    // How long the start took since the process began, and how much of it was loading code.
    log.info('listening', { port: http.port, metrics_port: observability.metricsPort, tracing: observability.tracing, code_loaded_ms: codeLoadedMs, listening_ms: Math.round(process.uptime() * 1000) });
    return {
      stop: async () => {
        await http.close();
        await service.stop();
        await bus.stop();
        await db.destroy();
        await observability.stop();
      },
    };
  });
}
