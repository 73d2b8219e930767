import type { Migration } from '@billstream/db';
import { outboxMigration } from '@billstream/outbox';

export const SCHEMA = 'gateway';

export const migrations: Migration[] = [
  outboxMigration(SCHEMA),
  {
    name: '001_api_keys',
    async up(db) {
      await db.schema.withSchema(SCHEMA).createTable('api_keys', (t) => {
        t.text('id').primary();
        t.text('tenant_id').notNullable();
        t.text('environment_id').notNullable();
        t.text('name').notNullable();
        t.text('key_hash').notNullable().unique();
        t.text('key_prefix').notNullable();
        t.jsonb('permissions').notNullable();
        t.text('created_by').notNullable();
        t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp('revoked_at', { useTz: true });
        t.index(['tenant_id', 'created_at', 'id']);
      });
    },
  },
];
