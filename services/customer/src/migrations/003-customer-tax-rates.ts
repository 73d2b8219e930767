import type { Migration } from '@billstream/db';

/** The tax rates a customer's lines bear when their price and plan name none (docs/api/taxes.md#which-rates-a-line-bears). */
export function customerTaxRatesMigration(schema: string): Migration {
  return {
    name: '003_customer_tax_rates',
    async up(db) {
      await db.raw(`ALTER TABLE ??.customers ADD COLUMN tax_rate_ids jsonb NOT NULL DEFAULT '[]'`, [schema]);
    },
    async down(db) {
      await db.raw('ALTER TABLE ??.customers DROP COLUMN tax_rate_ids', [schema]);
    },
  };
}
