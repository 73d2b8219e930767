import { z } from 'zod';
import { env, loadConfig } from '@billstream/config';

/** Variables of the ingestion-aggregator beyond the common ones. */
export const ingestionEnv = {
  /** Concurrent store transactions per consumed batch of usage events. */
  INGESTION_STORE_PARALLELISM: env.int(2, 1),
};

export interface IngestionSettings {
  /** Parallel transactions per consumed batch (INGESTION_STORE_PARALLELISM). */
  storeParallelism: number;
}

/** The one mapping of the variables to the service's settings, for its own process and the embedded default. */
export function ingestionSettings(config: z.output<z.ZodObject<typeof ingestionEnv>>): IngestionSettings {
  return { storeParallelism: config.INGESTION_STORE_PARALLELISM };
}

/** Parses the ingestion-aggregator's settings of an environment (a bad value throws, naming the variable). */
export function ingestionSettingsFrom(source: NodeJS.ProcessEnv): IngestionSettings {
  return ingestionSettings(loadConfig(z.object(ingestionEnv), source));
}
