import type { Migration } from '@billstream/db';

/**
 * The unbilled usage charges of a customer in a currency (docs/adr/0024-real-time-unbilled-usage.md),
 * as the billing service last computed them: `amount` = the current periods' usage lines plus the
 * usage lines of draft invoices not yet allocated (`invoices`: invoice id -> minor units), in
 * minor units. `as_of` only moves forward. Expand-only: a new table, read beside the wallet rows.
 */
export function unbilledUsageMigration(schema: string): Migration {
  return {
    name: '004_unbilled_usage',
    async up(db) {
      await db.raw(
        `CREATE TABLE ??.unbilled_usage (
          tenant_id text NOT NULL,
          environment_id text NOT NULL,
          customer_id text NOT NULL,
          currency text NOT NULL,
          amount bigint NOT NULL,
          invoices jsonb NOT NULL DEFAULT '{}',
          as_of timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          PRIMARY KEY (tenant_id, environment_id, customer_id, currency),
          CONSTRAINT unbilled_usage_amount CHECK (amount >= 0)
        )`,
        [schema],
      );
    },
    async down(db) {
      await db.raw('DROP TABLE ??.unbilled_usage', [schema]);
    },
  };
}
