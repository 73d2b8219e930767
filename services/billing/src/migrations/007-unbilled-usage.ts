import type { Migration } from '@billstream/db';

/**
 * Real-time balance (docs/adr/0024-real-time-unbilled-usage.md): billing reads a customer's
 * running subscriptions and draft invoices for every usage notification, so both get an index
 * by customer. Expand-only.
 */
export function unbilledUsageMigration(schema: string): Migration {
  return {
    name: '007_unbilled_usage',
    async up(db) {
      await db.raw(
        `CREATE INDEX subscriptions_running_customer ON ??.subscriptions (tenant_id, environment_id, customer_id) WHERE status IN ('trialing', 'active')`,
        [schema],
      );
      await db.raw(`CREATE INDEX invoices_drafts_customer ON ??.invoices (tenant_id, environment_id, customer_id) WHERE status = 'draft'`, [schema]);
    },
    async down(db) {
      await db.raw('DROP INDEX ??.subscriptions_running_customer', [schema]);
      await db.raw('DROP INDEX ??.invoices_drafts_customer', [schema]);
    },
  };
}
