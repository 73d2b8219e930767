import { runServiceProcess } from '@billstream/runtime';
import { gatewayEnv, gatewayServiceUrls, gatewaySettings } from './config';
import { createGateway } from './gateway';
import { SCHEMA } from './migrations';

runServiceProcess({
  name: 'gateway',
  schema: SCHEMA,
  defaultPort: 8080,
  env: gatewayEnv,
  create: (deps, config) =>
    createGateway(deps, { internalToken: config.INTERNAL_TOKEN, serviceUrls: gatewayServiceUrls(config), ...gatewaySettings(config) }),
});
