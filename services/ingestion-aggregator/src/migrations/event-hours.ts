import type { Migration } from '@billstream/db';

/**
 * `event_hours`: stored events per tenant, environment and UTC hour of receipt, grown by each
 * stored batch as `event_stats` is (one row per batch and scope, so ingestion does not slow),
 * and read by `GET /v1/reports/events_hourly` without counting the events table. Filled from the
 * events already stored.
 */
export const eventHoursMigration: Migration = {
  name: '008_event_hours',
  async up(db) {
    await db.raw(`
      CREATE TABLE event_hours (
        tenant_id text NOT NULL,
        environment_id text NOT NULL,
        hour timestamptz NOT NULL,
        events bigint NOT NULL,
        PRIMARY KEY (tenant_id, environment_id, hour)
      )`);
    await db.raw(`
      INSERT INTO event_hours (tenant_id, environment_id, hour, events)
      SELECT tenant_id, environment_id, date_trunc('hour', received_at, 'UTC'), count(*)
      FROM events GROUP BY 1, 2, 3`);
  },
  async down(db) {
    await db.raw('DROP TABLE event_hours');
  },
};
