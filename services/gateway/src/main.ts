import { runServiceProcess } from '@billstream/runtime';
import { gatewayEnv } from './config';
import { createGateway } from './gateway';
import { SCHEMA } from './migrations';

runServiceProcess({
  name: 'gateway',
  schema: SCHEMA,
  defaultPort: 8080,
  env: gatewayEnv,
  create: (deps, config) =>
    createGateway(deps, {
      internalToken: config.INTERNAL_TOKEN,
      serviceUrls: {
        customer: config.CUSTOMER_SERVICE_URL,
        wallet: config.WALLET_SERVICE_URL,
        'ingestion-aggregator': config.INGESTION_SERVICE_URL,
        'webhook-dispatcher': config.WEBHOOK_SERVICE_URL,
        billing: config.BILLING_SERVICE_URL,
      },
      rateLimitRps: config.RATE_LIMIT_RPS,
      rateLimitBurst: config.RATE_LIMIT_BURST,
      apiKeyCacheTtlMs: config.API_KEY_CACHE_TTL_MS,
      bootstrap: config.BOOTSTRAP_API_KEY
        ? { key: config.BOOTSTRAP_API_KEY, tenantId: config.BOOTSTRAP_TENANT_ID, environmentId: config.BOOTSTRAP_ENVIRONMENT_ID }
        : undefined,
    }),
});
