import type { Knex, Migration } from '@billstream/db';

const timestamps = (t: Knex.CreateTableBuilder) => {
  t.timestamp('created_at', { useTz: true }).notNullable();
  t.timestamp('updated_at', { useTz: true }).notNullable();
};

/**
 * Plans, prices, subscriptions (with the prices each bills, fixed at its creation), the
 * customer projection and the renewal notices (one per subscription and period end: the
 * unique key that sends subscription.renewal.due once). Prices are immutable once written: a
 * trigger refuses any update but archiving, so no code path can change what a running
 * subscription bills.
 */
export function billingMigration(schema: string): Migration {
  return {
    name: '001_billing',
    async up(db) {
      await db.schema.withSchema(schema).createTable('customers', (t) => {
        t.text('id').primary();
        t.text('tenant_id').notNullable();
        t.text('environment_id').notNullable();
        t.text('external_id').notNullable();
        t.timestamp('deleted_at', { useTz: true });
        t.timestamp('updated_at', { useTz: true }).notNullable();
        t.index(['tenant_id', 'environment_id', 'external_id'], 'customers_external_id');
      });
      await db.schema.withSchema(schema).createTable('plans', (t) => {
        t.text('id').primary();
        t.text('tenant_id').notNullable();
        t.text('environment_id').notNullable();
        t.text('name').notNullable();
        t.text('lookup_key');
        t.text('description');
        t.jsonb('metadata').notNullable().defaultTo('{}');
        t.text('status').notNullable();
        timestamps(t);
        t.unique(['tenant_id', 'environment_id', 'lookup_key'], { indexName: 'plans_lookup_key_unique' });
        t.index(['tenant_id', 'environment_id', 'created_at', 'id'], 'plans_created');
      });
      await db.raw(`ALTER TABLE ??.plans ADD CONSTRAINT plans_status_check CHECK (status IN ('active', 'archived'))`, [schema]);
      await db.schema.withSchema(schema).createTable('prices', (t) => {
        t.text('id').primary();
        t.text('tenant_id').notNullable();
        t.text('environment_id').notNullable();
        t.text('plan_id').notNullable().references('id').inTable(`${schema}.plans`);
        t.text('type').notNullable();
        t.text('currency').notNullable();
        t.specificType('amount', 'numeric');
        t.text('billing_model').notNullable();
        t.text('billing_period').notNullable();
        t.integer('billing_period_count').notNullable();
        t.text('invoice_cadence').notNullable();
        t.text('meter_id');
        t.jsonb('filter_values');
        t.jsonb('package');
        t.text('tier_mode');
        t.jsonb('tiers');
        t.text('display_name');
        t.text('status').notNullable();
        timestamps(t);
        t.index(['plan_id', 'created_at', 'id'], 'prices_plan');
      });
      await db.raw(`ALTER TABLE ??.prices ADD CONSTRAINT prices_status_check CHECK (status IN ('active', 'archived'))`, [schema]);
      await db.raw(
        `CREATE FUNCTION ??.prices_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           IF (to_jsonb(NEW) - 'status' - 'updated_at') IS DISTINCT FROM (to_jsonb(OLD) - 'status' - 'updated_at') THEN
             RAISE EXCEPTION 'prices are immutable: a change is a new price' USING ERRCODE = 'check_violation';
           END IF;
           RETURN NEW;
         END $$`,
        [schema],
      );
      await db.raw(`CREATE TRIGGER prices_immutable BEFORE UPDATE ON ??.prices FOR EACH ROW EXECUTE FUNCTION ??.prices_immutable()`, [
        schema,
        schema,
      ]);
      await db.schema.withSchema(schema).createTable('subscriptions', (t) => {
        t.text('id').primary();
        t.text('tenant_id').notNullable();
        t.text('environment_id').notNullable();
        t.text('customer_id').notNullable();
        t.text('plan_id').notNullable().references('id').inTable(`${schema}.plans`);
        t.text('currency').notNullable();
        t.text('billing_period').notNullable();
        t.integer('billing_period_count').notNullable();
        t.text('billing_cycle').notNullable();
        t.text('timezone').notNullable();
        t.text('status').notNullable();
        t.timestamp('start_date', { useTz: true });
        t.timestamp('billing_anchor', { useTz: true });
        t.timestamp('current_period_start', { useTz: true });
        t.timestamp('current_period_end', { useTz: true });
        t.integer('trial_period_days');
        t.timestamp('trial_end', { useTz: true });
        t.integer('payment_terms_days').notNullable();
        t.boolean('cancel_at_period_end').notNullable().defaultTo(false);
        t.timestamp('cancelled_at', { useTz: true });
        t.timestamp('paused_at', { useTz: true });
        t.jsonb('metadata').notNullable().defaultTo('{}');
        t.integer('version').notNullable().defaultTo(1);
        timestamps(t);
        t.index(['tenant_id', 'environment_id', 'created_at', 'id'], 'subscriptions_created');
        t.index(['tenant_id', 'environment_id', 'customer_id', 'created_at', 'id'], 'subscriptions_customer');
        t.index(['tenant_id', 'environment_id', 'plan_id', 'created_at', 'id'], 'subscriptions_plan');
      });
      await db.raw(
        `ALTER TABLE ??.subscriptions ADD CONSTRAINT subscriptions_status_check
           CHECK (status IN ('draft', 'trialing', 'active', 'paused', 'cancelled'))`,
        [schema],
      );
      await db.raw(
        `CREATE INDEX subscriptions_period_due ON ??.subscriptions (current_period_end, id) WHERE status IN ('trialing', 'active')`,
        [schema],
      );
      await db.schema.withSchema(schema).createTable('subscription_prices', (t) => {
        t.text('subscription_id').notNullable().references('id').inTable(`${schema}.subscriptions`);
        t.text('price_id').notNullable().references('id').inTable(`${schema}.prices`);
        t.primary(['subscription_id', 'price_id']);
      });
      await db.schema.withSchema(schema).createTable('renewal_notices', (t) => {
        t.text('subscription_id').notNullable().references('id').inTable(`${schema}.subscriptions`);
        t.timestamp('period_end', { useTz: true }).notNullable();
        t.text('event_id').notNullable();
        t.timestamp('created_at', { useTz: true }).notNullable();
        t.primary(['subscription_id', 'period_end']);
      });
    },
    async down(db) {
      for (const table of ['renewal_notices', 'subscription_prices', 'subscriptions', 'prices', 'plans', 'customers']) {
        await db.schema.withSchema(schema).dropTable(table);
      }
      await db.raw('DROP FUNCTION ??.prices_immutable()', [schema]);
    },
  };
}
