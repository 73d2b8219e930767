import type { Knex, Trx } from '@billstream/db';

/**
 * Runs independent writes as one statement (data-modifying CTEs), so that saving a change
 * costs one round trip to the database, not one per table. The writes must not touch the
 * same rows: they all see the snapshot taken before the statement.
 */
export async function runTogether(trx: Trx, writes: Array<Knex.QueryBuilder | Knex.Raw>): Promise<void> {
  if (writes.length === 0) return;
  if (writes.length === 1) {
    await writes[0];
    return;
  }
  const parts = writes.map((w) => w.toSQL());
  const head = parts.slice(0, -1).map((p, i) => `w${i} AS (${p.sql})`);
  const last = parts[parts.length - 1];
  await trx.raw(`WITH ${head.join(', ')} ${last.sql}`, parts.flatMap((p) => [...p.bindings]));
}
