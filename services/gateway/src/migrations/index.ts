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
  {
    // Customer portal sessions (ADR 0069): a credential like an API key, stored as its SHA-256 only.
    name: '002_portal_sessions',
    async up(db) {
      await db.schema.withSchema(SCHEMA).createTable('portal_sessions', (t) => {
        t.text('id').primary();
        t.text('tenant_id').notNullable();
        t.text('environment_id').notNullable();
        t.text('customer_id').notNullable();
        t.text('token_hash').notNullable().unique();
        t.text('return_url');
        t.text('created_by').notNullable();
        t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp('expires_at', { useTz: true }).notNullable();
        t.timestamp('revoked_at', { useTz: true });
        t.index(['tenant_id', 'environment_id', 'customer_id']);
      });
    },
  },
  {
    // The origins that may frame a session's portal page (ADR 0069 item 6): the tenant's billing
    // setting `portal.frame_ancestors` as it was when the session was opened; none for older rows.
    name: '003_portal_session_frame_ancestors',
    async up(db) {
      await db.schema.withSchema(SCHEMA).alterTable('portal_sessions', (t) => {
        t.jsonb('frame_ancestors').notNullable().defaultTo(db.raw("'[]'::jsonb"));
      });
    },
  },
];
