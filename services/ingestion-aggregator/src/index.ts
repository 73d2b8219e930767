export { createIngestionService, type IngestionServiceConfig } from './service';
export { migrations, SCHEMA } from './migrations';
