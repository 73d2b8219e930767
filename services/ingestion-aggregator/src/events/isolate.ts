import type { RecordError } from './record-errors';

export interface Isolated<T, R> {
  /** Results of the parts stored, in order. */
  results: R[];
  /** The items that fail alone, each with its error. */
  failed: Array<{ item: T; error: RecordError }>;
}

/**
 * Stores `items` with `attempt`; when an attempt fails with an error `recordErrorOf` ties to a
 * record, the items are halved and each half attempted in order, until every failing record is
 * alone. A batch with k bad records of n costs about 2k·log2(n) extra attempts; one without
 * costs one. Any other error is rethrown: the caller retries the whole batch (already stored
 * halves are then deduplicated, as any redelivery).
 */
export async function storeIsolating<T, R>(
  items: T[],
  attempt: (items: T[]) => Promise<R>,
  recordErrorOf: (err: unknown) => RecordError | undefined,
): Promise<Isolated<T, R>> {
  const out: Isolated<T, R> = { results: [], failed: [] };
  const run = async (part: T[]): Promise<void> => {
    if (part.length === 0) return;
    try {
      out.results.push(await attempt(part));
    } catch (err) {
      const error = recordErrorOf(err);
      if (!error) throw err;
      if (part.length === 1) {
        out.failed.push({ item: part[0], error });
        return;
      }
      const middle = Math.ceil(part.length / 2);
      await run(part.slice(0, middle));
      await run(part.slice(middle));
    }
  };
  await run(items);
  return out;
}
