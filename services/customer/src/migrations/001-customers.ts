import type { Knex, Migration } from '@billstream/db';

/**
 * Customers of every tenant and environment. Every list filter and sort field has an index
 * that starts with (tenant_id, environment_id) and ends with id, so that a page is an
 * ordered index range. `customer_counts` holds the number of customers per tenant,
 * environment and status, kept by statement triggers in the writing transaction, so the
 * `total` of an unfiltered or by-status list is a lookup, not a count over the tenant.
 */
export function customersMigration(schema: string): Migration {
  return {
    name: '001_customers',
    async up(db) {
      await db.schema.withSchema(schema).createTable('customers', (t) => {
        t.text('id').primary();
        t.text('tenant_id').notNullable();
        t.text('environment_id').notNullable();
        t.text('external_id').notNullable();
        t.text('name');
        t.text('email');
        t.text('address_line1');
        t.text('address_line2');
        t.text('address_city');
        t.text('address_state');
        t.text('address_postal_code');
        t.text('address_country');
        t.text('parent_customer_id').references('id').inTable(`${schema}.customers`).onDelete('RESTRICT');
        t.jsonb('metadata').notNullable().defaultTo('{}');
        t.text('status').notNullable().defaultTo('published');
        t.integer('version').notNullable().defaultTo(1);
        t.timestamp('created_at', { useTz: true }).notNullable();
        t.timestamp('updated_at', { useTz: true }).notNullable();
        t.unique(['tenant_id', 'environment_id', 'external_id'], { indexName: 'customers_external_id_unique' });
      });
      const indexes: Array<[string, string]> = [
        ['customers_created', '(tenant_id, environment_id, created_at, id)'],
        ['customers_updated', '(tenant_id, environment_id, updated_at, id)'],
        ['customers_name', '(tenant_id, environment_id, name, id)'],
        ['customers_email', '(tenant_id, environment_id, email, id)'],
        ['customers_email_lower', '(tenant_id, environment_id, lower(email))'],
        ['customers_status', '(tenant_id, environment_id, status, created_at, id)'],
        ['customers_parent', '(parent_customer_id, created_at, id)'],
      ];
      for (const [name, columns] of indexes) {
        await db.raw(`CREATE INDEX ${name} ON ??.customers ${columns}`, [schema]);
      }
      await db.raw(
        `ALTER TABLE ??.customers ADD CONSTRAINT customers_status_check CHECK (status IN ('published', 'draft', 'archived'))`,
        [schema],
      );
      await db.raw('ALTER TABLE ??.customers ADD CONSTRAINT customers_not_own_parent CHECK (parent_customer_id <> id)', [schema]);
      await countTriggers(db, schema);
    },
    async down(db) {
      await db.schema.withSchema(schema).dropTable('customers');
      for (const { name } of COUNT_EVENTS) await db.raw(`DROP FUNCTION ??.customer_counts_${name}()`, [schema]);
      await db.schema.withSchema(schema).dropTable('customer_counts');
    },
  };
}

const ADDED = 'SELECT tenant_id, environment_id, status, 1 AS d FROM new_rows';
const REMOVED = 'SELECT tenant_id, environment_id, status, -1 AS d FROM old_rows';
const COUNT_EVENTS = [
  { name: 'insert', event: 'INSERT', referencing: 'NEW TABLE AS new_rows', rows: [ADDED] },
  { name: 'delete', event: 'DELETE', referencing: 'OLD TABLE AS old_rows', rows: [REMOVED] },
  { name: 'update', event: 'UPDATE', referencing: 'OLD TABLE AS old_rows NEW TABLE AS new_rows', rows: [ADDED, REMOVED] },
];

/**
 * Per-statement deltas of (tenant, environment, status), applied in key order (no deadlock
 * between two transactions); an update that keeps the status adds nothing and locks nothing.
 */
async function countTriggers(db: Knex, schema: string): Promise<void> {
  await db.schema.withSchema(schema).createTable('customer_counts', (t) => {
    t.text('tenant_id').notNullable();
    t.text('environment_id').notNullable();
    t.text('status').notNullable();
    t.bigInteger('n').notNullable();
    t.primary(['tenant_id', 'environment_id', 'status']);
  });
  for (const { name, event, referencing, rows } of COUNT_EVENTS) {
    await db.raw(
      `CREATE FUNCTION ??.customer_counts_${name}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         INSERT INTO ??.customer_counts AS c (tenant_id, environment_id, status, n)
         SELECT tenant_id, environment_id, status, sum(d) FROM (${rows.join(' UNION ALL ')}) delta
         GROUP BY tenant_id, environment_id, status
         HAVING sum(d) <> 0
         ORDER BY tenant_id, environment_id, status
         ON CONFLICT (tenant_id, environment_id, status) DO UPDATE SET n = c.n + excluded.n;
         RETURN NULL;
       END $$`,
      [schema, schema],
    );
    await db.raw(
      `CREATE TRIGGER customer_counts_${name} AFTER ${event} ON ??.customers REFERENCING ${referencing}
       FOR EACH STATEMENT EXECUTE FUNCTION ??.customer_counts_${name}()`,
      [schema, schema],
    );
  }
}
