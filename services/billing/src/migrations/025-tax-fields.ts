import type { Migration } from '@billstream/db';

/**
 * Which rates a line bears and how (docs/api/taxes.md#which-rates-a-line-bears): the rates a plan
 * or price names (empty: none named) and a price's `tax_behavior` (null: the settings' default).
 */
export function taxFieldsMigration(schema: string): Migration {
  return {
    name: '025_tax_fields',
    async up(db) {
      await db.raw(`ALTER TABLE ??.plans ADD COLUMN tax_rate_ids jsonb NOT NULL DEFAULT '[]'`, [schema]);
      await db.raw(
        `ALTER TABLE ??.prices ADD COLUMN tax_rate_ids jsonb NOT NULL DEFAULT '[]',
           ADD COLUMN tax_behavior text CHECK (tax_behavior IN ('exclusive', 'inclusive'))`,
        [schema],
      );
    },
    async down(db) {
      await db.raw('ALTER TABLE ??.prices DROP COLUMN tax_rate_ids, DROP COLUMN tax_behavior', [schema]);
      await db.raw('ALTER TABLE ??.plans DROP COLUMN tax_rate_ids', [schema]);
    },
  };
}
