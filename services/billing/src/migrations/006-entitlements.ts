import type { Migration } from '@billstream/db';

/**
 * Features and the entitlements that grant them on plans
 * (docs/api/entitlements.md). A feature's lookup_key is unique per tenant+environment, archived ones
 * included (a check names a feature by it); one entitlement per plan and feature. An
 * entitlement keeps its feature's type (fixed at creation) so its grant fields are checked
 * without a join.
 */
export function entitlementsMigration(schema: string): Migration {
  return {
    name: '006_entitlements',
    async up(db) {
      await db.schema.withSchema(schema).createTable('features', (t) => {
        t.text('id').primary();
        t.text('tenant_id').notNullable();
        t.text('environment_id').notNullable();
        t.text('name').notNullable();
        t.text('lookup_key').notNullable();
        t.text('type').notNullable();
        t.text('meter_id');
        t.text('description');
        t.jsonb('metadata').notNullable().defaultTo('{}');
        t.text('status').notNullable();
        t.timestamp('created_at', { useTz: true }).notNullable();
        t.timestamp('updated_at', { useTz: true }).notNullable();
        t.unique(['tenant_id', 'environment_id', 'lookup_key'], { indexName: 'features_lookup_key_unique' });
        t.index(['tenant_id', 'environment_id', 'created_at', 'id'], 'features_created');
      });
      await db.raw(
        `ALTER TABLE ??.features ADD CONSTRAINT features_type_check CHECK (type IN ('BOOLEAN', 'METERED', 'STATIC') AND (type = 'METERED') = (meter_id IS NOT NULL)),
         ADD CONSTRAINT features_status_check CHECK (status IN ('active', 'archived'))`,
        [schema],
      );
      await db.schema.withSchema(schema).createTable('entitlements', (t) => {
        t.text('id').primary();
        t.text('tenant_id').notNullable();
        t.text('environment_id').notNullable();
        t.text('plan_id').notNullable().references('id').inTable(`${schema}.plans`);
        t.text('feature_id').notNullable().references('id').inTable(`${schema}.features`);
        t.text('feature_type').notNullable();
        t.boolean('is_enabled').notNullable();
        t.specificType('usage_limit', 'numeric');
        t.text('usage_reset_period');
        t.boolean('is_soft_limit').notNullable();
        t.text('static_value');
        t.timestamp('created_at', { useTz: true }).notNullable();
        t.timestamp('updated_at', { useTz: true }).notNullable();
        t.unique(['plan_id', 'feature_id'], { indexName: 'entitlements_plan_feature_unique' });
        t.index(['tenant_id', 'environment_id', 'created_at', 'id'], 'entitlements_created');
        t.index(['feature_id'], 'entitlements_feature');
      });
      await db.raw(
        `ALTER TABLE ??.entitlements ADD CONSTRAINT entitlements_grant_check CHECK (
           (feature_type = 'METERED') = (usage_reset_period IS NOT NULL)
           AND (feature_type = 'STATIC') = (static_value IS NOT NULL)
           AND (feature_type = 'METERED' OR usage_limit IS NULL)
           AND (usage_limit IS NULL OR usage_limit >= 0))`,
        [schema],
      );
    },
    async down(db) {
      await db.schema.withSchema(schema).dropTable('entitlements');
      await db.schema.withSchema(schema).dropTable('features');
    },
  };
}
