import type { Migration } from '@billstream/db';

/**
 * What threshold invoices billed beyond the usage a closing invoice found (a SUM that fell;
 * docs/api/thresholds.md, ADR 0046 amended): `invoices.threshold_returns` ([{period_start,
 * price_id, amount}], `[]` without), returned by credit notes on those threshold invoices once the
 * closing invoice is finalized, then `threshold_returned_at` (null while owed). A partial index
 * finds what is owed for the period job. Expand-only.
 */
export function thresholdReturnsMigration(schema: string): Migration {
  return {
    name: '020_threshold_returns',
    async up(db) {
      await db.raw(`ALTER TABLE ??.invoices ADD COLUMN threshold_returns jsonb NOT NULL DEFAULT '[]', ADD COLUMN threshold_returned_at timestamptz`, [schema]);
      await db.raw(
        `CREATE INDEX invoices_threshold_returns_owed ON ??.invoices (finalized_at) WHERE threshold_returns <> '[]'::jsonb AND threshold_returned_at IS NULL AND status IN ('finalized', 'paid')`,
        [schema],
      );
    },
    async down(db) {
      await db.raw('DROP INDEX ??.invoices_threshold_returns_owed', [schema]);
      await db.raw('ALTER TABLE ??.invoices DROP COLUMN threshold_returns, DROP COLUMN threshold_returned_at', [schema]);
    },
  };
}
