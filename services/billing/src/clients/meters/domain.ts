import type { Scope } from '@billstream/contracts';

export interface UsageQuery {
  externalCustomerId: string;
  /** Inclusive. */
  from: Date;
  /** Exclusive. */
  to: Date;
  filterValues: Record<string, string[]> | null;
}

/** What billing needs of the ingestion-aggregator's meters, asked over HTTP (it owns them). */
export interface Meters {
  /** Whether the meter exists in the tenant and environment. */
  exists(scope: Scope, meterId: string, requestId: string): Promise<boolean>;
  /** The meter's aggregation type (COUNT, SUM, MAX, UNIQUE_COUNT, LATEST); undefined when it does not exist. */
  aggregation(scope: Scope, meterId: string, requestId: string): Promise<string | undefined>;
  /** The meter's aggregated value (a decimal string) for one customer over [from, to). */
  usage(scope: Scope, meterId: string, query: UsageQuery, requestId: string): Promise<string>;
  /**
   * The values of many queries of one tenant and environment, in their order, each what `usage`
   * answers for it (the period job prices a batch of subscriptions with one call).
   */
  usageMany(scope: Scope, queries: Array<UsageQuery & { meterId: string }>, requestId: string): Promise<string[]>;
}
