import type { Migration } from '@billstream/db';

/**
 * endpoints: where to send; messages: each envelope, built once, its exact bytes kept;
 * tasks: one per (endpoint, event) still to deliver, with the time of its next attempt;
 * deliveries: one record per attempt. No foreign keys on the hot tables (tasks, deliveries):
 * the consumer and the worker write thousands of rows a second, and an endpoint's delete
 * removes its tasks and deliveries itself, in its transaction.
 */
export function webhooksMigration(schema: string): Migration {
  return {
    name: '001_webhooks',
    async up(db) {
      await db.schema.withSchema(schema).createTable('endpoints', (t) => {
        t.text('id').primary();
        t.text('tenant_id').notNullable();
        t.text('environment_id').notNullable();
        t.text('url').notNullable();
        t.jsonb('events').notNullable();
        t.boolean('enabled').notNullable();
        t.text('description');
        t.text('secret').notNullable();
        t.integer('version').notNullable().defaultTo(1);
        t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.index(['tenant_id', 'environment_id', 'created_at', 'id']);
      });
      await db.schema.withSchema(schema).createTable('messages', (t) => {
        t.text('id').primary();
        t.text('tenant_id').notNullable();
        t.text('environment_id').notNullable();
        t.text('event_name').notNullable();
        t.text('body').notNullable();
        t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
      });
      await db.schema.withSchema(schema).createTable('tasks', (t) => {
        t.text('endpoint_id').notNullable();
        t.text('event_id').notNullable();
        t.text('status').notNullable();
        t.integer('attempts').notNullable().defaultTo(0);
        t.timestamp('next_attempt_at', { useTz: true }).notNullable();
        t.text('claim_id');
        t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.primary(['endpoint_id', 'event_id']);
      });
      await db.raw(
        "CREATE INDEX tasks_due ON ??.tasks (endpoint_id, next_attempt_at) WHERE status = 'pending'",
        [schema],
      );
      await db.schema.withSchema(schema).createTable('deliveries', (t) => {
        t.text('id').primary();
        t.text('endpoint_id').notNullable();
        t.text('event_id').notNullable();
        t.text('event_name').notNullable();
        t.integer('attempt').notNullable();
        t.text('status').notNullable();
        t.integer('response_code');
        t.text('error');
        t.integer('duration_ms').notNullable();
        t.timestamp('attempted_at', { useTz: true }).notNullable();
        t.timestamp('retry_at', { useTz: true });
        t.index(['endpoint_id', 'attempted_at', 'id']);
      });
    },
    async down(db) {
      await db.schema.withSchema(schema).dropTable('deliveries');
      await db.schema.withSchema(schema).dropTable('tasks');
      await db.schema.withSchema(schema).dropTable('messages');
      await db.schema.withSchema(schema).dropTable('endpoints');
    },
  };
}
