import type { Trx } from '@billstream/db';

/**
 * Updates many rows of `table` in one statement: each record is `{ id, ...columns }`, read as a
 * row of the table itself (`jsonb_populate_recordset`, so every value takes its column's type;
 * a jsonb column's value is given as JSON, not as a string of it), `set` adds assignments of
 * every row (`version = t.version + 1`, say; `t` is the table). Answers the updated rows.
 */
export async function updateMany<Row extends { id: string }>(trx: Trx, table: string, records: Array<Record<string, unknown> & { id: string }>, set: string[] = []): Promise<Row[]> {
  if (records.length === 0) return [];
  const columns = Object.keys(records[0]!).filter((c) => c !== 'id');
  const assignments = [...columns.map((c) => `"${c}" = r."${c}"`), ...set].join(', ');
  const result = await trx.raw<{ rows: Row[] }>(`UPDATE ?? t SET ${assignments} FROM jsonb_populate_recordset(NULL::??, ?::jsonb) r WHERE t.id = r.id RETURNING t.*`, [
    table,
    table,
    JSON.stringify(records),
  ]);
  return result.rows;
}
