import type { Db } from '@billstream/db';
import { addWebhookOldestPendingSource, addWebhookPendingSource } from '@billstream/observability';

/**
 * The webhook gauges read at each scrape (ADR 0020): delivery tasks still pending (due or
 * waiting for a retry) and the age of the oldest. Returns the function that removes them.
 */
export function registerPendingGauges(db: Db): () => void {
  const read = async () => {
    const row = (await db('tasks')
      .where('status', 'pending')
      .first(db.raw('count(*)::int AS n'), db.raw('min(created_at) AS oldest'))) as { n: number | string; oldest: Date | string | null } | undefined;
    const oldest = row?.oldest ? new Date(row.oldest).getTime() : undefined;
    return { count: Number(row?.n ?? 0), age: oldest === undefined ? 0 : Math.max(0, (Date.now() - oldest) / 1000) };
  };
  const removeCount = addWebhookPendingSource(async () => [{ labels: {}, value: (await read()).count }]);
  const removeAge = addWebhookOldestPendingSource(async () => [{ labels: {}, value: (await read()).age }]);
  return () => {
    removeCount();
    removeAge();
  };
}
