import { z } from 'zod';
import { checkKafkaTiming, commonServiceEnv, env } from '@billstream/config';
import { gatewaySettingsEnv } from '@billstream/gateway';
import { ingestionEnv } from '@billstream/ingestion-aggregator';
import { metricsEnv } from '@billstream/runtime';
import { walletSettingsEnv } from '@billstream/wallet';
import { webhookEnv } from '@billstream/webhook-dispatcher';
import { billingSettingsEnv } from '@billstream/billing';
import { entitlementsSettingsEnv } from '@billstream/entitlements';

/**
 * Variables of the embedded default itself (`npm start`). The services' own settings are read
 * by the one mapping of each service (`<service>Settings`), from the same environment.
 */
export const standaloneEnv = {
  PORT: env.port(8080),
  HOST: z.string().default('127.0.0.1'),
  DATA_DIR: z.string().default('.data'),
  DATABASE_URL: commonServiceEnv.DATABASE_URL.optional(),
  DATABASE_POOL_MAX: env.int(5, 1),
  DATABASE_NAMED_STATEMENTS: commonServiceEnv.DATABASE_NAMED_STATEMENTS,
  KAFKA_BROKERS: env.list().optional(),
  KAFKA_TOPIC_PREFIX: commonServiceEnv.KAFKA_TOPIC_PREFIX,
  KAFKA_PARTITIONS: commonServiceEnv.KAFKA_PARTITIONS,
  KAFKA_SESSION_TIMEOUT_MS: commonServiceEnv.KAFKA_SESSION_TIMEOUT_MS,
  KAFKA_HEARTBEAT_INTERVAL_MS: commonServiceEnv.KAFKA_HEARTBEAT_INTERVAL_MS,
  KAFKA_REBALANCE_TIMEOUT_MS: commonServiceEnv.KAFKA_REBALANCE_TIMEOUT_MS,
  KAFKA_RETRY_MAX_MS: commonServiceEnv.KAFKA_RETRY_MAX_MS,
  KAFKA_FETCH_MAX_WAIT_MS: commonServiceEnv.KAFKA_FETCH_MAX_WAIT_MS,
  KAFKA_FETCH_MIN_BYTES: commonServiceEnv.KAFKA_FETCH_MIN_BYTES,
  CONSUMER_MAX_ATTEMPTS: commonServiceEnv.CONSUMER_MAX_ATTEMPTS,
  CONSUMER_RETRY_MAX_MS: commonServiceEnv.CONSUMER_RETRY_MAX_MS,
  LOG_LEVEL: env.logLevel(),
  ...metricsEnv,
};

export const standaloneSchema = z.object(standaloneEnv).superRefine(checkKafkaTiming);

/**
 * The settings schemas of the services the embedded default composes, each read by that
 * service's mapping (embedded.ts): with `standaloneEnv`, every variable `npm start` honours
 * (`npm run check:deploy` compares them with docs/operations.md).
 */
export const embeddedServiceSettings = {
  gateway: gatewaySettingsEnv.shape,
  wallet: walletSettingsEnv.shape,
  'ingestion-aggregator': ingestionEnv,
  'webhook-dispatcher': webhookEnv,
  billing: billingSettingsEnv.shape,
  entitlements: entitlementsSettingsEnv.shape,
};
