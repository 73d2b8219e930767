import { z } from 'zod';
import { env, loadConfig, secretEnv } from '@billstream/config';
import type { GatewayConfig } from './gateway';

/** Gateway variables beyond the common ones (parsed once at start; a bad value stops it). */
export const gatewayEnv = {
  CUSTOMER_SERVICE_URL: z.string().url(),
  WALLET_SERVICE_URL: z.string().url(),
  INGESTION_SERVICE_URL: z.string().url(),
  WEBHOOK_SERVICE_URL: z.string().url(),
  BILLING_SERVICE_URL: z.string().url(),
  /** The entitlement check and a customer's entitlements (ADR 0061). */
  ENTITLEMENTS_SERVICE_URL: z.string().url().default('http://127.0.0.1:8086'),
  RATE_LIMIT_RPS: env.number(1000, 0.001),
  RATE_LIMIT_BURST: env.number(2000, 1),
  API_KEY_CACHE_TTL_MS: env.int(5000),
  /** Keys the cache holds at most; past it the least recently used one is dropped (ADR 0032). */
  API_KEY_CACHE_MAX: env.int(10_000, 1),
  /** Failed authentications per source address, checked before any key lookup (ADR 0032). */
  AUTH_FAILURE_RATE_LIMIT_RPS: env.number(10, 0.001),
  AUTH_FAILURE_RATE_LIMIT_BURST: env.number(200, 1),
  /** Proxies in front of the gateway that append to X-Forwarded-For: 0 takes the TCP peer as the source address. */
  TRUSTED_PROXY_HOPS: env.int(0),
  /** A key with `*` the gateway ensures on start; never one of the placeholders of the repository (ADR 0034). */
  BOOTSTRAP_API_KEY: secretEnv(20).optional(),
  /** The public address portal session URLs start with (no trailing slash); unset: the address a request came to (ADR 0069). */
  PUBLIC_BASE_URL: z
    .string()
    .url()
    .transform((u) => u.replace(/\/+$/, ''))
    .optional(),
  BOOTSTRAP_TENANT_ID: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/).default('default'),
  BOOTSTRAP_ENVIRONMENT_ID: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/).default('production'),
};

/** The gateway's settings without the service addresses: what the embedded default reads too (it knows the addresses). */
export const gatewaySettingsEnv = z.object(gatewayEnv).omit({
  CUSTOMER_SERVICE_URL: true,
  WALLET_SERVICE_URL: true,
  INGESTION_SERVICE_URL: true,
  WEBHOOK_SERVICE_URL: true,
  BILLING_SERVICE_URL: true,
  ENTITLEMENTS_SERVICE_URL: true,
});

export type GatewaySettings = Omit<GatewayConfig, 'internalToken' | 'serviceUrls' | 'serviceRoutes'>;

/** The one mapping of the gateway's variables to its settings, for its own process and the embedded default. */
export function gatewaySettings(config: z.output<typeof gatewaySettingsEnv>): GatewaySettings {
  return {
    rateLimitRps: config.RATE_LIMIT_RPS,
    rateLimitBurst: config.RATE_LIMIT_BURST,
    apiKeyCacheTtlMs: config.API_KEY_CACHE_TTL_MS,
    apiKeyCacheMax: config.API_KEY_CACHE_MAX,
    authFailureRps: config.AUTH_FAILURE_RATE_LIMIT_RPS,
    authFailureBurst: config.AUTH_FAILURE_RATE_LIMIT_BURST,
    trustedProxyHops: config.TRUSTED_PROXY_HOPS,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    bootstrap: config.BOOTSTRAP_API_KEY
      ? { key: config.BOOTSTRAP_API_KEY, tenantId: config.BOOTSTRAP_TENANT_ID, environmentId: config.BOOTSTRAP_ENVIRONMENT_ID }
      : undefined,
  };
}

/** Parses the gateway's settings of an environment (a bad value throws, naming the variable). */
export function gatewaySettingsFrom(source: NodeJS.ProcessEnv): GatewaySettings {
  return gatewaySettings(loadConfig(gatewaySettingsEnv, source));
}

/** Where a gateway running alone forwards each service's routes. */
export function gatewayServiceUrls(config: z.output<z.ZodObject<typeof gatewayEnv>>): GatewayConfig['serviceUrls'] {
  return {
    customer: config.CUSTOMER_SERVICE_URL,
    wallet: config.WALLET_SERVICE_URL,
    'ingestion-aggregator': config.INGESTION_SERVICE_URL,
    'webhook-dispatcher': config.WEBHOOK_SERVICE_URL,
    billing: config.BILLING_SERVICE_URL,
    entitlements: config.ENTITLEMENTS_SERVICE_URL,
  };
}
