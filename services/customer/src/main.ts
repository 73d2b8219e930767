import { runServiceProcess } from '@billstream/runtime';
import { customerEnv } from './config';
import { createCustomerService } from './service';
import { SCHEMA } from './migrations';

runServiceProcess({
  name: 'customer',
  schema: SCHEMA,
  defaultPort: 8081,
  env: customerEnv,
  create: (deps, config) =>
    createCustomerService(deps, {
      internalToken: config.INTERNAL_TOKEN,
      billingServiceUrl: config.BILLING_SERVICE_URL ? () => config.BILLING_SERVICE_URL : undefined,
    }),
});
