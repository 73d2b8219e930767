import type { Migration } from '@billstream/db';

export const metersMigration: Migration = {
  name: '003_meters',
  async up(db) {
    await db.raw(`
      CREATE TABLE meters (
        id text PRIMARY KEY,
        tenant_id text NOT NULL,
        environment_id text NOT NULL,
        name text NOT NULL,
        event_name text NOT NULL,
        aggregation_type text NOT NULL,
        aggregation_field text,
        filters jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await db.raw('CREATE INDEX meters_scope_created ON meters (tenant_id, environment_id, created_at, id)');
  },
  async down(db) {
    await db.raw('DROP TABLE meters');
  },
};
