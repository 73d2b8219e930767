import { runServiceProcess } from '@billstream/runtime';
import { billingEnv, billingSettings } from './config';
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
      walletServiceUrl: config.WALLET_SERVICE_URL,
      settings: billingSettings(config),
    }),
});
