import { runServiceProcess } from '@billstream/runtime';
import { entitlementsEnv, entitlementsSettings } from './config';
import { createEntitlementsService } from './service';
import { SCHEMA } from './migrations';

runServiceProcess({
  name: 'entitlements',
  schema: SCHEMA,
  defaultPort: 8086,
  env: entitlementsEnv,
  create: (deps, config) =>
    createEntitlementsService(deps, {
      internalToken: config.INTERNAL_TOKEN,
      customerServiceUrl: config.CUSTOMER_SERVICE_URL,
      ingestionServiceUrl: config.INGESTION_SERVICE_URL,
      billingServiceUrl: config.BILLING_SERVICE_URL,
      walletServiceUrl: config.WALLET_SERVICE_URL,
      settings: entitlementsSettings(config),
    }),
});
