import type { Migration } from '@billstream/db';
import { ROLLUP_SERIES } from '../meters/rollup-sql';

/**
 * Usage rollups (docs/adr/0023-usage-rollups.md), expand only:
 * - `meters.rollup_ready_at`: when the meter's rollup was built from the events stored before it
 *   (NULL: not yet, usage reads the events);
 * - `meters.rollup_series`: digest of what a rollup row depends on (scope, event name, field,
 *   filters): meters that differ only by aggregation (SUM, MAX, LATEST of one property) share
 *   their rows, written once per stored event;
 * - `usage_rollups`: per series, customer and UTC hour, the COUNT, SUM, MAX and LATEST partials
 *   of the events the series' meters count;
 * - `usage_rollup_values`: per series of UNIQUE_COUNT meters, customer and UTC hour or day
 *   (`span`), the SHA-256 of each distinct value of the aggregated property.
 * Keys start with the series (its tenant and environment are kept on each row, not in the key: a
 * narrower key is cheaper to probe for every stored event).
 */
export const usageRollupsMigration: Migration = {
  name: '005_usage_rollups',
  async up(db) {
    await db.raw('ALTER TABLE meters ADD COLUMN rollup_ready_at timestamptz');
    await db.raw('ALTER TABLE meters ADD COLUMN rollup_series text');
    await db.raw(`UPDATE meters SET rollup_series = ${ROLLUP_SERIES}`);
    await db.raw('ALTER TABLE meters ALTER COLUMN rollup_series SET NOT NULL');
    await db.raw('CREATE INDEX meters_scope_event ON meters (tenant_id, environment_id, event_name)');
    await db.raw(`
      CREATE TABLE usage_rollups (
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
      CREATE TABLE usage_rollup_values (
        tenant_id text NOT NULL,
        environment_id text NOT NULL,
        series text NOT NULL,
        external_customer_id text NOT NULL,
        span text NOT NULL CHECK (span IN ('hour', 'day')),
        bucket timestamptz NOT NULL,
        value_sha256 bytea NOT NULL,
        PRIMARY KEY (series, external_customer_id, span, bucket, value_sha256)
      )`);
  },
  async down(db) {
    await db.raw('DROP TABLE usage_rollup_values, usage_rollups');
    await db.raw('DROP INDEX meters_scope_event');
    await db.raw('ALTER TABLE meters DROP COLUMN rollup_ready_at, DROP COLUMN rollup_series');
  },
};
