import { runServiceProcess } from '@billstream/runtime';
import { createWalletService } from './service';
import { SCHEMA } from './migrations';

runServiceProcess({
  name: 'wallet',
  schema: SCHEMA,
  defaultPort: 8082,
  env: {},
  create: (deps, config) => createWalletService(deps, { internalToken: config.INTERNAL_TOKEN }),
});
