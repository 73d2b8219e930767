import type { Migration } from '@billstream/db';

/** Tables every service with an outbox or idempotent consumers has, in its own schema. */
export function outboxMigration(schema: string): Migration {
  return {
    name: '000_outbox',
    async up(db) {
      await db.schema.withSchema(schema).createTable('outbox', (t) => {
        t.specificType('seq', 'bigint generated always as identity').primary();
        t.text('id').notNullable().unique();
        t.text('topic').notNullable();
        t.text('message_key').notNullable();
        t.text('value').notNullable();
        t.jsonb('headers').notNullable().defaultTo('{}');
        t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp('published_at', { useTz: true });
      });
      await db.raw('CREATE INDEX outbox_unpublished ON ??.outbox (seq) WHERE published_at IS NULL', [schema]);
      await db.schema.withSchema(schema).createTable('processed_messages', (t) => {
        t.text('consumer_group').notNullable();
        t.text('message_id').notNullable();
        t.timestamp('processed_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.primary(['consumer_group', 'message_id']);
      });
    },
    async down(db) {
      await db.schema.withSchema(schema).dropTable('processed_messages');
      await db.schema.withSchema(schema).dropTable('outbox');
    },
  };
}
