import { runServiceProcess } from '@billstream/runtime';
import { walletEnv, walletSettings } from './config';
import { createWalletService } from './service';
import { SCHEMA } from './migrations';

runServiceProcess({
  name: 'wallet',
  schema: SCHEMA,
  defaultPort: 8082,
  env: walletEnv,
  create: (deps, config) =>
    createWalletService(deps, {
      internalToken: config.INTERNAL_TOKEN,
      customerServiceUrl: config.CUSTOMER_SERVICE_URL,
      entitlementsServiceUrl: config.ENTITLEMENTS_SERVICE_URL,
      ingestionServiceUrl: config.INGESTION_SERVICE_URL,
      ...walletSettings(config),
    }),
});
