import { runServiceProcess } from '@billstream/runtime';
import { ingestionEnv, ingestionSettings } from './config';
import { createIngestionService } from './service';
import { SCHEMA } from './migrations';

runServiceProcess({
  name: 'ingestion-aggregator',
  schema: SCHEMA,
  defaultPort: 8083,
  env: ingestionEnv,
  create: (deps, config) => createIngestionService(deps, { internalToken: config.INTERNAL_TOKEN, ...ingestionSettings(config) }),
});
