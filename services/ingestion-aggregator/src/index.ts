export { createIngestionService, type IngestionServiceConfig } from './service';
export { ingestionEnv, ingestionSettings, ingestionSettingsFrom, type IngestionSettings } from './config';
export { migrations, SCHEMA } from './migrations';
export { EventPartitions } from './events/partitions';
export { EventStore } from './events/store';
export { MeterStore } from './meters/store';
export { RollupBuilder } from './meters/rollup-builder';
export { UsageStore } from './meters/usage-store';
export { RollupUsageStore } from './meters/rollup-usage-store';
