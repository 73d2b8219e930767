import type { Migration } from '@billstream/db';

/**
 * `event_dead_letters`: usage-events records that can never be stored (docs/ingestion-storage.md,
 * "Dead letters"). The Kafka key and value are kept as bytes, so a record holding NUL or a lone
 * surrogate is kept exactly; tenant, environment and event id only when they are storable text.
 * A record is kept once: by its Kafka position (topic, partition, offset, value digest: the
 * in-process bus restarts its offsets at 0) and, when it has one, by its event id, as events are.
 */
export const deadLettersMigration: Migration = {
  name: '004_event_dead_letters',
  async up(db) {
    await db.raw(`
      CREATE TABLE event_dead_letters (
        topic text NOT NULL,
        kafka_partition integer NOT NULL,
        kafka_offset bigint NOT NULL,
        value_sha256 bytea NOT NULL,
        kafka_key bytea NOT NULL,
        kafka_value bytea NOT NULL,
        tenant_id text,
        environment_id text,
        event_id text,
        error_code text NOT NULL,
        error_message text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (topic, kafka_partition, kafka_offset, value_sha256)
      )`);
    await db.raw(
      'CREATE UNIQUE INDEX event_dead_letters_event ON event_dead_letters (tenant_id, environment_id, event_id) WHERE event_id IS NOT NULL',
    );
    await db.raw('CREATE INDEX event_dead_letters_scope_time ON event_dead_letters (tenant_id, environment_id, created_at)');
  },
  async down(db) {
    await db.raw('DROP TABLE event_dead_letters');
  },
};
