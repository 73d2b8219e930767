import { z } from 'zod';
import { env, loadConfig } from '@billstream/config';

/** Variables of the entitlements service beyond the common ones. */
export const entitlementsEnv = {
  /** A customer the projection has not heard of yet (created a moment ago) is asked of the customer service. */
  CUSTOMER_SERVICE_URL: z.string().url('must be the base URL of the customer service'),
  /** Usage comes from the ingestion-aggregator's meters. */
  INGESTION_SERVICE_URL: z.string().url('must be the base URL of the ingestion-aggregator'),
  /** The wallet service: the check counts its reservations of hard limits (`held`, ADR 0070); unset: it counts none. */
  WALLET_SERVICE_URL: z.string().url('must be the base URL of the wallet service').optional(),
  /** Billing's snapshot seeds the projection (ADR 0061); unset: no seed (a deployment that started with this service). */
  BILLING_SERVICE_URL: z.string().url('must be the base URL of the billing service').optional(),
  /** Whether a start seeds the projection from billing when it was never seeded (`npm run seed -w @billstream/entitlements` seeds again at any time). */
  ENTITLEMENTS_SEED_ON_START: env.bool(true),
  /**
   * Whether this replica applies billing-events and customer-events to the projection (and seeds it). `false`:
   * a check-only replica that reads the projection others write and hears of their changes over the notices
   * channel (ADR 0025, 0061), so that applying billing's changes runs where billing's work runs.
   */
  ENTITLEMENTS_PROJECTION: env.bool(true),
};

/** Settings the embedded default reads from the environment (service addresses are known in-process). */
export const entitlementsSettingsEnv = z.object(entitlementsEnv).omit({ CUSTOMER_SERVICE_URL: true, INGESTION_SERVICE_URL: true, BILLING_SERVICE_URL: true, WALLET_SERVICE_URL: true });

export interface EntitlementsSettings {
  seedOnStart: boolean;
  /** This replica consumes billing-events and customer-events into the projection (ADR 0061). */
  projection: boolean;
}

export function entitlementsSettings(config: z.output<typeof entitlementsSettingsEnv>): EntitlementsSettings {
  return { seedOnStart: config.ENTITLEMENTS_SEED_ON_START, projection: config.ENTITLEMENTS_PROJECTION };
}

/** Parses the service's settings of an environment (a bad value throws, naming the variable). */
export function entitlementsSettingsFrom(source: NodeJS.ProcessEnv): EntitlementsSettings {
  return entitlementsSettings(loadConfig(entitlementsSettingsEnv, source));
}
