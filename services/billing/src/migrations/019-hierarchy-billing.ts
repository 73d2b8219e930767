import type { Migration } from '@billstream/db';

/**
 * Customer hierarchy billing (docs/api/hierarchy-billing.md, ADR 0047):
 * - `customers.parent_customer_id`: the projection keeps each customer's parent as customer-events
 *   and lookups tell it (the descendants of `include_children`); indexed for the walk down;
 * - `subscriptions.invoicing_customer_id`: the ancestor that pays the subscription (null: its own
 *   customer); indexed for the payer's look-ups (real-time balance, the deletion rule).
 * Expand-only: both null on existing rows (a customer's parent is learned at its next event).
 */
export function hierarchyBillingMigration(schema: string): Migration {
  return {
    name: '019_hierarchy_billing',
    async up(db) {
      await db.raw('ALTER TABLE ??.customers ADD COLUMN parent_customer_id text', [schema]);
      await db.raw('CREATE INDEX customers_parent ON ??.customers (tenant_id, environment_id, parent_customer_id) WHERE parent_customer_id IS NOT NULL', [schema]);
      await db.raw('ALTER TABLE ??.subscriptions ADD COLUMN invoicing_customer_id text', [schema]);
      await db.raw('CREATE INDEX subscriptions_invoicing_customer ON ??.subscriptions (tenant_id, environment_id, invoicing_customer_id) WHERE invoicing_customer_id IS NOT NULL', [schema]);
    },
    async down(db) {
      await db.raw('DROP INDEX ??.subscriptions_invoicing_customer', [schema]);
      await db.raw('ALTER TABLE ??.subscriptions DROP COLUMN invoicing_customer_id', [schema]);
      await db.raw('DROP INDEX ??.customers_parent', [schema]);
      await db.raw('ALTER TABLE ??.customers DROP COLUMN parent_customer_id', [schema]);
    },
  };
}
