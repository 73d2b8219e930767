import type { Migration } from '@billstream/db';

/**
 * Minute rollups beside the hour rows (docs/adr/0023-usage-rollups.md, "Minute rows"), expand
 * only:
 * - `usage_rollup_minutes`: per series, customer and UTC minute, the COUNT, SUM, MAX and LATEST
 *   partials, as `usage_rollups` holds them per hour;
 * - `usage_rollup_value_hours`: per series of UNIQUE_COUNT meters, customer, UTC hour and value
 *   digest, the bitmap of the hour's minutes in which the value occurs.
 * A range's partial hours are then read from these rows and only its partial minutes from the
 * events. Every meter existing now is marked not built, so usage reads its events until
 * `RollupBuilder` (on start) has recounted its rows, the new ones included, from the events.
 */
export const minuteRollupsMigration: Migration = {
  name: '007_minute_rollups',
  async up(db) {
    await db.raw(`
      CREATE TABLE usage_rollup_minutes (
        tenant_id text NOT NULL,
        environment_id text NOT NULL,
        series text NOT NULL,
        external_customer_id text NOT NULL,
        bucket timestamptz NOT NULL,
        event_count bigint NOT NULL,
        value_sum numeric,
        value_max numeric,
        latest_value numeric,
        latest_at timestamptz,
        latest_event_id text,
        PRIMARY KEY (series, external_customer_id, bucket)
      )`);
    await db.raw(`
      CREATE TABLE usage_rollup_value_hours (
        tenant_id text NOT NULL,
        environment_id text NOT NULL,
        series text NOT NULL,
        external_customer_id text NOT NULL,
        hour timestamptz NOT NULL,
        value_sha256 bytea NOT NULL,
        minutes bit(60) NOT NULL,
        PRIMARY KEY (series, external_customer_id, hour, value_sha256)
      )`);
    await db.raw('UPDATE meters SET rollup_ready_at = NULL');
  },
  async down(db) {
    // The previous code reads the hour rows and month bitmaps, which the new code keeps writing.
    await db.raw('DROP TABLE usage_rollup_value_hours, usage_rollup_minutes');
  },
};
