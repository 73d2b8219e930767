import { env } from '@billstream/config';
import { runServiceProcess } from '@billstream/runtime';
import { createIngestionService } from './service';
import { SCHEMA } from './migrations';

runServiceProcess({
  name: 'ingestion-aggregator',
  schema: SCHEMA,
  defaultPort: 8083,
  env: { INGESTION_STORE_PARALLELISM: env.int(2, 1) },
  create: (deps, config) =>
    createIngestionService(deps, {
      internalToken: config.INTERNAL_TOKEN,
      storeParallelism: config.INGESTION_STORE_PARALLELISM,
    }),
});
