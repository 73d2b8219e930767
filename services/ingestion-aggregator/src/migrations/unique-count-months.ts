import type { Migration } from '@billstream/db';

/**
 * UNIQUE_COUNT rollups as one row per (series, customer, UTC month, value digest) holding a
 * bitmap of the month's hours in which the value occurs (docs/adr/0023-usage-rollups.md), expand
 * only: the table is added, `usage_rollup_values` is kept (no longer written nor read; a later
 * contract migration drops it). The UNIQUE_COUNT meters existing now are marked not built, so
 * usage reads their events until `RollupBuilder` (on start) has filled the new table from them.
 */
export const uniqueCountMonthsMigration: Migration = {
  name: '006_unique_count_months',
  async up(db) {
    await db.raw(`
      CREATE TABLE usage_rollup_value_months (
        tenant_id text NOT NULL,
        environment_id text NOT NULL,
        series text NOT NULL,
        external_customer_id text NOT NULL,
        month timestamptz NOT NULL,
        value_sha256 bytea NOT NULL,
        hours bit(744) NOT NULL,
        PRIMARY KEY (series, external_customer_id, month, value_sha256)
      )`);
    await db.raw("UPDATE meters SET rollup_ready_at = NULL WHERE aggregation_type = 'UNIQUE_COUNT'");
  },
  async down(db) {
    // The previous code reads usage_rollup_values, not written since: its builder rebuilds them.
    await db.raw("UPDATE meters SET rollup_ready_at = NULL WHERE aggregation_type = 'UNIQUE_COUNT'");
    await db.raw('DROP TABLE usage_rollup_value_months');
  },
};
