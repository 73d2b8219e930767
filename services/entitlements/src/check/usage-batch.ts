import type { Scope } from '@billstream/contracts';
import { NotFoundError } from '@billstream/errors';
import type { Meters, UsageQuery } from '../upstreams/meters';

export type MeterQuery = UsageQuery & { meterId: string };

/** One usage the check asks for, with the request that asked. */
export interface AskedUsage {
  query: MeterQuery;
  requestId: string;
}

/**
 * The usage of each query, in their order, for `Coalescer` (ADR 0025): one query goes as the
 * single call; several go in one batch call to the aggregator. A batch the aggregator refuses
 * as a whole (a meter it does not know: 404) is asked again query by query, so that one query's
 * failure is its own; any other failure fails them all, as the single calls would have.
 */
export async function usageInBatch(meters: Meters, scope: Scope, asked: AskedUsage[]): Promise<Array<string | Promise<string>>> {
  const single = ({ query, requestId }: AskedUsage) => meters.usage(scope, query.meterId, query, requestId);
  if (asked.length === 1) return [await single(asked[0])];
  try {
    return await meters.usageMany(
      scope,
      asked.map((a) => a.query),
      asked[0].requestId,
    );
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    return asked.map(single);
  }
}
