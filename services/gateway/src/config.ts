import { z } from 'zod';
import { env } from '@billstream/config';

/** Gateway variables beyond the common ones (parsed once at start; a bad value stops it). */
export const gatewayEnv = {
  CUSTOMER_SERVICE_URL: z.string().url(),
  WALLET_SERVICE_URL: z.string().url(),
  INGESTION_SERVICE_URL: z.string().url(),
  WEBHOOK_SERVICE_URL: z.string().url(),
  BILLING_SERVICE_URL: z.string().url(),
  RATE_LIMIT_RPS: env.number(1000, 0.001),
  RATE_LIMIT_BURST: env.number(2000, 1),
  API_KEY_CACHE_TTL_MS: env.int(5000),
  BOOTSTRAP_API_KEY: z.string().min(20, 'must be at least 20 characters').optional(),
  BOOTSTRAP_TENANT_ID: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/).default('default'),
  BOOTSTRAP_ENVIRONMENT_ID: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/).default('production'),
};
