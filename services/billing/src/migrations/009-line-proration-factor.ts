import type { Migration } from '@billstream/db';

/**
 * A prorated FIXED line keeps its `proration_factor` (docs/api/billing.md#lines-and-amounts: a decimal string with
 * 12 decimals, kept as written, like the line's quantity and unit amount); null on every other
 * line, those written before included. Expand-only.
 */
export function lineProrationFactorMigration(schema: string): Migration {
  return {
    name: '009_line_proration_factor',
    async up(db) {
      await db.raw('ALTER TABLE ??.invoice_line_items ADD COLUMN proration_factor text', [schema]);
    },
    async down(db) {
      await db.raw('ALTER TABLE ??.invoice_line_items DROP COLUMN proration_factor', [schema]);
    },
  };
}
