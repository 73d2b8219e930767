import type { Migration } from '@billstream/db';

/** Hash partitions of the dedup table (each keeps its own, smaller primary-key index). */
export const EVENT_KEY_PARTITIONS = 8;

/**
 * Usage event storage (docs/ingestion-storage.md):
 * - `event_keys`: one row per (tenant, environment, event_id), the dedup record, hash-partitioned;
 * - `events`: the stored events, range-partitioned by month of `timestamp` (partitions are
 *   created ahead and on demand by the partition manager; `events_default` is the safety net);
 * - `customers`: projection of customer-events (external id -> customer id);
 * - `event_stats`: stored event count and last event time per tenant and environment.
 */
export const eventsMigration: Migration = {
  name: '002_usage_events',
  async up(db) {
    await db.raw(`
      CREATE TABLE event_keys (
        tenant_id text NOT NULL,
        environment_id text NOT NULL,
        event_id text NOT NULL,
        timestamp timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, environment_id, event_id)
      ) PARTITION BY HASH (tenant_id, environment_id, event_id)`);
    for (let i = 0; i < EVENT_KEY_PARTITIONS; i += 1) {
      await db.raw(
        `CREATE TABLE event_keys_h${i} PARTITION OF event_keys FOR VALUES WITH (MODULUS ${EVENT_KEY_PARTITIONS}, REMAINDER ${i})`,
      );
    }
    await db.raw(`
      CREATE TABLE events (
        tenant_id text NOT NULL,
        environment_id text NOT NULL,
        event_id text NOT NULL,
        event_name text NOT NULL,
        external_customer_id text NOT NULL,
        customer_id text,
        timestamp timestamptz NOT NULL,
        properties jsonb NOT NULL,
        source text,
        received_at timestamptz NOT NULL,
        stored_at timestamptz NOT NULL DEFAULT now()
      ) PARTITION BY RANGE (timestamp)`);
    await db.raw('CREATE INDEX events_scope_time ON events (tenant_id, environment_id, timestamp DESC, event_id DESC)');
    await db.raw(
      'CREATE INDEX events_customer_name_time ON events (tenant_id, environment_id, external_customer_id, event_name, timestamp DESC)',
    );
    await db.raw(
      'CREATE INDEX events_unresolved ON events (tenant_id, environment_id, external_customer_id) WHERE customer_id IS NULL',
    );
    await db.raw('CREATE TABLE events_default PARTITION OF events DEFAULT');
    await db.raw(`
      CREATE TABLE customers (
        tenant_id text NOT NULL,
        environment_id text NOT NULL,
        customer_id text NOT NULL,
        external_id text NOT NULL,
        deleted_at timestamptz,
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, environment_id, customer_id)
      )`);
    await db.raw(
      'CREATE INDEX customers_external ON customers (tenant_id, environment_id, external_id, updated_at DESC) WHERE deleted_at IS NULL',
    );
    await db.raw(`
      CREATE TABLE event_stats (
        tenant_id text NOT NULL,
        environment_id text NOT NULL,
        total_events bigint NOT NULL,
        last_event_at timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, environment_id)
      )`);
  },
  async down(db) {
    await db.raw('DROP TABLE event_stats, customers, events, event_keys');
  },
};
