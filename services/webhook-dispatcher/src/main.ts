import { runServiceProcess } from '@billstream/runtime';
import { webhookEnv, webhookSettings } from './config';
import { createWebhookService } from './service';
import { SCHEMA } from './migrations';

runServiceProcess({
  name: 'webhook-dispatcher',
  schema: SCHEMA,
  defaultPort: 8084,
  env: webhookEnv,
  create: (deps, config) => createWebhookService(deps, { internalToken: config.INTERNAL_TOKEN, ...webhookSettings(config) }),
});
