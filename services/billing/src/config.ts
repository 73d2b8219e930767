import { z } from 'zod';
import { env, loadConfig } from '@billstream/config';

/** Variables of the billing service beyond the common ones. */
export const billingEnv = {
  CUSTOMER_SERVICE_URL: z.string().url('must be the base URL of the customer service'),
  INGESTION_SERVICE_URL: z.string().url('must be the base URL of the ingestion-aggregator'),
  /** How often the period job runs; 0 turns the schedule off. */
  BILLING_INTERVAL_MS: env.int(60_000, 0),
  SUBSCRIPTION_RENEWAL_NOTICE_DAYS: z.coerce.number().int('must be a whole number').min(0).max(366).default(3),
};

/** Settings the embedded default reads from the environment (service addresses are known in-process). */
export const billingSettingsEnv = z.object({
  BILLING_INTERVAL_MS: billingEnv.BILLING_INTERVAL_MS,
  SUBSCRIPTION_RENEWAL_NOTICE_DAYS: billingEnv.SUBSCRIPTION_RENEWAL_NOTICE_DAYS,
});

export interface BillingSettings {
  intervalMs: number;
  renewalNoticeDays: number;
}

export function billingSettingsFrom(source: NodeJS.ProcessEnv): BillingSettings {
  const config = loadConfig(billingSettingsEnv, source);
  return { intervalMs: config.BILLING_INTERVAL_MS, renewalNoticeDays: config.SUBSCRIPTION_RENEWAL_NOTICE_DAYS };
}
