import { runServiceProcess } from '@billstream/runtime';
import { createIngestionService } from './service';
import { SCHEMA } from './migrations';

runServiceProcess({
  name: 'ingestion-aggregator',
  schema: SCHEMA,
  defaultPort: 8083,
  env: {},
  create: (deps, config) => createIngestionService(deps, { internalToken: config.INTERNAL_TOKEN }),
});
