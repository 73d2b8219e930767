import { runServiceProcess } from '@billstream/runtime';
import { billingEnv } from './config';
import { createBillingService } from './service';
import { SCHEMA } from './migrations';

runServiceProcess({
  name: 'billing',
  schema: SCHEMA,
  defaultPort: 8085,
  env: billingEnv,
  create: (deps, config) =>
    createBillingService(deps, {
      internalToken: config.INTERNAL_TOKEN,
      customerServiceUrl: config.CUSTOMER_SERVICE_URL,
      ingestionServiceUrl: config.INGESTION_SERVICE_URL,
      settings: { intervalMs: config.BILLING_INTERVAL_MS, renewalNoticeDays: config.SUBSCRIPTION_RENEWAL_NOTICE_DAYS },
    }),
});
