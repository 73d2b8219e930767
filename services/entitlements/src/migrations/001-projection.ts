import type { Migration } from '@billstream/db';

/**
 * The check's projection (ADR 0061): features, entitlements and subscriptions as billing-events
 * and billing's snapshot tell them, each row with the version it was told at (a row is
 * replaced only by a newer version, so redeliveries and the seed are harmless); entitlements
 * deleted in billing stay as tombstones at their deletion's version. Customers from
 * customer-events and lookups. `projection_seeds`: when the seed from billing ran.
 */
export function projectionMigration(schema: string): Migration {
  return {
    name: '001_projection',
    async up(db) {
      // A fresh builder per table: a knex schema builder keeps its statements.
      const s = () => db.schema.withSchema(schema);
      await s().createTable('features', (t) => {
        t.text('id').primary();
        t.text('tenant_id').notNullable();
        t.text('environment_id').notNullable();
        t.text('lookup_key').notNullable();
        t.text('type').notNullable();
        t.text('meter_id');
        t.text('status').notNullable();
        t.integer('version').notNullable();
        t.index(['tenant_id', 'environment_id', 'lookup_key']);
      });
      await s().createTable('entitlements', (t) => {
        t.text('id').primary();
        t.text('tenant_id').notNullable();
        t.text('environment_id').notNullable();
        t.text('plan_id').notNullable();
        t.text('feature_id').notNullable();
        t.boolean('is_enabled').notNullable();
        t.specificType('usage_limit', 'numeric');
        t.text('usage_reset_period');
        t.boolean('is_soft_limit').notNullable();
        t.text('static_value');
        t.boolean('deleted').notNullable().defaultTo(false);
        t.integer('version').notNullable();
        t.index(['tenant_id', 'environment_id', 'plan_id']);
      });
      await s().createTable('subscriptions', (t) => {
        t.text('id').primary();
        t.text('tenant_id').notNullable();
        t.text('environment_id').notNullable();
        t.text('customer_id').notNullable();
        t.text('plan_id').notNullable();
        t.text('status').notNullable();
        t.timestamp('start_date', { useTz: true });
        t.timestamp('current_period_start', { useTz: true });
        t.timestamp('current_period_end', { useTz: true });
        t.timestamp('created_at', { useTz: true }).notNullable();
        t.integer('version').notNullable();
        t.index(['tenant_id', 'environment_id', 'customer_id']);
      });
      await s().createTable('customers', (t) => {
        t.text('id').primary();
        t.text('tenant_id').notNullable();
        t.text('environment_id').notNullable();
        t.text('external_id').notNullable();
        t.timestamp('deleted_at', { useTz: true });
        t.timestamp('updated_at', { useTz: true }).notNullable();
        t.index(['tenant_id', 'environment_id', 'external_id']);
      });
      await s().createTable('projection_seeds', (t) => {
        t.text('source').primary();
        t.timestamp('seeded_at', { useTz: true }).notNullable();
        t.integer('rows').notNullable();
      });
    },
    async down(db) {
      for (const table of ['projection_seeds', 'customers', 'subscriptions', 'entitlements', 'features']) await db.schema.withSchema(schema).dropTable(table);
    },
  };
}
