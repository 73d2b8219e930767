import { runServiceProcess } from '@billstream/runtime';
import { debitConcurrencyOf, walletEnv } from './config';
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
      expiryIntervalMs: config.WALLET_EXPIRY_INTERVAL_MS,
      debitConcurrency: debitConcurrencyOf(config),
      debitOverlapMs: config.WALLET_DEBIT_OVERLAP_MS,
    }),
});
