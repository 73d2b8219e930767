import type { Migration } from '@billstream/db';

/**
 * A FIXED_AMOUNT discount's amount per billed period (ADR 0040, amendment of 2026-12-02):
 * `invoice_discounts.period_amounts`, one amount per entry of `periods` (migration 012), what
 * each billed period took of amount_off on the invoice, so the allowance left of a period is
 * read exactly across all its invoices. Null on PERCENTAGE discounts and on rows written
 * before it (those are attributed to their periods first period first, as before).
 * Expand-only: a nullable column.
 */
export function discountPeriodAmountsMigration(schema: string): Migration {
  return {
    name: '021_discount_period_amounts',
    async up(db) {
      await db.raw('ALTER TABLE ??.invoice_discounts ADD COLUMN period_amounts bigint[]', [schema]);
    },
    async down(db) {
      await db.raw('ALTER TABLE ??.invoice_discounts DROP COLUMN period_amounts', [schema]);
    },
  };
}
