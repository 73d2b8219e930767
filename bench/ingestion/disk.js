/** Bytes on disk of the ingestion schema, by what it holds (shared by ingest.js and scale.js). */

/** Tables with their indexes and TOAST, grouped: events, dedup keys, rollups, counters, other. */
async function diskBytes(pg) {
  const { rows } = await pg.query(`
    SELECT CASE
        WHEN c.relname LIKE 'events%' THEN 'events'
        WHEN c.relname LIKE 'event_keys%' THEN 'dedup_keys'
        WHEN c.relname LIKE 'usage_rollup%' OR c.relname LIKE 'unique_count%' THEN 'rollups'
        WHEN c.relname IN ('event_stats', 'event_hours') THEN 'counters'
        ELSE 'other' END AS part,
      sum(pg_total_relation_size(c.oid))::bigint AS bytes
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'ingestion' AND c.relkind = 'r' GROUP BY 1 ORDER BY 1`);
  return Object.fromEntries(rows.map((r) => [r.part, Number(r.bytes)]));
}

/**
 * The events' and dedup keys' heaps and each index summed over its partitions (an index of a
 * partition is attached to its parent's index: `events_y2026m11_tenant_id_...` under `events_scope_time`), so
 * the bytes of every structure that grows with the events show apart.
 */
async function structureBytes(pg) {
  const { rows } = await pg.query(`
    SELECT coalesce(parent.relname, c.relname) AS name, c.relkind AS kind,
      sum(CASE WHEN c.relkind = 'r' THEN pg_table_size(c.oid) ELSE pg_relation_size(c.oid) END)::bigint AS bytes
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
    LEFT JOIN pg_class parent ON parent.oid = i.inhparent
    WHERE n.nspname = 'ingestion' AND c.relkind IN ('r', 'i')
    GROUP BY 1, 2 ORDER BY 3 DESC`);
  return rows.filter((r) => Number(r.bytes) > 0).map((r) => ({ name: r.name, kind: r.kind === 'r' ? 'table' : 'index', bytes: Number(r.bytes) }));
}

module.exports = { diskBytes, structureBytes };
